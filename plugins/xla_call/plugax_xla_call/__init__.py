"""The xla_call family: `jit`, the `pjit` primitive, and ahead-of-time lowering.

`pjit` is a higher-order primitive: its `jaxpr` param is the traced function.
Every transformation handles it by transforming that jaxpr as a whole (see
`primitive.py`), so jit composes with jvp, vmap, grad and itself.
"""
