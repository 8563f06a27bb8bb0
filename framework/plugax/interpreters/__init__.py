"""Interpreters: one module per way of running a program (eval lives in core.trace)."""
