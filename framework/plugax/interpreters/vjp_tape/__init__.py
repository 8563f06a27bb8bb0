"""Top-level reverse mode on a tape: `vjp`, `grad` and `value_and_grad` outside any
transformation record one backward step per primitive instead of staging a
linear jaxpr.

- linearize.py: when the tape applies, and `tape_linearize_flat` (what autodiff calls)
- trace.py: the tape's trace, tracers and backward pass
- fallback.py: a primitive without a `vjp` rule, linearized one application at a time
- rules.py: builders of `vjp` rules (`linear_vjp`, `zero_vjp`) for plugins

Nothing is imported here: the structural primitives import rules.py, and trace.py
imports them.
"""
