"""The one thing pyproject.toml cannot say: plugax's optional C accelerator.

`plugax.core._eager` (framework/plugax/core/_eager.c) is the eager fast path of
elementwise ops. It is optional: where it does not build (no C compiler, an
unusual Python), the install still succeeds and plugax runs the same fast path
in Python (core/eager_ops.py), only slower.
"""
from setuptools import Extension, setup

setup(ext_modules=[Extension("plugax.core._eager", ["framework/plugax/core/_eager.c"],
                             optional=True)])
