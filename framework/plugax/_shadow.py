"""Is the `plugax` that `import plugax` found this package, or something shadowing it?

A folder or file named ``plugax`` in the current directory (or anywhere on
sys.path before the installed package) is found first: a folder with an
``__init__.py`` or a ``plugax.py`` shadows any install, and with the editable
install of `make` (setuptools' default "lenient" mode, whose finder runs after
the path finder) even an *empty* folder ``plugax/`` shadows it, as a namespace
package. Python then hands out a module that has none of plugax's names, and
the user sees ``module 'plugax' has no attribute 'jit'`` with no hint why.

The editable finder still resolves ``plugax.<submodule>`` to the real files, so
the kernel's own entry points (``python -m plugax``, the ``plugax`` command) get
control and can say what happened; the families check the same thing when they
import plugax. See docs/faq.md, "module 'plugax' has no attribute ...".

Only the standard library here: this must work while `plugax` is the impostor.
"""
from __future__ import annotations

import sys
from pathlib import Path

__all__ = ["shadowing_problem"]

_REAL_INIT = Path(__file__).resolve().with_name("__init__.py")


def _where(module: object) -> str:
    file = getattr(module, "__file__", None)
    if file:
        return str(file)
    path = list(getattr(module, "__path__", None) or ())
    if path:
        return f"{', '.join(path)} (a folder without __init__.py: a namespace package)"
    return repr(module)


def shadowing_problem() -> str | None:
    """A message naming what shadows plugax, or None when `plugax` is this package."""
    module = sys.modules.get("plugax")
    if module is None:
        return None     # not imported yet: nothing to judge
    file = getattr(module, "__file__", None)
    if file and Path(file).resolve() == _REAL_INIT:
        return None
    return (f"'import plugax' found {_where(module)}, not the plugax package installed at "
            f"{_REAL_INIT.parent}: a folder or file named 'plugax' in the current directory "
            f"(or earlier on sys.path) shadows it. Rename or move it, or run from another "
            f"directory (see docs/faq.md, 'a folder named plugax shadows the package')")
