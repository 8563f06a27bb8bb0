"""plugax.testing: the conformance kit for primitive families.

Each check runs a primitive's rule through the kernel, the way
transformations use it, and compares it with something independent of that
rule: abstract_eval with evaluation, jvp with finite differences, vmap with a
Python loop, transpose with the dot-product identity. A failure raises a
`RuleCheckError` (an AssertionError) naming the rule, the primitive, the
inputs and the size of the error.

Typical use in a family's tests::

    from plugax.testing import check_primitive, check_transpose
    check_primitive(sin_p, np.linspace(-2, 2, 6, dtype=np.float32))
    check_transpose(reduce_sum_p, x, linear_argnums=0, axes=(0,))

`check_primitive` also checks traced use (traced.py): grad against the jvp,
vmap of jvp and of grad against loops, and jit, jit(grad) and a jitted
second derivative against eager (skipped, with the reason in the result's
`.skipped`, where the xla_call plugin is not loaded). Every batching rule's
result is checked against abstract_eval, and the checks of third-party
transformations (`Transformation.check`) run for the primitives they cover.

Beyond those: `check_second_order` (the jvp rule is itself differentiable),
`check_dtype_matrix` (every dtype is accepted correctly or rejected clearly),
`Case` / `plugin_cases` (examples a plugin declares through its
`plugax_test_cases` hook, run by any suite), and `register_check` (how a new
transformation adds its own agreement check to every family's tests).

Shared test helpers live here once, not copied per family: `rand`,
`exact_values`, `numeric_grad` / `numeric_jacobian` (central differences),
`x64`, and the dtype lists `FLOATS`, `SIGNED`, `UNSIGNED`, `INTS`, `NUMERIC`,
`ALL_DTYPES`.
"""
from .abstract_eval import check_abstract_eval
from .cases import Case, check_case, check_primitive, declared_cases, plugin_cases
from .checks import CheckResult
from .dtype_matrix import (ALL_DTYPES, DTYPES, FLOATS, INTS, NUMERIC, SIGNED, UNSIGNED,
                           check_dtype_matrix)
from .failures import (RuleCheckError, AbstractEvalMismatch, JVPMismatch, VmapMismatch,
                       TransposeMismatch, VJPMismatch)
from .jvp import check_jvp
from .lowering import (LoweringMismatch, check_lowering, check_lowerings, has_lowering,
                       matmul_rtol)
from .plugins import scoped_plugin, registry_restored, skip_unless_loaded
from .second_order import check_second_order
from .suite import DEFAULT_RULES, register_check
from .traced import (TRACED_RULES, SkipCheck, TracedUseMismatch, check_grad, check_jit,
                     check_jit_grad, check_jit_second_order, check_vmap_grad, check_vmap_jvp,
                     jit_or_skip)
from .transpose import check_transpose
from .vjp import check_vjp
from .values import (exact_values, numeric_grad, numeric_jacobian, rand, random_args_like,
                     x64)
from .vmap import CheckedBatchTrace, check_vmap, batch_placements

__all__ = [
    "check_abstract_eval", "check_jvp", "check_vmap", "check_transpose", "check_vjp",
    "check_primitive",
    "x64", "random_args_like", "scoped_plugin", "registry_restored", "skip_unless_loaded",
    "batch_placements",
    "RuleCheckError", "AbstractEvalMismatch", "JVPMismatch", "VmapMismatch",
    "TransposeMismatch", "VJPMismatch", "check_second_order", "check_dtype_matrix", "DTYPES",
    "register_check", "DEFAULT_RULES", "Case", "check_case", "declared_cases", "plugin_cases",
]
__all__ += ["CheckResult", "TRACED_RULES", "SkipCheck", "TracedUseMismatch", "check_grad",
            "check_jit", "check_jit_grad", "check_jit_second_order", "check_vmap_grad",
            "check_vmap_jvp", "jit_or_skip", "CheckedBatchTrace"]
__all__ += ["rand", "numeric_grad", "numeric_jacobian", "ALL_DTYPES", "FLOATS", "SIGNED",
            "UNSIGNED", "INTS", "NUMERIC"]
__all__ += ["check_lowering", "check_lowerings", "LoweringMismatch", "has_lowering", "matmul_rtol",
            "exact_values"]
