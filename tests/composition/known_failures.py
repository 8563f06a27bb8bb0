"""Compositions of the matrix that fail today, each with its symptom.

This dict is the one place where the matrix is told about failures. Each id (a case of
test_matrix.py, test_matrix_float32.py, or a JAX-rejected pair of
test_rejected_path_raises_clearly_or_is_right) runs as a strict xfail: it must still
fail, and the suite FAILS when it starts passing, so delete ids here as fixes land.
test_known_failing_names_real_cases keeps it from naming cases that do not exist.
Empty since the last group (forward mode on a custom_vjp under jit raised "custom_lin has
no lowering rule" instead of the forward-mode error) was fixed: custom_lin now has a
lowering rule that raises that error.
"""

KNOWN_FAILING: dict[str, str] = {
}
