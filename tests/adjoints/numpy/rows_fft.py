"""Rows for `zygotepy/adjoints/numpy/fft.py`: the np.fft transforms, real and complex input, odd and even lengths,
`n`/`s` zero-padding and cropping, `axis`/`axes` and every norm, by position and by keyword; and the shifts."""
import numpy as np
from table_base import ANY, CPLX, POS, row

F = np.fft
NORMS = ("backward", "ortho", "forward")


def fft_row(fn, kind, *constants, shapes, kw=None, tag=""):
    """A row of `fn(x, *constants, **kw)`: only x is random; the constants (n, axis, norm, ...) get no cotangent."""
    name = f"np.fft.{fn.__name__}[{tag}]" if tag else f"np.fft.{fn.__name__}"
    return row(fn, kind, *constants, shapes=shapes, kw=kw, none=range(1, 1 + len(constants)), label=name)


def _complex_rows(fn):
    """fft / ifft: complex in, complex out; any input."""
    return [
        fft_row(fn, ANY, shapes=[((5,),), ((6,),), ((3, 4),), ((2, 3, 4),)]),
        fft_row(fn, CPLX, shapes=[((5,),), ((2, 6),)], tag="complex"),
        fft_row(fn, ANY, 8, shapes=[((5,),), ((2, 3),)], tag="n pads"),
        fft_row(fn, CPLX, 3, shapes=[((6,),), ((2, 5),)], tag="n crops"),
        fft_row(fn, CPLX, shapes=[((3, 4),)], kw={"axis": 0}, tag="axis=0"),
        fft_row(fn, ANY, None, 1, shapes=[((2, 3, 4),)], tag="positional axis"),
        fft_row(fn, CPLX, shapes=[((3, 4),)], kw={"n": 5, "axis": 0}, tag="n, axis"),
        *(fft_row(fn, CPLX, 4, -1, norm, shapes=[((5,),), ((2, 3),)], tag=f"norm={norm}") for norm in NORMS),
        fft_row(fn, ANY, shapes=[((6,),)], kw={"norm": "ortho"}, tag="real, ortho"),
    ]


def _real_rows(fn):
    """rfft / ihfft: real input only; n // 2 + 1 bins out."""
    return [
        fft_row(fn, ANY, shapes=[((5,),), ((6,),), ((1,),), ((3, 4),), ((2, 3, 5),)]),
        fft_row(fn, ANY, 8, shapes=[((5,),)], tag="n pads, even"),
        fft_row(fn, ANY, 9, shapes=[((6,),)], tag="n pads, odd"),
        fft_row(fn, ANY, 4, shapes=[((7,),), ((2, 5),)], tag="n crops, even"),
        fft_row(fn, ANY, 3, shapes=[((6,),)], tag="n crops, odd"),
        fft_row(fn, ANY, shapes=[((4, 3),)], kw={"axis": 0}, tag="axis=0"),
        fft_row(fn, ANY, shapes=[((2, 6, 3),)], kw={"n": 5, "axis": 1}, tag="n, axis"),
        *(fft_row(fn, ANY, None, -1, norm, shapes=[((6,),), ((2, 7),)], tag=f"norm={norm}") for norm in NORMS),
    ]


def _hermitian_rows(fn):
    """irfft / hfft: the Hermitian half in (real or complex), real out; n defaults to 2 (m - 1), and an odd n has no
    Nyquist bin."""
    return [
        fft_row(fn, ANY, shapes=[((5,),), ((4,),), ((3, 4),)]),
        fft_row(fn, CPLX, shapes=[((5,),), ((4,),), ((2, 3, 4),)], tag="complex"),
        fft_row(fn, CPLX, 7, shapes=[((4,),), ((2, 4),)], tag="odd n"),
        fft_row(fn, CPLX, 5, shapes=[((4,),)], tag="odd n crops"),
        fft_row(fn, CPLX, 10, shapes=[((4,),)], tag="even n pads"),
        fft_row(fn, CPLX, 3, shapes=[((5,),)], tag="n=3 crops the bins"),
        fft_row(fn, CPLX, 1, shapes=[((3,),)], tag="n=1"),
        fft_row(fn, CPLX, shapes=[((4, 3),)], kw={"axis": 0}, tag="axis=0"),
        fft_row(fn, CPLX, shapes=[((2, 4, 3),)], kw={"n": 9, "axis": 1}, tag="n, axis"),
        *(fft_row(fn, CPLX, n, -1, norm, shapes=[((4,),), ((2, 5),)], tag=f"n={n}, norm={norm}")
          for norm in NORMS for n in (6, 7)),
    ]


def _complex_nd_rows(fn, plane):
    """fft2 / ifft2 (plane: axes default to the last two) and fftn / ifftn (all axes)."""
    rows = [
        fft_row(fn, ANY, shapes=[((3, 4),), ((2, 3, 5),)]),
        fft_row(fn, CPLX, shapes=[((3, 4),), ((2, 3, 4),)], tag="complex"),
        fft_row(fn, CPLX, (5, 2), (0, 1), shapes=[((3, 4),)], tag="s pads and crops"),
        fft_row(fn, ANY, shapes=[((2, 3, 4),)], kw={"s": (3, 5), "axes": (0, 2)}, tag="s, axes"),
        fft_row(fn, CPLX, shapes=[((2, 3, 4),)], kw={"axes": (2, 0)}, tag="axes reversed"),
        fft_row(fn, CPLX, shapes=[((3, 4),)], kw={"s": (-1, 6), "axes": (0, 1)}, tag="s=-1 keeps the length"),
        fft_row(fn, CPLX, shapes=[((3, 5),)], kw={"s": (2, 7), "axes": (1, 1)}, tag="repeated axis"),
        *(fft_row(fn, CPLX, (4, 3), (-2, -1), norm, shapes=[((3, 4),), ((2, 3, 3),)], tag=f"norm={norm}")
          for norm in NORMS),
    ]
    if plane:
        rows.append(fft_row(fn, CPLX, (4, 2), shapes=[((2, 3, 3),)], tag="s only"))
    else:
        rows.append(fft_row(fn, CPLX, None, (1,), shapes=[((2, 3, 4),)], tag="one axis"))
    return rows


def _real_nd_rows(fn):
    """rfft2 / rfftn: real input; the last axis is rfft's, the others fft's."""
    return [
        fft_row(fn, ANY, shapes=[((3, 4),), ((3, 5),), ((2, 3, 4),)]),
        fft_row(fn, ANY, (5, 3), (0, 1), shapes=[((3, 4),)], tag="s pads and crops"),
        fft_row(fn, ANY, shapes=[((2, 3, 4),)], kw={"s": (3, 6), "axes": (0, 2)}, tag="s, axes"),
        fft_row(fn, ANY, shapes=[((2, 3, 5),)], kw={"axes": (2, 0)}, tag="axes reversed"),
        fft_row(fn, ANY, shapes=[((2, 3, 5),)], kw={"s": (4, 3), "axes": (1, 1)}, tag="repeated axis"),
        *(fft_row(fn, ANY, (4, 5), (-2, -1), norm, shapes=[((3, 4),), ((2, 3, 6),)], tag=f"norm={norm}")
          for norm in NORMS),
    ]


def _hermitian_nd_rows(fn):
    """irfft2 / irfftn: the last axis is irfft's (odd and even output lengths), the others ifft's."""
    return [
        fft_row(fn, ANY, shapes=[((3, 4),), ((2, 3, 4),)]),
        fft_row(fn, CPLX, shapes=[((3, 4),), ((3, 5),), ((2, 3, 4),)], tag="complex"),
        fft_row(fn, CPLX, (5, 3), (0, 1), shapes=[((3, 4),)], tag="odd s"),
        fft_row(fn, CPLX, (2, 8), (0, 1), shapes=[((3, 4),)], tag="even s pads"),
        fft_row(fn, CPLX, shapes=[((2, 3, 4),)], kw={"s": (3, 5), "axes": (0, 2)}, tag="s, axes"),
        fft_row(fn, CPLX, shapes=[((2, 3, 4),)], kw={"axes": (2, 0)}, tag="axes reversed"),
        fft_row(fn, CPLX, shapes=[((2, 3, 5),)], kw={"s": (4, 3), "axes": (1, 1)}, tag="repeated axis"),
        *(fft_row(fn, CPLX, (4, 5), (-2, -1), norm, shapes=[((3, 4),), ((2, 3, 3),)], tag=f"norm={norm}")
          for norm in NORMS),
    ]


def _shift_rows(fn):
    return [
        fft_row(fn, ANY, shapes=[((5,),), ((4, 5),), ((2, 3, 4),)]),
        fft_row(fn, CPLX, shapes=[((5,),), ((4, 5),)], tag="complex"),
        fft_row(fn, ANY, 0, shapes=[((4, 5),)], tag="axes=0"),
        fft_row(fn, CPLX, shapes=[((3, 4, 5),)], kw={"axes": (0, 2)}, tag="axes"),
    ]


FFT_ROWS = [
    *_complex_rows(F.fft), *_complex_rows(F.ifft),
    *_real_rows(F.rfft), *_real_rows(F.ihfft),
    *_hermitian_rows(F.irfft), *_hermitian_rows(F.hfft),
    *_complex_nd_rows(F.fft2, True), *_complex_nd_rows(F.ifft2, True),
    *_complex_nd_rows(F.fftn, False), *_complex_nd_rows(F.ifftn, False),
    *_real_nd_rows(F.rfft2), *_real_nd_rows(F.rfftn),
    *_hermitian_nd_rows(F.irfft2), *_hermitian_nd_rows(F.irfftn),
    *_shift_rows(F.fftshift), *_shift_rows(F.ifftshift),
    # the sample frequencies k / (n d): the spacing d, a number (by keyword: test_fft.py); n a constant
    *(row(fn, n, POS, shapes=[(None,)], none=(0,), label=f"np.fft.{fn.__name__}[n={n}]")
      for fn in (F.fftfreq, F.rfftfreq) for n in (7, 8)),
]
