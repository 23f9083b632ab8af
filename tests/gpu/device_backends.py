"""The "device backends" that tests/gpu/test_gpu.py runs its checks on: one array library on one non-default device.

A GPU is rare here, so the same checks run on the CPU in CI on `array_api_strict` arrays placed on its second device,
`Device("device1")`: that library refuses to combine arrays of two devices and to convert a device1 array to NumPy, as
CuPy arrays and torch's `cuda` tensors do, so a rule that makes a cotangent without `device=` or through NumPy fails
there as it would on a GPU. CuPy, torch on `cuda` and JAX on its GPU backend join where they can run. Each check is
written once against `backend.xp` (an array-API namespace) and `backend.kw` (the keywords that make an array on the
backend's device), so the CPU run exercises the code the GPU run does.

`ZYGOTEPY_DEVICE_STANDINS=1` adds torch and JAX on the CPU under the GPU backends' code, to try that code on a machine
with no GPU (they are not devices of their own: CI leaves them out, the torch and JAX CPU tables cover those libraries).
"""
import os
from dataclasses import dataclass, field
from typing import Any, Callable

import numpy as np

BACKENDS = ["strict-device1", "cupy", "torch-cuda", "jax-gpu"]
if os.environ.get("ZYGOTEPY_DEVICE_STANDINS") == "1":
    BACKENDS += ["torch-cpu", "jax-cpu"]


class Unavailable(Exception):
    """The backend's library or device is missing here: the tests on it are skipped with this reason."""


@dataclass
class Backend:
    """One library on one device, as the checks see it."""
    name: str
    xp: Any                          # the array-API namespace the checked functions are written against
    kw: dict                         # creation keywords placing a new array on the device ({"device": ...})
    array_type: type                 # what every gradient must be an instance of
    device: Any                      # the device every gradient must be on (as `device_of` reports it)
    place: Callable                  # a NumPy array -> the same values in this library, on the device
    to_numpy: Callable               # an array of this library (on the device) -> a NumPy array
    device_of: Callable              # an array of this library -> its device, comparable with `device`
    mutable: bool = True             # `x[i] = v` works (JAX's arrays are immutable)
    restore: Callable = field(default=lambda: None)  # undo global settings the backend made (JAX's x64)

    def put(self, a, dtype=None):
        """A NumPy array (or a number) on the device, in `dtype` where given (its own dtype otherwise)."""
        a = np.asarray(a)
        return self.place(a.astype(dtype) if dtype is not None else a)

    def put_tree(self, tree, dtype=None):
        """`put` on every array of a dict, list or tuple; other values stay as they are."""
        if isinstance(tree, dict):
            return {k: self.put_tree(v, dtype) for k, v in tree.items()}
        if isinstance(tree, (list, tuple)):
            return type(tree)(self.put_tree(v, dtype) for v in tree)
        return self.put(tree, dtype) if isinstance(tree, np.ndarray) else tree

    def assert_native(self, g, like, where):
        """`g` (a gradient, or a dict/list/tuple of them) is of this library, on this device, of `like`'s dtype and
        shape: a gradient must not change library or device (docs/api.md)."""
        if isinstance(like, dict):
            assert isinstance(g, dict) and set(g) == set(like), f"{where}: {type(g).__name__} for a dict"
            for k in like:
                self.assert_native(g[k], like[k], f"{where}[{k!r}]")
            return
        if isinstance(like, (list, tuple)):
            assert isinstance(g, (list, tuple)) and len(g) == len(like), f"{where}: {type(g).__name__}"
            for k, (gi, li) in enumerate(zip(g, like, strict=True)):
                self.assert_native(gi, li, f"{where}[{k}]")
            return
        assert isinstance(g, self.array_type), \
            f"{where}: a {type(g).__module__}.{type(g).__name__}, not a {self.array_type.__name__} of {self.name}"
        assert self.device_of(g) == self.device, f"{where}: on {self.device_of(g)}, its input on {self.device}"
        assert g.dtype == like.dtype, f"{where}: dtype {g.dtype}, its input {like.dtype}"
        assert tuple(g.shape) == tuple(like.shape), f"{where}: shape {tuple(g.shape)}, its input {tuple(like.shape)}"


def _strict():
    try:
        import array_api_strict as xp
    except ImportError as e:
        raise Unavailable(f"array_api_strict is not installed ({e})") from None
    dev, cpu = xp.Device("device1"), xp.asarray(0.0).device
    return Backend("strict-device1", xp, {"device": dev}, type(xp.asarray(0.0)), dev,
                   place=lambda a: xp.asarray(a, device=dev), to_numpy=lambda a: np.asarray(a.to_device(cpu)),
                   device_of=lambda a: a.device)


def _compat(name):
    """array_api_compat's namespace for torch or CuPy (the GPU machine gets it as a carried wheel)."""
    try:
        import importlib
        return importlib.import_module(f"array_api_compat.{name}")
    except ImportError as e:
        raise Unavailable(f"array_api_compat is not installed ({e})") from None


def _cupy():
    try:
        import cupy
        if cupy.cuda.runtime.getDeviceCount() < 1:
            raise Unavailable("CuPy sees no CUDA device")
    except ImportError as e:
        raise Unavailable(f"CuPy is not installed ({e})") from None
    except Exception as e:  # noqa: BLE001 (CUDARuntimeError: no driver, no device)
        if isinstance(e, Unavailable):
            raise
        raise Unavailable(f"CuPy has no CUDA device ({type(e).__name__}: {e})") from None
    dev = cupy.cuda.Device()
    return Backend("cupy", _compat("cupy"), {"device": dev}, cupy.ndarray, dev.id, place=cupy.asarray,
                   to_numpy=cupy.asnumpy, device_of=lambda a: a.device.id)


def _torch(cuda):
    try:
        import torch
    except ImportError as e:
        raise Unavailable(f"torch is not installed ({e})") from None
    if cuda and not torch.cuda.is_available():
        raise Unavailable(f"torch {torch.__version__} sees no CUDA device")
    dev = torch.device("cuda", torch.cuda.current_device()) if cuda else torch.device("cpu")
    return Backend("torch-cuda" if cuda else "torch-cpu", _compat("torch"), {"device": dev}, torch.Tensor, dev,
                   place=lambda a: torch.as_tensor(a, device=dev), to_numpy=lambda a: a.detach().cpu().numpy(),
                   device_of=lambda a: a.device)


def _jax(gpu):
    try:
        import jax
    except ImportError as e:
        raise Unavailable(f"JAX is not installed ({e})") from None
    try:
        devices = jax.devices("gpu" if gpu else "cpu")
    except RuntimeError as e:
        raise Unavailable(f"JAX has no GPU backend ({e})".splitlines()[0]) from None
    dev = devices[0]
    before = jax.config.jax_enable_x64, jax.config.jax_default_matmul_precision
    jax.config.update("jax_enable_x64", True)  # float64 checks; restored after the backend's tests
    # float32 products in full float32 (JAX's default on a GPU may round them to TF32's 10 bits; torch and CuPy's
    # defaults do not)
    jax.config.update("jax_default_matmul_precision", "highest")

    def restore():
        jax.config.update("jax_enable_x64", before[0])
        jax.config.update("jax_default_matmul_precision", before[1])
    return Backend("jax-gpu" if gpu else "jax-cpu", jax.numpy, {"device": dev}, jax.Array, frozenset([dev]),
                   place=lambda a: jax.device_put(a, dev), to_numpy=np.asarray,
                   device_of=lambda a: frozenset(a.devices()), mutable=False, restore=restore)


_FACTORIES = {"strict-device1": _strict, "cupy": _cupy, "torch-cuda": lambda: _torch(True),
              "torch-cpu": lambda: _torch(False), "jax-gpu": lambda: _jax(True), "jax-cpu": lambda: _jax(False)}


def make_backend(name):
    """The backend called `name`, or `Unavailable` saying why it cannot run here."""
    return _FACTORIES[name]()


def sync(backend):
    """Wait for the device's queued work (a failure inside a kernel surfaces here, at the test that caused it)."""
    if backend.name == "cupy":
        import cupy
        cupy.cuda.Device().synchronize()
    elif backend.name == "torch-cuda":
        import torch
        torch.cuda.synchronize()
