"""The xla_call family: `jit`, the `pjit` primitive, and ahead-of-time lowering.

`pjit` is a higher-order primitive: its `jaxpr` param is the traced function.
Every transformation handles it by transforming that jaxpr as a whole (see
`primitive.py`), so jit composes with jvp, vmap, grad and itself.
"""

# plugax first (cheap: importing it discovers the plugins and loads none; they load,
# this one included, on plugax's first use), so the check below can see what it found
import plugax  # noqa: F401,E402

if not hasattr(plugax, "registry"):  # a folder or file named plugax shadows the package
    raise ImportError(f"{__name__}: 'import plugax' found "
                      f"{getattr(plugax, '__file__', None) or list(getattr(plugax, '__path__', []))}"
                      f", which shadows the installed plugax package; rename or move it, or run "
                      f"from another directory (see plugax's docs/faq.md)")
