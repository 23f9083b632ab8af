"""Rows for `zygotepy/adjoints/numpy/moments.py`: cov (rowvar, y= by position and keyword, bias, ddof, fweights,
aweights= that carry a gradient, complex data), corrcoef, and the quantiles and percentiles (q a number, 0 and 1, an
array of them, q that carries a gradient; axis, keepdims, every supported method; the nan-variants with NaNs they
skip)."""
from dataclasses import dataclass

import numpy as np
from table_base import ANY, CPLX, POS, Kind, Seq, Shaped, row

from zygotepy.adjoints.numpy.moments import METHODS

DISTINCT = Kind("distinct", -2.0, 2.0)  # order statistics: random draws are distinct almost surely
COUNTS = np.array([1, 2, 1, 3, 1, 2])  # fweights: integer counts, constants
QS = np.array([0.1, 0.5, 0.9])


@dataclass(frozen=True)
class WithNaN(Kind):
    """DISTINCT values with a NaN at every third entry of the flattened array (the nan-variants skip them; a NaN
    moved by finite differences stays NaN)."""

    def draw(self, rng, shape, dtype=np.float64):
        x = rng.uniform(self.lo, self.hi, shape)
        x.reshape(-1)[::3] = np.nan
        return np.asarray(x, dtype)


NANS = WithNaN("with NaNs", -2.0, 2.0)


def _cov_rows(op):
    name = f"np.{op.__name__}"
    return [
        row(op, ANY, shapes=[((3, 6),), ((6,),), ((2, 4),)]),
        row(op, ANY, shapes=[((6, 3),)], kw={"rowvar": False}, label=f"{name}[rowvar=False]"),
        row(op, ANY, shapes=[((2, 6),)], kw={"y": Shaped(ANY, (6,))}, label=f"{name}[y=]"),
        row(op, ANY, ANY, shapes=[((2, 5), (2, 5)), ((5,), (5,))], label=f"{name}[positional y]"),
        row(op, ANY, ANY, False, shapes=[((6, 2), (6, 3))], none=(2,), label=f"{name}[y, rowvar=False]"),
        row(op, CPLX, shapes=[((3, 5),)], label=f"{name}[complex]"),
        row(op, Seq(Seq(ANY)), shapes=[(((None,) * 4, (None,) * 4),)], label=f"{name}[nested lists]"),
    ]


def _quantile_rows(op, scale):
    """q as a number (inside, 0, the top), as 1-d and 2-d arrays; axis, a tuple of axes, keepdims, each method; a
    float q that carries a gradient (random, as an array too); an int q is a constant."""
    name = f"np.{op.__name__}"
    q, Q = 0.3 * scale, Kind("q", 0.05 * scale, 0.95 * scale)
    return [
        row(op, DISTINCT, q, shapes=[((7,),), ((2, 3),), ((2, 3, 4),)]),
        row(op, DISTINCT, 0.0, shapes=[((5,),)], label=f"{name}[q=0]"),
        row(op, DISTINCT, 1.0 * scale, shapes=[((5,),)], label=f"{name}[q at the top]"),
        row(op, DISTINCT, 1, shapes=[((4,),)], none=(1,), label=f"{name}[integer q=1]"),
        row(op, DISTINCT, QS * scale, shapes=[((7,),), ((4, 5),)], label=f"{name}[q array]"),
        row(op, DISTINCT, np.array([[0.2, 0.7], [0.0, 1.0]]) * scale, shapes=[((4, 5),)], kw={"axis": 1},
            label=f"{name}[2-d q, axis=1]"),
        row(op, DISTINCT, q, 0, shapes=[((4, 3),)], none=(2,), label=f"{name}[positional axis]"),
        row(op, DISTINCT, QS * scale, shapes=[((3, 4, 5),)], kw={"axis": (0, 2), "keepdims": True},
            label=f"{name}[axis=(0, 2), keepdims]"),
        row(op, DISTINCT, q, shapes=[((3, 4),)], kw={"axis": -1, "keepdims": True, "overwrite_input": True},
            label=f"{name}[keepdims, overwrite_input]"),
        *(row(op, DISTINCT, QS * scale, shapes=[((2, 6),), ((9,),)], kw={"axis": -1, "method": method},
              label=f"{name}[method={method}]") for method in METHODS),
        row(op, Seq(DISTINCT), q, shapes=[((None,) * 5,)], label=f"{name}[list]"),
        row(op, DISTINCT, Q, shapes=[((7,), None), ((2, 6), (3,)), ((2, 3, 4), (2, 2))], label=f"{name}[random q]"),
        row(op, DISTINCT, Q, shapes=[((3, 4, 5), (2,))], kw={"axis": (0, 2), "keepdims": True},
            label=f"{name}[random q, axis=(0, 2), keepdims]"),
        *(row(op, DISTINCT, Q, shapes=[((2, 6), (3,)), ((9,), None)], kw={"axis": -1, "method": method},
              label=f"{name}[random q, method={method}]") for method in METHODS),
    ]


def _nan_quantile_rows(op, scale):
    name = f"np.{op.__name__}"
    Q = Kind("q", 0.05 * scale, 0.95 * scale)
    return [
        row(op, NANS, QS * scale, shapes=[((7,),), ((3, 5),)], label=f"{name}[NaNs]"),
        row(op, NANS, 0.35 * scale, shapes=[((4, 5),)], kw={"axis": 1, "keepdims": True},
            label=f"{name}[NaNs, axis=1, keepdims]"),
        row(op, NANS, np.array([0.0, 1.0]) * scale, shapes=[((5, 4),)], kw={"axis": 0, "method": "hazen"},
            label=f"{name}[NaNs, q=0 and the top, hazen]"),
        row(op, NANS, QS * scale, shapes=[((4, 5),)], kw={"axis": 1, "method": "nearest"},
            label=f"{name}[NaNs, nearest]"),
        row(op, DISTINCT, QS * scale, shapes=[((4, 5),)], kw={"axis": 0}, label=f"{name}[no NaN]"),
        row(op, NANS, Q, shapes=[((7,), None), ((3, 5), (2,))], label=f"{name}[NaNs, random q]"),
        row(op, NANS, Q, shapes=[((4, 5), (3,))], kw={"axis": 1, "method": "weibull"},
            label=f"{name}[NaNs, random q, weibull]"),
    ]


MOMENTS_ROWS = [
    *_cov_rows(np.cov),
    row(np.cov, ANY, shapes=[((3, 6),)], kw={"bias": True}, label="np.cov[bias]"),
    row(np.cov, ANY, shapes=[((3, 6),)], kw={"ddof": 2}, label="np.cov[ddof=2]"),
    row(np.cov, ANY, shapes=[((3, 6),)], kw={"fweights": COUNTS}, label="np.cov[fweights]"),
    row(np.cov, ANY, shapes=[((3, 6),)], kw={"aweights": Shaped(POS, (6,))}, label="np.cov[aweights=]"),
    row(np.cov, ANY, shapes=[((3, 6),)], kw={"aweights": Shaped(POS, (6,)), "bias": True},
        label="np.cov[aweights=, bias]"),
    row(np.cov, ANY, shapes=[((3, 6),)], kw={"aweights": Shaped(POS, (6,)), "fweights": COUNTS},
        label="np.cov[fweights, aweights=]"),
    row(np.cov, ANY, shapes=[((6, 2),)], kw={"aweights": Shaped(POS, (6,)), "fweights": COUNTS, "ddof": 2,
                                             "rowvar": False}, label="np.cov[fweights, aweights=, ddof=2]"),
    row(np.cov, ANY, None, True, False, 0, None, POS, shapes=[((2, 5), (5,))], none=(1, 2, 3, 4, 5),
        label="np.cov[positional ddof=0, aweights]"),
    *_cov_rows(np.corrcoef),
    *_quantile_rows(np.quantile, 1.0), *_quantile_rows(np.percentile, 100.0),
    *_nan_quantile_rows(np.nanquantile, 1.0), *_nan_quantile_rows(np.nanpercentile, 100.0),
]
