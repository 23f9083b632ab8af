"""Rows for `zygotepy/adjoints/numpy/`: prod, var/std and trace (reductions.py), ptp, median, nanmedian, average and
the nan-reductions (statistics.py), the scans and diff (scans.py), the ndarray methods of the same names, the ufuncs'
reduce and accumulate methods (ufunc_methods.py) and their reduceat methods (segments.py)."""
import numpy as np
from table_base import ANY, NZ, POS, Kind, Seq, Shaped, label, row

from zygotepy.adjoints.numpy.common import spread

REDUCE = [((2, 3),), ((4,),), ((2, 3, 4),), ((),)]
DISTINCT = Kind("distinct", -2.0, 2.0)  # order statistics: random draws are distinct almost surely


def reductions(op, kind=ANY, keepdims_at=None, shapes=REDUCE):
    """Whole-array, axis=0, a tuple of axes, keepdims, and a positional axis."""
    return [
        row(op, kind, shapes=shapes),
        row(op, kind, shapes=[((2, 3),)], kw={"axis": 0}, label=f"{label(op)}[axis=0]"),
        row(op, kind, shapes=[((2, 3, 4),)], kw={"axis": (0, 2)}, label=f"{label(op)}[axis=(0, 2)]"),
        row(op, kind, shapes=[((2, 3, 4),)], kw={"axis": -1, "keepdims": True}, label=f"{label(op)}[keepdims]"),
        row(op, kind, 1, shapes=[((2, 3),)], none=(1,), label=f"{label(op)}[positional axis]"),
    ]


def scans(op, kind=ANY, shapes=((4,), (2, 3), ())):
    return [
        row(op, kind, shapes=[(s,) for s in shapes]),  # no axis: flattened
        row(op, kind, 1, shapes=[((2, 3),), ((2, 3, 2),)], none=(1,), label=f"{label(op)}[positional axis]"),
        row(op, kind, shapes=[((3, 2),)], kw={"axis": 0}, label=f"{label(op)}[axis=0]"),
    ]


# a reduction's cotangent spread over the reduced axes of an array (the backs of sum and mean along an axis)
SPREAD_ROWS = [
    row(spread, ANY, np.zeros((2, 3)), 1, True, shapes=[((2, 1),)], none=(1, 2, 3), label="spread[keepdims]"),
    row(spread, ANY, np.zeros((2, 3)), 0, False, shapes=[((3,),)], none=(1, 2, 3), label="spread[axis=0]"),
    row(spread, ANY, np.zeros((2, 3, 4)), (0, 2), False, shapes=[((3,),)], none=(1, 2, 3), label="spread[axis=(0, 2)]"),
    row(spread, ANY, np.zeros((2, 3)), None, False, shapes=[((),)], none=(1, 2, 3), label="spread[axis=None]"),
]

REDUCTION_ROWS = [
    *SPREAD_ROWS,
    *reductions(np.prod, NZ), *reductions(np.ndarray.prod, NZ, shapes=REDUCE[:3]),
    row(np.prod, Seq(ANY), shapes=[((None,) * 3,)], label="np.prod[list]"),
    *reductions(np.var), *reductions(np.std, shapes=REDUCE[:3]),
    *reductions(np.ndarray.var, shapes=REDUCE[:3]), *reductions(np.ndarray.std, shapes=REDUCE[:3]),
    row(np.var, ANY, shapes=[((5,),), ((2, 3),)], kw={"ddof": 1}, label="np.var[ddof=1]"),
    row(np.std, ANY, shapes=[((2, 3),)], kw={"ddof": 1, "axis": 1}, label="np.std[ddof=1, axis=1]"),
    row(np.std, ANY, shapes=[((3,),), ((2, 3),)], kw={"mean": Shaped(ANY, ())}, label="np.std[mean=]"),
    row(np.var, ANY, shapes=[((3, 4),)], kw={"axis": 0, "mean": Shaped(ANY, (1, 4))}, label="np.var[axis=0, mean=]"),
    row(np.var, ANY, shapes=[((2, 3, 4),)], kw={"axis": (0, 2), "ddof": 1, "keepdims": True,
                                             "mean": Shaped(ANY, (1, 3, 1))}, label="np.var[axes, ddof, mean=]"),
    row(np.ndarray.std, ANY, shapes=[((3, 4),)], kw={"axis": 1, "mean": Shaped(ANY, (3, 1))},
        label="ndarray.std[mean=]"),
    row(np.ndarray.var, ANY, shapes=[((4,),)], kw={"mean": Shaped(ANY, (1,))}, label="ndarray.var[mean=]"),
    row(np.ndarray.std, ANY, 0, None, None, 1, shapes=[((3, 2),)], none=(1, 2, 3, 4), label="ndarray.std[positional ddof]"),
    *reductions(np.ptp, DISTINCT, shapes=REDUCE[:3]),
    *(row(op, ANY, shapes=[(None,)], label=f"{label(op)}[Python float]") for op in (np.ptp, np.prod, np.var, np.std)),
    *reductions(np.median, DISTINCT, shapes=[((2, 3),), ((5,),), ((2, 3, 4),)]),
    row(np.median, DISTINCT, shapes=[((4, 2),)], kw={"axis": 0}, label="np.median[even count]"),
    row(np.median, DISTINCT, shapes=[((5,),), ((4,),), ((3, 5),)], kw={"overwrite_input": True},
        label="np.median[overwrite_input]"),
    row(np.median, DISTINCT, shapes=[((3, 5),)], kw={"axis": 1, "overwrite_input": True},
        label="np.median[axis=1, overwrite_input]"),
    row(np.median, DISTINCT, 0, None, True, shapes=[((4, 3),)], none=(1, 2, 3),
        label="np.median[positional overwrite_input]"),
    *reductions(np.nanmedian, DISTINCT, shapes=[((2, 3),), ((5,),), ((2, 3, 4),)]),
    row(np.nanmedian, DISTINCT, shapes=[((4, 2),)], kw={"axis": 0, "overwrite_input": True},
        label="np.nanmedian[even count, overwrite_input]"),
    row(np.nanmedian, DISTINCT, 0, None, True, True, shapes=[((4, 3),)], none=(1, 2, 3, 4),
        label="np.nanmedian[positional overwrite_input, keepdims]"),
    *reductions(np.nanmax, DISTINCT, shapes=REDUCE[:3]), *reductions(np.nanmin, DISTINCT, shapes=REDUCE[:3]),
    *reductions(np.nansum, shapes=REDUCE[:3]), *reductions(np.nanmean, shapes=REDUCE[:3]),
    *reductions(np.nanvar), *reductions(np.nanstd, shapes=REDUCE[:3]), *reductions(np.nanprod, NZ, shapes=REDUCE[:3]),
    row(np.nanvar, ANY, shapes=[((5,),), ((2, 3),)], kw={"ddof": 1}, label="np.nanvar[ddof=1]"),
    row(np.nanstd, ANY, shapes=[((3, 4),)], kw={"ddof": 1, "axis": -1, "keepdims": True},
        label="np.nanstd[ddof=1, axis=-1, keepdims]"),
    row(np.nanstd, ANY, 0, None, None, 1, shapes=[((3, 2),)], none=(1, 2, 3, 4), label="np.nanstd[positional ddof]"),
    row(np.average, ANY, shapes=[((2, 3),), ((4,),)]),
    row(np.average, ANY, 1, POS, shapes=[((2, 3), (3,)), ((2, 3), (2, 3))], none=(1,), label="np.average[weights]"),
    row(np.average, ANY, 0, POS, shapes=[((2, 3), (2,))], none=(1,), kw={"keepdims": True},
        label="np.average[weights, keepdims]"),
    row(np.average, ANY, None, POS, True, shapes=[((2, 3), (2, 3))], none=(1, 3), label="np.average[returned]"),
    row(np.average, ANY, shapes=[((2, 3),)], kw={"axis": 0, "weights": np.array([1.0, 3.0])},
        label="np.average[weights=]"),
    row(np.average, ANY, shapes=[((2, 3, 4),)], kw={"axis": (0, 2), "weights": Shaped(POS, (2, 4))},
        label="np.average[axis=(0, 2), weights=]"),
    row(np.average, ANY, (2, 0), POS, True, shapes=[((2, 3, 4), (4, 2))], none=(1, 3),
        label="np.average[axis=(2, 0), weights, returned]"),
    row(np.average, ANY, shapes=[((2, 3, 4),)], kw={"axis": (-1, 1), "weights": Shaped(POS, (4, 3)), "keepdims": True},
        label="np.average[axis=(-1, 1), weights=, keepdims]"),
    *scans(np.cumsum), *scans(np.ndarray.cumsum, shapes=((4,), (2, 3))), *scans(np.cumprod, NZ), *scans(np.ndarray.cumprod, NZ, shapes=((4,), (2, 3))),
    row(np.cumsum, Seq(ANY), shapes=[((None,) * 3,)], label="np.cumsum[list]"),
    *scans(np.nancumsum), *scans(np.nancumprod, NZ),
    row(np.trace, ANY, shapes=[((3, 3),), ((2, 4),), ((2, 3, 4),)]),
    row(np.trace, ANY, 1, shapes=[((3, 4),)], none=(1,), label="np.trace[offset]"),
    row(np.trace, ANY, shapes=[((2, 3, 3),)], kw={"offset": -1, "axis1": 1, "axis2": 2}, label="np.trace[axes]"),
    row(np.ndarray.trace, ANY, shapes=[((3, 3),)]),
    row(np.diff, ANY, shapes=[((5,),), ((2, 4),)]),
    row(np.diff, ANY, 2, 0, shapes=[((5, 2),)], none=(1, 2), label="np.diff[n=2, axis=0]"),
    row(np.diff, ANY, shapes=[((4,),)], kw={"prepend": 0.5, "append": np.array([1.0, 2.0])},
        label="np.diff[prepend=, append=]"),
    row(np.diff, ANY, 1, -1, ANY, ANY, shapes=[((2, 4), (2, 1), None)], none=(1, 2),
        label="np.diff[positional prepend, append]"),
]
if hasattr(np, "cumulative_sum"):
    REDUCTION_ROWS += [
        row(np.cumulative_sum, ANY, shapes=[((4,),)]),
        row(np.cumulative_sum, ANY, shapes=[((2, 3),)], kw={"axis": 1, "include_initial": True},
            label="np.cumulative_sum[include_initial]"),
        row(np.cumulative_prod, NZ, shapes=[((4,),)]),
        row(np.cumulative_prod, NZ, shapes=[((3, 2),)], kw={"axis": 0, "include_initial": True},
            label="np.cumulative_prod[include_initial]"),
    ]

FLOAT32_REDUCTIONS = [np.prod, np.var, np.std, np.ptp, np.median, np.nanmedian, np.nanmax, np.nansum, np.nanmean, np.nanvar,
                      np.nanstd, np.average,
                      np.cumsum, np.cumprod, np.diff, np.ndarray.prod, np.ndarray.var]

WHERE = np.array([[True, False, True], [True, True, False]])
REDUCTION_ROWS += [
    row(np.prod, NZ, shapes=[((2, 3),)], kw={"where": WHERE}, label="np.prod[where]"),
    row(np.prod, NZ, shapes=[((2, 3),)], kw={"where": WHERE, "axis": 1}, label="np.prod[where, axis]"),
    row(np.nansum, ANY, shapes=[((2, 3),)], kw={"where": WHERE}, label="np.nansum[where]"),
    row(np.nanmean, ANY, shapes=[((2, 3),)], kw={"where": WHERE, "axis": 0}, label="np.nanmean[where, axis]"),
]

# the reduce and accumulate methods of ufuncs (ufunc_methods.py): default axis 0, negative, None, a tuple, keepdims,
# a positional axis, dtype= passed through
UFUNC_KINDS = {np.add: ANY, np.multiply: NZ, np.maximum: DISTINCT, np.minimum: DISTINCT, np.logaddexp: ANY,
               np.logaddexp2: ANY}


def ufunc_reduce_rows(u, kind):
    name = f"np.{u.__name__}.reduce"
    return [
        row(u.reduce, kind, shapes=[((4,),), ((2, 3),), ((2, 3, 4),)], label=name),
        row(u.reduce, kind, shapes=[((2, 3),), ((2, 3, 4),)], kw={"axis": -1}, label=f"{name}[axis=-1]"),
        row(u.reduce, kind, shapes=[((2, 3),), ((5,),)], kw={"axis": None}, label=f"{name}[axis=None]"),
        row(u.reduce, kind, shapes=[((2, 3, 4),)], kw={"axis": (0, 2)}, label=f"{name}[axis=(0, 2)]"),
        row(u.reduce, kind, shapes=[((2, 3, 4),), ((3, 2),)], kw={"axis": 1, "keepdims": True},
            label=f"{name}[keepdims]"),
        row(u.reduce, kind, 1, shapes=[((2, 3),)], none=(1,), label=f"{name}[positional axis]"),
        row(u.reduce, kind, shapes=[((3, 2),)], kw={"axis": 0, "dtype": np.float64}, label=f"{name}[dtype]"),
    ]


def ufunc_accumulate_rows(u, kind):
    name = f"np.{u.__name__}.accumulate"
    return [
        row(u.accumulate, kind, shapes=[((5,),), ((3, 2),), ((2, 3, 4),)], label=name),
        row(u.accumulate, kind, shapes=[((2, 3),), ((2, 3, 4),)], kw={"axis": -1}, label=f"{name}[axis=-1]"),
        row(u.accumulate, kind, 1, shapes=[((2, 4),)], none=(1,), label=f"{name}[positional axis]"),
        row(u.accumulate, kind, shapes=[((4, 2),)], kw={"axis": 0, "dtype": np.float64}, label=f"{name}[dtype]"),
    ]


UFUNC_METHOD_ROWS = [
    *(r for u, kind in UFUNC_KINDS.items() for r in ufunc_reduce_rows(u, kind) + ufunc_accumulate_rows(u, kind)),
    *(row(u.reduce, kind, shapes=[((2, 3),)], kw={"axis": 1, "initial": k}, label=f"np.{u.__name__}.reduce[initial]")
      for u, kind, k in ((np.add, ANY, ANY), (np.multiply, NZ, NZ), (np.maximum, DISTINCT, Kind("high", 3.0, 4.0)))),
    row(np.minimum.reduce, DISTINCT, shapes=[((2, 3),)], kw={"axis": 0, "where": WHERE, "initial": 5.0},
        label="np.minimum.reduce[where, initial]"),
    row(np.add.reduce, Seq(ANY), shapes=[((None,) * 3,)], label="np.add.reduce[list]"),
    row(np.logaddexp.accumulate, Seq(ANY), shapes=[((None,) * 3,)], label="np.logaddexp.accumulate[list]"),
]
# outer: the ufunc of the first with trailing axes of 1 and the second
UFUNC_METHOD_ROWS += [
    row(u.outer, a, b, shapes=[((3,), (2,)), ((2, 2), (3,)), (None, (2,))], label=f"np.{u.__name__}.outer")
    for u, a, b in ((np.add, ANY, ANY), (np.subtract, ANY, ANY), (np.multiply, ANY, ANY), (np.divide, ANY, NZ),
                    (np.power, POS, ANY), (np.maximum, DISTINCT, DISTINCT), (np.minimum, DISTINCT, DISTINCT),
                    (np.hypot, NZ, NZ), (np.arctan2, ANY, NZ), (np.logaddexp, ANY, ANY))]
REDUCTION_ROWS += UFUNC_METHOD_ROWS


# reduceat (segments.py): increasing indices, an index not below the next (that output is one entry), overlapping
# segments, a positional and a negative axis, dtype= passed through
def ufunc_reduceat_rows(u, kind):
    name = f"np.{u.__name__}.reduceat"
    return [
        row(u.reduceat, kind, np.array([0, 2, 3]), shapes=[((6,),), ((5, 2),)], none=(1,), label=name),
        row(u.reduceat, kind, [0, 4, 1, 5, 5], shapes=[((7,),)], none=(1,), label=f"{name}[indices not increasing]"),
        row(u.reduceat, kind, [1, 3], 1, shapes=[((2, 5),), ((2, 4, 3),)], none=(1, 2), label=f"{name}[axis=1]"),
        row(u.reduceat, kind, [0, 2], shapes=[((2, 3, 4),)], kw={"axis": -1}, none=(1,), label=f"{name}[axis=-1]"),
        row(u.reduceat, kind, [2, 0], shapes=[((3, 2),)], kw={"dtype": np.float64}, none=(1,),
            label=f"{name}[dtype]"),
    ]


REDUCTION_ROWS += [r for u in (np.add, np.multiply, np.maximum, np.minimum) for r in ufunc_reduceat_rows(u, UFUNC_KINDS[u])]
REDUCTION_ROWS.append(row(np.add.reduceat, Seq(ANY), [0, 2], shapes=[((None,) * 3,)], none=(1,),
                          label="np.add.reduceat[list]"))
FLOAT32_REDUCTIONS += [u.reduce for u in UFUNC_KINDS] + [u.accumulate for u in UFUNC_KINDS]
