"""JAX's "Autodiff Cookbook", ported to plugax by changing the imports.

The cookbook draws its data with `jax.random`, which plugax does not have yet;
those draws are the one other change (NumPy's generator, marked below). Every
check the cookbook makes (`allclose` of two ways to compute the same thing)
is kept as an assert. Run: `python examples/autodiff_cookbook.py`.
"""
import numpy as np

import plugax.numpy as jnp
from plugax import grad, jacfwd, jacrev, jit, jvp, value_and_grad, vjp, vmap

rng = np.random.default_rng(0)          # was: key = random.PRNGKey(0)


def normal(shape):                       # was: random.normal(subkey, shape)
    return jnp.array(rng.standard_normal(shape).astype(np.float32))


# --- Gradients --------------------------------------------------------------------
grad_tanh = grad(jnp.tanh)
print(grad_tanh(2.0))
print(grad(grad(jnp.tanh))(2.0))
print(grad(grad(grad(jnp.tanh)))(2.0))


def sigmoid(x):
    return 0.5 * (jnp.tanh(x / 2) + 1)


# Outputs probability of a label being true.
def predict(W, b, inputs):
    return sigmoid(jnp.dot(inputs, W) + b)


# Build a toy dataset.
inputs = jnp.array([[0.52, 1.12, 0.77],
                    [0.88, -1.08, 0.15],
                    [0.52, 0.06, -1.30],
                    [0.74, -2.49, 1.39]])
targets = jnp.array([True, True, False, True])


# Training loss is the negative log-likelihood of the training examples.
def loss(W, b):
    preds = predict(W, b, inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))


W = normal((3,))
b = normal(())

# Differentiate `loss` with respect to the first positional argument:
W_grad = grad(loss, argnums=0)(W, b)
print('W_grad', W_grad)
# Since argnums=0 is the default, this does the same thing:
W_grad = grad(loss)(W, b)
print('W_grad', W_grad)
# But we can choose different values too, and drop the keyword:
b_grad = grad(loss, 1)(W, b)
print('b_grad', b_grad)
# Including tuple values
W_grad, b_grad = grad(loss, (0, 1))(W, b)
print('W_grad', W_grad)
print('b_grad', b_grad)


# Differentiating with respect to nested lists, tuples, and dicts
def loss2(params_dict):
    preds = predict(params_dict['W'], params_dict['b'], inputs)
    label_probs = preds * targets + (1 - preds) * (1 - targets)
    return -jnp.sum(jnp.log(label_probs))


print(grad(loss2)({'W': W, 'b': b}))

# value_and_grad
loss_value, Wb_grad = value_and_grad(loss, (0, 1))(W, b)
print('loss value', loss_value)
print('loss value', loss(W, b))

# Checking against numerical differences
eps = 1e-4
b_grad_numerical = (loss(W, b + eps / 2.) - loss(W, b - eps / 2.)) / eps
print('b_grad_numerical', b_grad_numerical)
print('b_grad_autodiff', grad(loss, 1)(W, b))
assert abs(float(b_grad_numerical) - float(grad(loss, 1)(W, b))) < 1e-2
W_dirderiv = normal(W.shape)
W_dirderiv = W_dirderiv / jnp.sqrt(jnp.sum(W_dirderiv * W_dirderiv))
W_grad_numerical = (loss(W + eps / 2. * W_dirderiv, b) - loss(W - eps / 2. * W_dirderiv, b)) / eps
W_grad_autodiff = jnp.vdot(grad(loss)(W, b), W_dirderiv)
print('W_dirderiv_numerical', W_grad_numerical)
print('W_dirderiv_autodiff', W_grad_autodiff)
assert abs(float(W_grad_numerical) - float(W_grad_autodiff)) < 1e-2


# Hessian-vector products with grad-of-grad
def hvp(f, x, v):
    return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)


# Jacobians and Hessians using jacfwd and jacrev
f = lambda W: predict(W, b, inputs)
J = jacfwd(f)(W)
print("jacfwd result, with shape", J.shape)
print(J)
J = jacrev(f)(W)
print("jacrev result, with shape", J.shape)
print(J)


def predict_dict(params, inputs):
    return predict(params['W'], params['b'], inputs)


J_dict = jacrev(predict_dict)({'W': W, 'b': b}, inputs)
for k, v in J_dict.items():
    print("Jacobian from {} to logits is".format(k))
    print(v)
assert J_dict['W'].shape == (4, 3) and J_dict['b'].shape == (4,)


def hessian(f):
    return jacfwd(jacrev(f))


H = hessian(f)(W)
print("hessian, with shape", H.shape)
print(H)

# JVPs in JAX code
key_v = normal(W.shape)
y, u = jvp(f, (W,), (key_v,))

# VJPs in JAX code
y, vjp_fun = vjp(f, W)
key_u = normal(y.shape)
v = vjp_fun(key_u)


# Vector-valued gradients with VJPs
def vgrad(f, x):
    y, vjp_fn = vjp(f, x)
    return vjp_fn(jnp.ones(y.shape))[0]


print(vgrad(lambda X: X ** 2, jnp.ones((2, 2))))


# Hessian-vector products using both forward- and reverse-mode
def hvp(f, primals, tangents):   # noqa: F811 -- the cookbook redefines it
    return jvp(grad(f), primals, tangents)[1]


def f(X):   # noqa: F811
    return jnp.sum(jnp.tanh(X) ** 2)


X = normal((30, 40))
V = normal((30, 40))
ans1 = hvp(f, (X,), (V,))
ans2 = jnp.tensordot(hessian(f)(X), V, 2)
print(jnp.allclose(ans1, ans2, 1e-4, 1e-4))
assert jnp.allclose(ans1, ans2, 1e-4, 1e-4)


# forward-over-reverse, reverse-over-forward, reverse-over-reverse, all under jit
def hvp_revfwd(f, primals, tangents):
    g = lambda primals: jvp(f, primals, tangents)[1]
    return grad(g)(primals)


def hvp_revrev(f, primals, tangents):
    x, = primals
    v, = tangents
    return grad(lambda x: jnp.vdot(grad(f)(x), v))(x)


print("Forward over reverse")
fwd_rev = jit(lambda X, V: hvp(f, (X,), (V,)))(X, V)   # the cookbook times these; we also jit
assert jnp.allclose(fwd_rev, ans2, 1e-4, 1e-4)
print("Reverse over forward")
rev_fwd = jit(lambda X, V: hvp_revfwd(f, (X,), (V,)))(X, V)
assert jnp.allclose(rev_fwd[0], ans2, 1e-4, 1e-4)
print("Reverse over reverse")
rev_rev = jit(lambda X, V: hvp_revrev(f, (X,), (V,)))(X, V)
assert jnp.allclose(rev_rev, ans2, 1e-4, 1e-4)

# Jacobian-Matrix and Matrix-Jacobian products
f = lambda W: predict(W, b, inputs)   # noqa: E731
key_m = 5
# Pull back the covectors `m_i` along `f`, evaluated at `W`, for all `i`.
M = normal((key_m, 4))


def vmap_mjp(f, x, M):
    y, vjp_fun = vjp(f, x)
    outs, = vmap(vjp_fun)(M)
    return outs


loop_vs = jnp.stack([vjp(f, W)[1](M[i])[0] for i in range(key_m)])
vmap_vs = vmap_mjp(f, W, M=M)
assert jnp.allclose(loop_vs, vmap_vs), 'Vmap and non-vmapped Matrix-Jacobian Products should be identical'


def vmap_jmp(f, W, M):
    _jvp = lambda s: jvp(f, (W,), (s,))[1]
    return vmap(_jvp)(M)


num_vecs = 128
S = normal((num_vecs,) + W.shape)
loop_vs = jnp.stack([jvp(f, (W,), (S[i],))[1] for i in range(num_vecs)])
vmap_vs = vmap_jmp(f, W, M=S)
assert jnp.allclose(loop_vs, vmap_vs), 'Vmap and non-vmapped Jacobian-Matrix products should be identical'


# The implementation of jacfwd and jacrev
def our_jacrev(f):
    def jacfun(x):
        y, vjp_fun = vjp(f, x)
        # Use vmap to do a matrix-Jacobian product.
        # Here, the matrix is the Euclidean basis, so we get all
        # entries in the Jacobian at once.
        J, = vmap(vjp_fun, in_axes=0)(jnp.eye(len(y)))
        return J
    return jacfun


assert jnp.allclose(our_jacrev(f)(W), jacrev(f)(W)), 'Incorrect reverse-mode Jacobian results!'


def our_jacfwd(f):
    def jacfun(x):
        _jvp = lambda s: jvp(f, (x,), (s,))[1]
        Jt = vmap(_jvp, in_axes=1)(jnp.eye(len(x)))
        return jnp.transpose(Jt)
    return jacfun


assert jnp.allclose(our_jacfwd(f)(W), jacfwd(f)(W)), 'Incorrect forward-mode Jacobian results!'
print("autodiff cookbook: all checks passed")
