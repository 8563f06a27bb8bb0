"""Hook implementations of the fft family.

`primitive` holds the one primitive (lax.fft's: FFT, IFFT, RFFT or IRFFT over the
trailing 1-3 axes, lowered to stablehlo.fft) and `plugax.lax.fft`; `numpy_fft`
builds plugax.numpy.fft on it (and on the shape family's moveaxis/pad/roll).
"""
from __future__ import annotations

from plugax.extend import PluginInfo, RuleSet, hookimpl

from . import primitive
from .numpy_fft import NUMPY_FFT


@hookimpl
def plugax_plugin_info() -> PluginInfo:
    return PluginInfo(name="fft", requires=("elementwise", "shape", "reductions"),
                      description="lax.fft (FFT, IFFT, RFFT, IRFFT) and plugax.numpy.fft")


@hookimpl
def plugax_primitive_rules() -> list[RuleSet]:
    return list(primitive.RULES)


@hookimpl
def plugax_frontend() -> dict:
    return {"lax": {"fft": primitive.fft, "FftType": primitive.FftType},
            "numpy.fft": NUMPY_FFT}


@hookimpl
def plugax_test_cases() -> list:
    from .cases import cases  # imports plugax.testing: only when a test suite asks
    return cases()
