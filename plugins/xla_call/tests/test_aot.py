"""Ahead-of-time lowering and compilation (aot-lowering.txt)."""
import os
import subprocess
import sys

import numpy as np
import pytest

import plugax as px
import plugax.numpy as pnp


def f(x, y):
    return 2 * x + y


def test_lower_prints_stablehlo():
    text = px.jit(f).lower(3, 4).as_text()
    assert text.startswith("module @jit_f")
    assert "func.func public @main(%arg0: tensor<i32>, %arg1: tensor<i32>) -> tensor<i32>" in text
    assert "stablehlo.multiply" in text and "stablehlo.add" in text


def test_lowering_for_another_platform_needs_no_device_of_it():
    """lower(..., lowering_platforms=("cuda",)) on a CPU-only machine: the module of
    the rules registered for "cuda" (a scoped one here, replacing the add), not
    compiled here; the keyword is lower's own, the other keywords reach the function."""
    from plugax.extend import RuleSet, override
    add = next(e.primitive for e in px.jit(f).trace(3, 4).jaxpr.eqns if e.primitive.name == "add")

    def sub_on_cuda(ctx, x, y):
        return [ctx.hlo.subtract(x, y)]
    with override(RuleSet(add, lowering={"cuda": sub_on_cuda})):
        cuda = px.jit(f).lower(3, y=4, lowering_platforms=("cuda",))
        here = px.jit(f).lower(3, y=4)
        gpu = px.jit(f).lower(3, 4, lowering_platforms="gpu")
    assert cuda.platform == gpu.platform == "cuda" and here.platform == "cpu"
    assert "stablehlo.subtract" in cuda.as_text() and "stablehlo.add" not in cuda.as_text()
    assert "stablehlo.add" in here.as_text() and int(here.compile()(3, 4)) == 10
    with pytest.raises(ValueError, match="lowered for 'cuda'"):
        cuda.compile()
    with pytest.raises(NotImplementedError, match="one platform at a time"):
        px.jit(f).lower(3, 4, lowering_platforms=("cpu", "cuda"))


def test_compile_and_call():
    compiled = px.jit(f).lower(3, 4).compile()
    out = compiled(3, 4)
    assert int(out) == 10 and out.dtype == np.int32
    assert compiled.cost_analysis()["flops"] >= 1
    assert compiled.memory_analysis() is not None
    assert "HloModule" in compiled.as_text()


def test_shape_dtype_structs_stand_in_for_arguments():
    i32_scalar = px.ShapeDtypeStruct((), np.dtype("int32"))
    assert int(px.jit(f).lower(i32_scalar, i32_scalar).compile()(3, 4)) == 10


def test_calling_with_other_types_is_a_type_error():
    i32_scalar = px.ShapeDtypeStruct((), np.dtype("int32"))
    compiled = px.jit(f).lower(i32_scalar, i32_scalar).compile()
    x_1d = y_1d = pnp.arange(3)
    with pytest.raises(TypeError) as info:
        compiled(x_1d, y_1d)
    assert str(info.value) == ("Computation compiled for input types:\n"
                               "  ShapedArray(int32[]), ShapedArray(int32[])\n"
                               "called with:\n"
                               "  ShapedArray(int32[3]), ShapedArray(int32[3])")
    with pytest.raises(TypeError) as info:
        compiled(72.0, 72.0)
    assert str(info.value).endswith("called with:\n  ShapedArray(float32[]), "
                                    "ShapedArray(float32[])")
    assert int(compiled(1, 2)) == 4  # still usable


def test_static_arguments_are_folded_into_the_lowering():
    lowered = px.jit(f, static_argnums=0).lower(7, 8)
    text = lowered.as_text()
    assert "dense<14>" in text  # 2 * 7, computed while tracing
    assert "func.func public @main(%arg0: tensor<i32>) -> tensor<i32>" in text
    assert int(lowered.compile()(5)) == 19
    i32_scalar = px.ShapeDtypeStruct((), np.dtype("int32"))
    with pytest.raises(TypeError, match=r"unsupported operand type\(s\) for \*: 'int' and "
                                        r"'ShapeDtypeStruct'"):
        px.jit(f, static_argnums=0).lower(i32_scalar, i32_scalar)
    assert int(px.jit(f, static_argnums=0).lower(10, i32_scalar).compile()(5)) == 25


def test_compiled_functions_cannot_be_transformed():
    def g(x):
        assert x.shape == (3, 2)
        return x @ pnp.ones(2)

    make_z = lambda *shape: pnp.arange(np.prod(shape)).reshape(shape)
    z, zs = make_z(3, 2), make_z(4, 3, 2)
    np.testing.assert_allclose(px.vmap(px.jit(g))(zs),
                               [[1., 5., 9.], [13., 17., 21.], [25., 29., 33.], [37., 41., 45.]])
    g_aot = px.jit(g).lower(z).compile()
    for transform in (px.vmap, px.jit, lambda h: px.grad(lambda x: h(x).sum())):
        with pytest.raises(TypeError, match="Cannot apply plugax transformations to a function "
                                            "lowered and compiled for a particular signature. "
                                            "Detected argument of Tracer type"):
            transform(g_aot)(zs if transform is px.vmap else z.astype(np.float32))
    np.testing.assert_allclose(g_aot(z), [1., 5., 9.])


def test_serialize_round_trip():
    compiled = px.jit(lambda x: pnp.sin(x) * 2).lower(np.ones(3, np.float32)).compile()
    data = compiled.serialize()
    restored = px.deserialize_compiled(data)
    x = np.arange(3, dtype=np.float32)
    np.testing.assert_allclose(restored(x), np.sin(x) * 2, rtol=1e-6)


def test_on_disk_compilation_cache(tmp_path):
    script = ("import numpy as np, plugax as px, plugax.numpy as pnp\n"
              "from jaxlib import xla_client\n"
              "print(float(px.jit(lambda x: pnp.cos(x) * 3.)(np.float32(0.))))\n")
    env = {**os.environ, "PLUGAX_COMPILATION_CACHE_DIR": str(tmp_path)}
    first = subprocess.run([sys.executable, "-c", script], env=env, capture_output=True,
                           text=True, check=True)
    assert first.stdout.strip() == "3.0"
    files = list(tmp_path.iterdir())
    assert len(files) == 1 and files[0].stat().st_size > 0
    # The second process must not compile: make compiling fail and check it still runs.
    script2 = ("import plugax.runtime.client as c\n"
               "b = c.backend(); real = b.client\n"
               "class NoCompile:\n"
               "    def __getattr__(self, name): return getattr(real, name)\n"
               "    def compile_and_load(self, *a, **k): raise RuntimeError('compiled')\n"
               "b.client = NoCompile()\n") + script
    second = subprocess.run([sys.executable, "-c", script2], env=env, capture_output=True,
                            text=True)
    assert second.returncode == 0, second.stderr
    assert second.stdout.strip() == "3.0"
