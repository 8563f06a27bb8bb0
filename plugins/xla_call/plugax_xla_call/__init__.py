"""The xla_call family: `jit`, the `pjit` primitive, and ahead-of-time lowering.

`pjit` is a higher-order primitive: its `jaxpr` param is the traced function.
Every transformation handles it by transforming that jaxpr as a whole (see
`primitive.py`), so jit composes with jvp, vmap, grad and itself.
"""

# plugax first: importing it loads every plugin, this one included, so that a first
# `import <this package>.<module>` does not re-enter itself half-imported
import plugax  # noqa: F401,E402
