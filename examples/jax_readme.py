"""The code in JAX's README, ported to plugax by changing the imports.

The README's MLP has no data; we build small arrays with NumPy. Its printed values
(0.4199743, 0.62162673) are checked, and the per-example gradients are compared
with a Python loop over examples. Run: `python examples/jax_readme.py`.
"""
import numpy as np

import plugax.numpy as jnp
from plugax import grad, jacfwd, jacrev, jit, vmap


def tanh(x):  # Define a function
    y = jnp.exp(-2.0 * x)
    return (1.0 - y) / (1.0 + y)


grad_tanh = grad(tanh)  # Obtain its gradient function
print(grad_tanh(1.0))   # Evaluate it at x = 1.0
# prints 0.4199743
assert abs(float(grad_tanh(1.0)) - 0.4199743) < 1e-6
print(grad(grad(grad(tanh)))(1.0))
# prints 0.62162673
assert abs(float(grad(grad(grad(tanh)))(1.0)) - 0.62162673) < 1e-5


def predict(params, inputs):
    for W, b in params:
        outputs = jnp.dot(inputs, W) + b
        inputs = jnp.tanh(outputs)  # inputs to the next layer
    return outputs                  # no activation on last layer


def loss(params, inputs, targets):
    preds = predict(params, inputs)
    return jnp.sum((preds - targets)**2)


grad_loss = jit(grad(loss))  # compiled gradient evaluation function
perex_grads = jit(vmap(grad_loss, in_axes=(None, 0, 0)))  # fast per-example grads

rng = np.random.default_rng(0)   # the README leaves the data to the reader
sizes = [3, 5, 2]
params = [(rng.standard_normal((m, n)).astype(np.float32),
           rng.standard_normal(n).astype(np.float32)) for m, n in zip(sizes[:-1], sizes[1:])]
inputs = rng.standard_normal((4, 3)).astype(np.float32)
targets = rng.standard_normal((4, 2)).astype(np.float32)

batched = perex_grads(params, inputs, targets)
for i in range(len(inputs)):
    single = grad(loss)(params, inputs[i], targets[i])
    for (gW, gb), (sW, sb) in zip(batched, single):
        assert np.allclose(gW[i], sW, atol=1e-5) and np.allclose(gb[i], sb, atol=1e-5)
print("per-example gradients match a loop over examples")


def hessian(fun):
    return jit(jacfwd(jacrev(fun)))


H = hessian(lambda x: jnp.sum(tanh(x) ** 2))(np.array([0.1, 0.2, 0.3], np.float32))
d = np.array([0.1, 0.2, 0.3])
expected = np.diag(2 * (1 - np.tanh(d) ** 2) ** 2 - 4 * np.tanh(d) ** 2 * (1 - np.tanh(d) ** 2))
assert np.allclose(H, expected, atol=1e-5), (H, expected)
print("jacfwd(jacrev) under jit matches the closed form")
print("jax readme: all checks passed")
