"""plugax-jet: Taylor-mode differentiation for plugax, loaded as plugin `jet`.

A worked example of a transformation plugin: a rule kind (`jet`), a trace
(trace.py), rules for other families' primitives (rules_*.py), rules derived
from decompositions and a conformance check (derive.py), all contributed
through hooks (plugin.py); the user-facing function is
`plugax.experimental.jet.jet` (frontend.py).
"""
__version__ = "0.1.0"   # the plugin's PluginInfo reads it

# plugax first (cheap: importing it discovers the plugins and loads none; they load,
# this one included, on plugax's first use)
import plugax  # noqa: F401,E402
