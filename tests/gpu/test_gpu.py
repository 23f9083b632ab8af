"""Gradients on a device: right values, and every gradient of the input's library and on the input's device.

Written once, parametrized by a device backend (device_backends.py): `array_api_strict` arrays on `Device("device1")`
always (CI runs these on the CPU: that device refuses what a GPU refuses), and CuPy, torch on `cuda` and JAX on its GPU
backend where they can run (elsewhere their tests are skipped with the reason). The rows (device_cases.py) stand for the
rule table's families and for in-place updates and loops; the examples' cores are the digits MLP's loss and the
Hessian-vector products. Values are checked in float64 against central differences computed on the host with NumPy
(and the examples against zygotepy's own gradient of the NumPy program), and some rows again in float32, the dtype
GPU code runs in. benchmarks/gpu_check.sh runs this module on the GPU machine.
"""
import os
import sys

import numpy as np
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from device_backends import BACKENDS, Unavailable, make_backend, sync
from device_cases import (
    HVP_FUNCTIONS,
    ROWS,
    digits_data,
    digits_loss,
    digits_loss_numpy,
    hvp_point,
)

from zygotepy import gradient, hessian, pullback


@pytest.fixture(scope="module", params=BACKENDS)
def backend(request):
    """One backend for all of this module's tests on it (pytest groups them), its global settings undone after."""
    try:
        be = make_backend(request.param)
    except Unavailable as e:
        pytest.skip(f"{request.param}: {e}")
    yield be
    be.restore()


def fd_gradient(f, args, k, h=1e-6):
    """Central differences, on the host in float64, of the NumPy function f in its k-th argument."""
    base = np.asarray(args[k], dtype=np.float64)
    g = np.zeros_like(base)
    for i in range(base.size):
        moved = [list(args), list(args)]
        for sign, m in zip((1.0, -1.0), moved, strict=True):
            e = base.copy()
            e.flat[i] += sign * h
            m[k] = e
        g.flat[i] = (float(f(*moved[0])) - float(f(*moved[1]))) / (2 * h)
    return g


def _row_params():
    out = []
    for r in ROWS:
        for name in BACKENDS:
            marks = [pytest.mark.xfail(strict=True, reason=r.known[name])] if name in r.known else []
            out.append(pytest.param(name, r, id=f"{name}-{r.name}", marks=marks))
    return out


@pytest.mark.parametrize("backend, row", _row_params(), indirect=["backend"])
def test_rule_family_float64(backend, row):
    """The row's gradient on the device equals NumPy's central differences, and is native to the device."""
    if row.mutates and not backend.mutable:
        pytest.skip(f"{backend.name}: its arrays are immutable (no x[i] = v)")
    f = row.build(backend.xp, backend.kw, backend.put)
    reference = row.build(np, {}, np.asarray)
    args = [backend.put(a) for a in row.args]
    grads = gradient(f, *args)
    sync(backend)
    assert len(grads) == len(args)
    for k, (g, a) in enumerate(zip(grads, args, strict=True)):
        backend.assert_native(g, a, f"{row.name}: gradient {k}")
        np.testing.assert_allclose(backend.to_numpy(g), fd_gradient(reference, row.args, k), rtol=1e-6, atol=1e-8,
                                   err_msg=f"{backend.name} {row.name}: gradient {k}")
    # zygotepy's forward pass on the device computes the function's value (what the finite differences move)
    value = pullback(f, *args)[0]
    assert float(backend.to_numpy(value) if not isinstance(value, float) else value) == pytest.approx(
        float(reference(*row.args)), rel=1e-12, abs=1e-12)


@pytest.mark.parametrize("row", [r for r in ROWS if r.float32], ids=lambda r: r.name)
def test_rule_family_float32(backend, row):
    """float32 stays float32 on the device (the benchmarks' dtype), and agrees with float64 to float32 rounding."""
    if row.mutates and not backend.mutable:
        pytest.skip(f"{backend.name}: its arrays are immutable (no x[i] = v)")
    if backend.name in row.known:
        pytest.skip(f"the float64 case is a known failure: {row.known[backend.name]}")
    f = row.build(backend.xp, backend.kw, backend.put)
    args = [backend.put(a, np.float32) for a in row.args]
    grads = gradient(f, *args)
    sync(backend)
    reference = row.build(np, {}, np.asarray)
    for k, (g, a) in enumerate(zip(grads, args, strict=True)):
        backend.assert_native(g, a, f"{row.name}: gradient {k}")
        expected = fd_gradient(reference, row.args, k)
        np.testing.assert_allclose(backend.to_numpy(g), expected, rtol=2e-3, atol=2e-3 * np.max(np.abs(expected)),
                                   err_msg=f"{backend.name} {row.name} float32: gradient {k}")


@pytest.mark.parametrize("dtype", [np.float64, np.float32], ids=["float64", "float32"])
def test_digits_mlp_loss_gradient(backend, dtype):
    """examples/digits_mlp.py's loss: a dict of gradients, each native to the device, equal to zygotepy's gradient of
    the example's NumPy loss and to central differences along a random direction."""
    params, X, y = digits_data()
    dev_params, dev_X, dev_y = backend.put_tree(params, dtype), backend.put(X, dtype), backend.put(y)
    grads, = gradient(digits_loss(backend.xp), dev_params, dev_X, dev_y)[:1]
    sync(backend)
    backend.assert_native(grads, dev_params, "digits MLP")
    expected, = gradient(digits_loss_numpy, params, X, y)[:1]
    tol = 1e-10 if dtype == np.float64 else 2e-4
    for k in params:
        scale = float(np.max(np.abs(expected[k])))
        np.testing.assert_allclose(backend.to_numpy(grads[k]), expected[k], rtol=tol, atol=tol * scale, err_msg=k)
    rng, h = np.random.default_rng(5), 1e-6
    direction = {k: rng.standard_normal(v.shape) for k, v in params.items()}
    moved = [{k: params[k] + s * h * direction[k] for k in params} for s in (1.0, -1.0)]
    slope = (digits_loss_numpy(moved[0], X, y) - digits_loss_numpy(moved[1], X, y)) / (2 * h)
    along = sum(float(np.sum(backend.to_numpy(grads[k]).astype(np.float64) * direction[k])) for k in params)
    assert along == pytest.approx(slope, rel=1e-6 if dtype == np.float64 else 1e-3)


def _hvp_params():
    """Each backend with each function: chain_energy's cosh is a second derivative of an elementwise function, which
    the twins (the transform route of nested gradients) take through the namespace-generic rule."""
    return [pytest.param(name, fn, id=f"{name}-{fn}") for name in BACKENDS for fn in sorted(HVP_FUNCTIONS)]


@pytest.mark.parametrize("backend, name", _hvp_params(), indirect=["backend"])
def test_hessian_vector_product_reverse_over_reverse(backend, name):
    """examples/hessian_vector_product.py's reverse-over-reverse product on the device: native, and equal to
    `hessian(f, x) @ v` computed on NumPy (forward mode takes NumPy arrays and numbers only)."""
    make = HVP_FUNCTIONS[name]
    f, xp = make(backend.xp), backend.xp
    x_np, v_np = hvp_point()
    x, v = backend.put(x_np), backend.put(v_np)
    hv, = gradient(lambda y: xp.vecdot(gradient(f, y)[0], v), x)
    sync(backend)
    backend.assert_native(hv, x, f"{name}: H v")
    expected = hessian(make(np), x_np) @ v_np
    np.testing.assert_allclose(backend.to_numpy(hv), expected, rtol=1e-10, atol=1e-10 * np.max(np.abs(expected)))
    g, = gradient(f, x)  # the first-order gradient stays native too
    backend.assert_native(g, x, f"{name}: gradient")
