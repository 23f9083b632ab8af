"""np.fft: the discrete Fourier transforms (fft, ifft, rfft, irfft, hfft, ihfft and their 2-d and n-d forms, with
`n`/`s`, `axis`/`axes` and every `norm`), the shifts fftshift / ifftshift, and fftfreq / rfftfreq (their spacing `d`).

Every transform is linear over the reals, so its back is its adjoint: with the conjugate-cotangent convention (the
gradient of L = Re<dy, y> is dL/dRe x + 1j dL/dIm x) the back of y = A x is A^H dy. NumPy computes an n-d transform
as 1-d transforms along its axes, one after another, each cropping or zero-padding its axis to its length first; the
back runs the adjoints of those steps in the reverse order (which also gets repeated axes and crops between steps
right). The adjoint of each step, F being the unnormalised DFT of length n (F^H = n ifft):

- fft: ifft, and ifft: fft, with the dual norm (backward <-> forward, ortho stays): the scale is the same real number.
- the crop or zero-pad to n before a transform: its adjoint zero-pads or crops back to the input's length.
- rfft = "fft, then keep bins 0..n/2": its adjoint is Re(F^H (dy zero-padded to n)), which is irfft of dy (dual norm)
  with bins 0 < k < n/2 halved: irfft counts each of them twice (bin k and its mirror n - k) and reads only the real
  part of bin 0 and of the Nyquist bin n/2 (n even), as Re(F^H ...) does.
- irfft (input cropped or zero-padded to n//2 + 1 bins) gives x_j = Re y_0 + the sum over 0 < k < n/2 of
  2 Re(y_k e^(2 pi i jk/n)) + Re y_(n/2) (-1)^j, scaled by the norm: its adjoint is rfft of dy (dual norm) with bins
  0 < k < n/2 doubled (an odd n has no Nyquist bin). Bins 0 and n/2 come out real: the imaginary parts irfft ignores
  get a zero cotangent.
- hfft(a) = irfft(conj(a)) with the norm swapped: conj of irfft's adjoint; ihfft(a) = conj(rfft(a)), norm swapped:
  rfft's adjoint of conj(dy).
- a real input gets the real part of the cotangent (it enters the transform as x + 0j): rfft and ihfft take real input
  only; the others give a real argument a real cotangent and a complex one a complex cotangent.
- fftshift and ifftshift are permutations: each one's back is the other, over the same axes.

The rules serve NumPy arrays (and lists); they are not namespace-generic. Generated code computes a call with `out=`
without it and writes the result afterwards (ast_adjoint/lower/calls.py); a rule handed `out=` raises.
"""
import numpy as np

from ...errors import ZygoteError
from ...forward.dual import has_dual, strip
from ..registry import adjoint, keyword_cotangents, keyword_rule, nondifferentiable
from .common import _nones, _restore

# the norm whose scale is the same as `norm`'s, on the inverse transform: fft(norm=m)^H = ifft(norm=_DUAL[m])
_DUAL = {None: "forward", "backward": "forward", "ortho": "ortho", "forward": "backward"}
_SWAPPED = _DUAL  # hfft / ihfft: the norm NumPy hands their irfft / rfft (np.fft's _swap_direction: the same map)
_ONE_AXIS = ("n", "axis", "norm", "out")
_AXES = ("s", "axes", "norm", "out")
_ONE_AXIS_DEFAULTS = {"n": None, "axis": -1, "norm": None}


# --- the parameters of a call, and the 1-d steps NumPy runs -----------------------------------------------------------
def _parameters(fn, names, defaults, args, kwargs):
    """The call's parameters after the array, by name (positional ones first), with NumPy's defaults."""
    given = {**defaults, **dict(zip(names, args)), **kwargs}
    if given.get("out") is not None:
        raise ZygoteError(f"np.fft.{fn.__name__}: out= is not differentiable")
    return given


def _axes_and_lengths(shape, s, axes, inverse_real):
    """NumPy's reading of `s` and `axes` (np.fft's _cook_nd_args): the axes, then each one's transform length (None:
    the 1-d transform's default; -1: the input's length). irfftn's last length defaults to 2 (m - 1)."""
    if axes is None:
        axes = range(-len(s), 0) if s is not None else range(len(shape))
    axes = [a % len(shape) for a in axes]
    if s is None:
        s = [shape[a] for a in axes]
        if inverse_real:
            s[-1] = 2 * (shape[axes[-1]] - 1)
    return [shape[a] if k == -1 else k for k, a in zip(s, axes, strict=True)], axes


def _steps(kind, shape, p):
    """The 1-d transforms ("fft", "ifft", "rfft", "irfft") NumPy runs for `kind` (a 1-d one, or "fftn", "ifftn",
    "rfftn", "irfftn"), in order, each as (kind, length n, axis, the input's length along that axis)."""
    if kind in ("fft", "ifft", "rfft", "irfft"):
        plan = [(kind, p["n"], p["axis"])]
    else:
        lengths, axes = _axes_and_lengths(shape, p["s"], p["axes"], kind == "irfftn")
        pairs = list(zip(lengths, axes, strict=True))
        if kind in ("fftn", "ifftn"):
            plan = [(kind[:-1], n, axis) for n, axis in reversed(pairs)]
        elif kind == "rfftn":
            plan = [("rfft", *pairs[-1])] + [("fft", n, axis) for n, axis in reversed(pairs[:-1])]
        else:
            plan = [("ifft", n, axis) for n, axis in pairs[:-1]] + [("irfft", *pairs[-1])]
    shape, steps = list(shape), []
    for step, n, axis in plan:
        axis %= len(shape)
        size = shape[axis]
        n = n if n is not None else 2 * (size - 1) if step == "irfft" else size
        steps.append((step, n, axis, size))
        shape[axis] = n // 2 + 1 if step == "rfft" else n
    return steps


def _hermitian_weights(n, axis, ndim, dtype):
    """How often irfft of length n counts each of its n // 2 + 1 bins: twice (bin k and its mirror n - k), once for bin
    0 and the Nyquist bin n / 2 (n even); shaped to broadcast along `axis`."""
    k = np.arange(n // 2 + 1)
    w = np.where((k == 0) | (2 * k == n), 1.0, 2.0).astype(dtype)
    return w.reshape([-1 if d == axis else 1 for d in range(ndim)])


def _real_dtype(g):
    return np.finfo(g.dtype).dtype if g.dtype.kind in "fc" else np.float64


# (constants from shapes: an outer level of nested differentiation, transforming the backs below, runs them as such)
nondifferentiable(_parameters, _axes_and_lengths, _steps, _hermitian_weights, _real_dtype)


# --- the adjoint of one step, and of a chain of them ------------------------------------------------------------------
def _resized(g, size, axis):
    """g cropped or zero-padded to `size` along `axis`: the adjoint of the zero-pad or crop before a transform."""
    have = g.shape[axis]
    if have > size:
        return g[(slice(None),) * axis + (slice(0, size),)]
    if have < size:
        return np.pad(g, [(0, size - have) if d == axis else (0, 0) for d in range(g.ndim)])
    return g


def _step_back(g, step, norm):
    """The adjoint of one 1-d step (kind, n, axis, input length) applied to its output's cotangent g."""
    step, n, axis, size = step
    dual = _DUAL[norm]
    if step == "fft":
        g = np.fft.ifft(g, axis=axis, norm=dual)
    elif step == "ifft":
        g = np.fft.fft(g, axis=axis, norm=dual)
    elif step == "rfft":  # Re(F^H (dy zero-padded)): irfft counts bins 1..(n-1)/2 twice, so they go in halved
        g = np.fft.irfft(g / _hermitian_weights(n, axis, g.ndim, _real_dtype(g)), n, axis=axis, norm=dual)
    else:  # irfft: rfft of dy, each bin as often as irfft counts it (a real output: Im dy is no cotangent)
        g = np.real(g)
        g = np.fft.rfft(g, axis=axis, norm=dual) * _hermitian_weights(n, axis, g.ndim, _real_dtype(g))
    return _resized(g, size, axis)


def _steps_back(dy, steps, norm):
    g = dy if has_dual((dy,)) else np.asarray(dy)  # (hessian's dual numbers: the transforms have tangent rules)
    for step in reversed(steps):
        g = _step_back(g, step, norm)
    return g


def _in_form(g, x):
    """The cotangent g in x's form: real for a real x (the real part: x enters the transform as x + 0j), of x's
    precision (float32 stays float32), a list for a list."""
    x_ = np.asarray(strip(x))
    if x_.dtype.kind != "c":
        g = np.real(g)
    if x_.dtype.kind in "fc" and g.dtype != x_.dtype and not has_dual((g,)):
        g = g.astype(x_.dtype)
    return _restore(g, x)


# --- the rules --------------------------------------------------------------------------------------------------------
def _transform_rule(fn, kind, names, defaults):
    """The rule of the transform `fn`, computed by NumPy as the 1-d steps `_steps(kind, ...)` lists."""
    def rule(a, *args, **kwargs):
        p = _parameters(fn, names, defaults, args, kwargs)
        return fn(a, *args, **kwargs), transform_back(kind, p, a, len(args))
    rule.__qualname__ = f"{fn.__name__}_rule"
    return rule


def transform_back(kind, p, a, nargs):
    """The back of a transform of kind `kind` of `a` with the parameters `p` (`_parameters`), after `nargs` more
    positional arguments (scipy_fft.py's rules take it too: SciPy's transforms are NumPy's)."""
    steps = _steps(kind, np.shape(a), p)

    def back(dy):
        if dy is None:
            return (None, *(None for _ in range(nargs)))
        return (_in_form(_steps_back(dy, steps, p["norm"]), a), *(None for _ in range(nargs)))
    return back


_PLANE, _ALL = {"s": None, "axes": (-2, -1), "norm": None}, {"s": None, "axes": None, "norm": None}
TRANSFORMS = {  # target: (what NumPy runs, its parameters after the array, their defaults)
    np.fft.fft: ("fft", _ONE_AXIS, _ONE_AXIS_DEFAULTS), np.fft.ifft: ("ifft", _ONE_AXIS, _ONE_AXIS_DEFAULTS),
    np.fft.rfft: ("rfft", _ONE_AXIS, _ONE_AXIS_DEFAULTS), np.fft.irfft: ("irfft", _ONE_AXIS, _ONE_AXIS_DEFAULTS),
    np.fft.fft2: ("fftn", _AXES, _PLANE), np.fft.ifft2: ("ifftn", _AXES, _PLANE),
    np.fft.rfft2: ("rfftn", _AXES, _PLANE), np.fft.irfft2: ("irfftn", _AXES, _PLANE),
    np.fft.fftn: ("fftn", _AXES, _ALL), np.fft.ifftn: ("ifftn", _AXES, _ALL),
    np.fft.rfftn: ("rfftn", _AXES, _ALL), np.fft.irfftn: ("irfftn", _AXES, _ALL),
}
for _fn, (_kind, _names, _defaults) in TRANSFORMS.items():
    adjoint(_fn)(_transform_rule(_fn, _kind, _names, _defaults))


@adjoint(np.fft.hfft)
def hfft(a, *args, **kwargs):
    """hfft(a) = irfft(conj(a)) with the norm swapped (NumPy computes it so): dx = conj(irfft's adjoint of dy)."""
    p = _parameters(np.fft.hfft, _ONE_AXIS, _ONE_AXIS_DEFAULTS, args, kwargs)
    y = np.fft.hfft(a, *args, **kwargs)  # (first: NumPy's errors for bad arguments)
    steps = _steps("irfft", np.shape(a), p)

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        return (_in_form(np.conj(_steps_back(dy, steps, _SWAPPED[p["norm"]])), a), *_nones(args))
    return y, back


@adjoint(np.fft.ihfft)
def ihfft(a, *args, **kwargs):
    """ihfft(a) = conj(rfft(a)) with the norm swapped: dx = rfft's adjoint of conj(dy)."""
    p = _parameters(np.fft.ihfft, _ONE_AXIS, _ONE_AXIS_DEFAULTS, args, kwargs)
    y = np.fft.ihfft(a, *args, **kwargs)  # (first: NumPy's errors for bad arguments)
    steps = _steps("rfft", np.shape(a), p)

    def back(dy):
        if dy is None:
            return (None, *_nones(args))
        return (_in_form(_steps_back(np.conj(dy), steps, _SWAPPED[p["norm"]]), a), *_nones(args))
    return y, back


# --- the shifts: permutations, each the other's inverse ---------------------------------------------------------------
@adjoint(np.fft.fftshift)
def fftshift(x, *args, **kwargs):
    axes = args[0] if args else kwargs.get("axes")
    return np.fft.fftshift(x, *args, **kwargs), lambda dy: (
        None if dy is None else _in_form(np.fft.ifftshift(dy, axes), x), *_nones(args))


@adjoint(np.fft.ifftshift)
def ifftshift(x, *args, **kwargs):
    axes = args[0] if args else kwargs.get("axes")
    return np.fft.ifftshift(x, *args, **kwargs), lambda dy: (
        None if dy is None else _in_form(np.fft.fftshift(dy, axes), x), *_nones(args))


# --- the sample frequencies: k / (n d), constants in the length n, and proportional to 1 / d -------------------------
def spacing_rule(target):
    """The rule of `target(n, d=1.0, ...)`, `fftfreq` or `rfftfreq` (NumPy's or SciPy's): the sample spacing `d`,
    which a box length or a time step sets (`fftfreq(n, d=L / n)`), gets the cotangent -sum(dy * y) / d; they were
    constants, and such a gradient silently lacked that term."""
    def rule(n, *args, **kwargs):
        y = target(n, *args, **kwargs)
        d = args[0] if args else kwargs.get("d", 1.0)

        def back(dy):
            dd = None if dy is None else -_real_total(dy * y) / d
            return keyword_cotangents((None, *((dd,) if args else ()), *_nones(args[1:])), kwargs, d=dd)
        return y, back
    rule.__qualname__ = f"{target.__name__}_rule"
    return keyword_rule(rule)


def _real_total(a):
    return a.real.sum() if np.iscomplexobj(a) else a.sum()


for _target in (np.fft.fftfreq, np.fft.rfftfreq):
    adjoint(_target)(spacing_rule(_target))
