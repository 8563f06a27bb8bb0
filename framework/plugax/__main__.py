"""`python -m plugax plugins|demo`: the same as the `plugax` console script."""
import sys

from .cli import main

sys.exit(main())
