"""vmap's negative out_axes and jacfwd's layout (jacfwd batches with out_axes=-1)."""
import numpy as np

import plugax as px
import plugax.numpy as pnp


def test_vmap_negative_out_axes_puts_the_batch_axis_last():
    x = np.arange(6.0, dtype=np.float32).reshape(2, 3)
    np.testing.assert_array_equal(np.asarray(px.vmap(lambda r: r * 2.0, out_axes=-1)(x)), (x * 2).T)
    np.testing.assert_array_equal(np.asarray(px.vmap(lambda r: pnp.ones(3), out_axes=-1)(x)),
                                  np.ones((3, 2)))


def test_jacfwd_rows_are_outputs_and_columns_are_inputs():
    jac = px.jacfwd(lambda x: x * x[0])(np.arange(1.0, 4.0, dtype=np.float32))
    np.testing.assert_array_equal(np.asarray(jac), [[2, 0, 0], [2, 1, 0], [3, 0, 1]])
