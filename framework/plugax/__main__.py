"""`python -m plugax plugins|demo|new-plugin`: the same as the `plugax` console script.

`python -m` puts the current directory first on sys.path, so this is where a
folder named `plugax` there most often shadows the package: say so instead of
failing later with "module 'plugax' has no attribute ...".
"""
import sys

from ._shadow import shadowing_problem

_problem = shadowing_problem()
if _problem:
    print(f"plugax: {_problem}", file=sys.stderr)
    sys.exit(1)

from .cli import main  # noqa: E402

sys.exit(main())
