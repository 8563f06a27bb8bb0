"""plugax.nn.initializers give JAX's weights for the same key.

The values below were recorded from jax 0.10.2 (jax.random.PRNGKey(42), float32,
the first six entries of each sample); plugax.random is bit-exact with JAX's
threefry, so the initializers must match exactly (orthogonal goes through a QR
factorisation, so it is compared to a few ulp).
"""
import numpy as np
import pytest

import plugax
import plugax.nn.initializers as I

INITS = {
    "zeros": (lambda: I.zeros, (2, 3)), "ones": (lambda: I.ones, (2, 3)),
    "constant": (lambda: I.constant(-1.5), (2, 3)), "uniform": (lambda: I.uniform(0.5), (2, 3)),
    "normal": (lambda: I.normal(0.3), (2, 3)),
    "truncated_normal": (lambda: I.truncated_normal(0.7), (2, 3)),
    "glorot_uniform": (I.glorot_uniform, (4, 3)), "glorot_normal": (I.glorot_normal, (4, 3)),
    "xavier_uniform": (I.xavier_uniform, (4, 3)), "xavier_normal": (I.xavier_normal, (4, 3)),
    "lecun_uniform": (I.lecun_uniform, (4, 3)), "lecun_normal": (I.lecun_normal, (4, 3)),
    "he_uniform": (I.he_uniform, (3, 3, 2, 4)), "he_normal": (I.he_normal, (3, 3, 2, 4)),
    "kaiming_uniform": (I.kaiming_uniform, (4, 3)), "kaiming_normal": (I.kaiming_normal, (4, 3)),
    "orthogonal": (I.orthogonal, (4, 3)),
    "orthogonal_axis0": (lambda: I.orthogonal(2.0, column_axis=0), (3, 4)),
    "variance_scaling_fan_out_normal": (lambda: I.variance_scaling(0.5, "fan_out", "normal"),
                                        (5, 2)),
    "variance_scaling_geo": (lambda: I.variance_scaling(1.0, "fan_geo_avg", "uniform",
                                                        in_axis=0, out_axis=1), (3, 6)),
}
JAX = {
    'zeros': [0.0, 0.0, 0.0, 0.0, 0.0, 0.0],
    'ones': [1.0, 1.0, 1.0, 1.0, 1.0, 1.0],
    'constant': [-1.5, -1.5, -1.5, -1.5, -1.5, -1.5],
    'uniform': [0.24435478448867798, 0.33989858627319336, 0.3081357479095459, 0.28050804138183594, 0.22532230615615845, 0.29293292760849],
    'normal': [-0.00849138479679823, 0.14013956487178802, 0.08871088922023773, 0.046063777059316635, -0.03720984607934952, 0.06507694721221924],
    'truncated_normal': [-0.01891154795885086, 0.31106656789779663, 0.19731394946575165, 0.10255563259124756, -0.08285360783338547, 0.1448352336883545],
    'glorot_uniform': [-0.020905816927552223, 0.3329196870326996, 0.21529297530651093, 0.11297983676195145, -0.09138841927051544, 0.1589926779270172],
    'glorot_normal': [-0.0164171252399683, 0.27003705501556396, 0.17128834128379822, 0.08902860432863235, -0.07192526012659073, 0.12573154270648956],
    'xavier_uniform': [-0.020905816927552223, 0.3329196870326996, 0.21529297530651093, 0.11297983676195145, -0.09138841927051544, 0.1589926779270172],
    'xavier_normal': [-0.0164171252399683, 0.27003705501556396, 0.17128834128379822, 0.08902860432863235, -0.07192526012659073, 0.12573154270648956],
    'lecun_uniform': [-0.019555600360035896, 0.311417818069458, 0.2013881355524063, 0.10568295419216156, -0.08548603951931, 0.1487240195274353],
    'lecun_normal': [-0.015356816351413727, 0.25259655714035034, 0.16022558510303497, 0.08327864110469818, -0.06727992743253708, 0.1176111027598381],
    'he_uniform': [-0.013037066906690598, 0.20761188864707947, 0.13425876200199127, 0.07045530527830124, -0.056990690529346466, 0.09914934635162354],
    'he_normal': [-0.010237877257168293, 0.1683976948261261, 0.10681705176830292, 0.055519092828035355, -0.04485328495502472, 0.0784073993563652],
    'kaiming_uniform': [-0.027655795216560364, 0.44041135907173157, 0.2848058342933655, 0.14945827424526215, -0.12089551985263824, 0.21032753586769104],
    'kaiming_normal': [-0.021717816591262817, 0.3572254478931427, 0.22659318149089813, 0.11777377128601074, -0.09514818340539932, 0.16632720828056335],
    'orthogonal': [-0.01653873920440674, 0.9798700213432312, -0.14570099115371704, 0.0897190272808075, -0.10146704316139221, 0.20810864865779877],
    'orthogonal_axis0': [-0.03307747840881348, 0.179438054561615, -1.6838515996932983, 1.0636506080627441, 1.9597400426864624, -0.20293408632278442],
    'variance_scaling_fan_out_normal': [-0.014152307994663715, 0.23356592655181885, 0.14785148203372955, 0.07677295804023743, -0.062016408890485764, 0.10846157371997833],
    'variance_scaling_geo': [-0.018988166004419327, 0.30238160490989685, 0.19554457068443298, 0.10261641442775726, -0.08300554007291794, 0.14440858364105225],
}
@pytest.mark.parametrize("name", sorted(INITS))
def test_initializer_matches_jax(name):
    make, shape = INITS[name]
    init = make()
    out = init(plugax.random.PRNGKey(42), shape, np.float32)
    assert out.shape == shape and out.dtype == np.float32
    got = np.asarray(out).ravel()[:6]
    if name.startswith("orthogonal"):
        np.testing.assert_allclose(got, JAX[name], rtol=2e-6, atol=2e-7)
    else:
        np.testing.assert_array_equal(got, np.float32(JAX[name]))
    jitted = plugax.jit(lambda k: init(k, shape, np.float32))(plugax.random.PRNGKey(42))
    np.testing.assert_allclose(np.asarray(jitted).ravel()[:6], got, rtol=2e-6, atol=2e-7)


def test_initializer_errors_name_the_mistake():
    with pytest.raises(ValueError, match="invalid mode for variance scaling initializer: fan"):
        I.variance_scaling(1.0, "fan", "normal")
    with pytest.raises(ValueError, match="invalid distribution .*: cauchy"):
        I.variance_scaling(1.0, "fan_in", "cauchy")
    with pytest.raises(ValueError, match="Must be at least 2D"):
        I.glorot_uniform()(plugax.random.PRNGKey(0), (3,))
    with pytest.raises(ValueError, match="at least a 2D shape"):
        I.orthogonal()(plugax.random.PRNGKey(0), (3,))


# delta_orthogonal(scale=1.5) at jax.random.key(42), float32, recorded from jax 0.10.2:
# the kernel is zero but at its spatial centre, which holds these matrices
DELTA_CENTRES = {
    (3, 3, 3): ((1,), [[-0.02929455041885376, 1.4929018020629883, 0.14278435707092285],
                       [0.15891584753990173, -0.13891729712486267, 1.4850749969482422],
                       [-1.491270661354065, -0.044129759073257446, 0.15545079112052917]]),
    (3, 2, 2, 4): ((1, 0), [[-0.028757039457559586, 0.30042970180511475, -0.12601545453071594,
                             -1.4639110565185547],
                            [1.1989850997924805, 0.7954527139663696, 0.4108605980873108,
                             0.10432594269514084]]),
    (2, 3, 2, 3, 3): ((0, 1, 0), [[-0.02929455041885376, 1.4929018020629883, 0.14278435707092285],
                                  [0.15891584753990173, -0.13891729712486267, 1.4850749969482422],
                                  [-1.491270661354065, -0.044129759073257446,
                                   0.15545079112052917]]),
}


@pytest.mark.parametrize("shape", sorted(DELTA_CENTRES))
def test_delta_orthogonal_matches_jax(shape):
    centre, matrix = DELTA_CENTRES[shape]
    init = I.delta_orthogonal(scale=1.5)
    for out in (init(plugax.random.PRNGKey(42), shape, np.float32),
                plugax.jit(lambda k: init(k, shape, np.float32))(plugax.random.PRNGKey(42))):
        out = np.asarray(out)
        assert out.shape == shape and out.dtype == np.float32
        np.testing.assert_allclose(out[centre], matrix, rtol=2e-6, atol=2e-7)
        assert np.count_nonzero(out) == np.count_nonzero(out[centre])   # zero elsewhere


def test_delta_orthogonal_errors_as_jax():
    with pytest.raises(ValueError, match="requires a 3D, 4D or 5D shape"):
        I.delta_orthogonal()(plugax.random.PRNGKey(0), (3, 3))
    with pytest.raises(ValueError, match="fan_in` must be less or equal than `fan_out"):
        I.delta_orthogonal()(plugax.random.PRNGKey(0), (3, 4, 2))
