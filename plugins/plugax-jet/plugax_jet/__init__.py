"""plugax-jet: Taylor-mode differentiation for plugax, loaded as plugin `jet`.

A worked example of a transformation plugin: a rule kind (`jet`), a trace
(trace.py), rules for other families' primitives (rules_*.py), rules derived
from decompositions and a conformance check (derive.py), all contributed
through hooks (plugin.py); the user-facing function is
`plugax.experimental.jet.jet` (frontend.py).
"""
__version__ = "0.1.0"   # before plugax: loading this plugin (below) reads it

# plugax first: importing it loads every plugin, this one included, so that a first
# `import plugax_jet.<module>` does not re-enter itself half-imported
import plugax  # noqa: F401,E402
