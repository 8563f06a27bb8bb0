"""plugax's control-flow family: the higher-order primitives cond, while and scan.

Their params hold sub-jaxprs, and their rules transform those jaxprs with the
kernel's whole-jaxpr transformations (`plugax.extend.jvp_jaxpr`,
`batch_jaxpr`, `partial_eval_jaxpr`, `transpose_jaxpr`). The front end
(`plugax.lax.cond`, `switch`, `while_loop`, `fori_loop`, `scan`, `map`) is in
`frontend.py`.
"""

# plugax first (cheap: importing it discovers the plugins and loads none; they load,
# this one included, on plugax's first use), so the check below can see what it found
import plugax  # noqa: F401,E402

if not hasattr(plugax, "registry"):  # a folder or file named plugax shadows the package
    raise ImportError(f"{__name__}: 'import plugax' found "
                      f"{getattr(plugax, '__file__', None) or list(getattr(plugax, '__path__', []))}"
                      f", which shadows the installed plugax package; rename or move it, or run "
                      f"from another directory (see plugax's docs/faq.md)")
