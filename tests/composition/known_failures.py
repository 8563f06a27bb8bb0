"""Compositions of the matrix that fail today, each with its symptom.

This dict is the one place where the matrix is told about failures. Each id (a case of
test_matrix.py, test_matrix_float32.py, or a JAX-rejected pair of
test_rejected_path_raises_clearly_or_is_right) runs as a strict xfail: it must still
fail, and the suite FAILS when it starts passing, so delete ids here as fixes land.
test_known_failing_names_real_cases keeps it from naming cases that do not exist.
Groups, root causes and minimal repros: /tmp/composition_failures.md (issue 12).
"""

# G1. Forward mode on a custom_vjp function under jit (jit(jvp), jit(linearize)):
# MissingRuleError "primitive 'custom_lin' has no lowering (platform 'cpu') rule ... Add a
# 'lowering' rule to its RuleSet" instead of the forward-mode error (JAX: TypeError
# "can't apply forward-mode autodiff (jvp) to a custom_vjp function"). The same under
# vmap (MissingRuleError: custom_lin has no vmap rule, 92 ids) was fixed by b19c243.
CUSTOM_LIN_NO_LOWERING = ("G1: forward mode on a custom_vjp under jit raises MissingRuleError "
                          "(custom_lin has no lowering rule), not the custom_vjp forward-mode "
                          "error")

KNOWN_FAILING: dict[str, str] = {
    "jit.jvp-cvjp_fwd_calls_self": CUSTOM_LIN_NO_LOWERING,
    "jit.jvp-cvjp_in_scan": CUSTOM_LIN_NO_LOWERING,
    "jit.jvp-cvjp_nested": CUSTOM_LIN_NO_LOWERING,
    "jit.jvp-cvjp_pytree": CUSTOM_LIN_NO_LOWERING,
    "jit.jvp-cvjp_simple": CUSTOM_LIN_NO_LOWERING,
    "jit.linearize-cvjp_fwd_calls_self": CUSTOM_LIN_NO_LOWERING,
    "jit.linearize-cvjp_in_scan": CUSTOM_LIN_NO_LOWERING,
    "jit.linearize-cvjp_nested": CUSTOM_LIN_NO_LOWERING,
    "jit.linearize-cvjp_pytree": CUSTOM_LIN_NO_LOWERING,
    "jit.linearize-cvjp_simple": CUSTOM_LIN_NO_LOWERING,
    "jvp.jit-cvjp_fwd_calls_self": CUSTOM_LIN_NO_LOWERING,
    "jvp.jit-cvjp_in_scan": CUSTOM_LIN_NO_LOWERING,
    "jvp.jit-cvjp_nested": CUSTOM_LIN_NO_LOWERING,
    "jvp.jit-cvjp_pytree": CUSTOM_LIN_NO_LOWERING,
    "jvp.jit-cvjp_simple": CUSTOM_LIN_NO_LOWERING,
    "linearize.jit-cvjp_fwd_calls_self": CUSTOM_LIN_NO_LOWERING,
    "linearize.jit-cvjp_in_scan": CUSTOM_LIN_NO_LOWERING,
    "linearize.jit-cvjp_nested": CUSTOM_LIN_NO_LOWERING,
    "linearize.jit-cvjp_pytree": CUSTOM_LIN_NO_LOWERING,
    "linearize.jit-cvjp_simple": CUSTOM_LIN_NO_LOWERING,
}
