"""Rows for the starter NumPy rules of `zygotepy/adjoints/numpy/`: the first elementwise functions (elementwise.py),
where and clip (select.py), sum/mean/max/min (reductions.py), dot/matmul/inner/outer (products.py), the reshapes
(reshaping.py), concatenate and stack (stacking.py), np.array (conversions.py) and the ndarray methods of the same
names (methods.py)."""
import numpy as np
from table_base import ANY, B, COND, HIGH, LOW, MATMUL, NZ, POS, UNIT, Seq, U, label, row

ELEMENTWISE_DOMAINS = {
    np.exp: ANY, np.expm1: ANY, np.log: POS, np.log1p: UNIT, np.log2: POS, np.log10: POS, np.sqrt: POS,
    np.square: ANY, np.reciprocal: NZ, np.sin: ANY, np.cos: ANY, np.tan: UNIT, np.tanh: ANY, np.sinh: ANY,
    np.cosh: ANY, np.arcsin: UNIT, np.arccos: UNIT, np.arctan: ANY, np.negative: ANY, np.positive: ANY, np.abs: NZ,
}
REDUCE = [((2, 3),), ((4,),), ((2, 3, 4),)]
DOT = [((3,), (3,)), ((2, 3), (3,)), ((3,), (3, 2)), ((2, 3), (3, 4)), ((), (3,)), ((2, 3), ()), ((2, 2, 3), (3,)),
       ((2, 3), (4, 3, 2)), ((2, 2, 3), (4, 3, 2))]
INNER = [((3,), (3,)), ((2, 3), (3,)), ((3,), (2, 3)), ((2, 3), (4, 3)), ((), (3,)), ((2, 2, 3), (4, 3))]


def _reductions(op, kind=ANY):
    return [
        row(op, kind, shapes=REDUCE),
        row(op, kind, shapes=[((2, 3),)], kw={"axis": 0}, label=f"{label(op)}[axis=0]"),
        row(op, kind, shapes=[((2, 3, 4),)], kw={"axis": (0, 2)}, label=f"{label(op)}[axis=(0, 2)]"),
        row(op, kind, shapes=[((2, 3, 4),)], kw={"axis": -1, "keepdims": True}, label=f"{label(op)}[keepdims]"),
        row(op, kind, 1, shapes=[((2, 3),)], none=(1,), label=f"{label(op)}[positional axis]"),
    ]


NUMPY_ROWS = [
    *(row(op, kind, shapes=U) for op, kind in ELEMENTWISE_DOMAINS.items()),
    row(np.square, Seq(ANY), shapes=[((None,),), ((None, None),)], label="np.square[list]"),
    row(np.multiply, Seq(ANY), ANY, shapes=[((None,), (2,)), ((None, None), ())], label="np.multiply[list]"),
    row(np.add, ANY, ANY, shapes=B), row(np.subtract, ANY, ANY, shapes=B), row(np.multiply, ANY, ANY, shapes=B),
    row(np.divide, ANY, NZ, shapes=B), row(np.power, POS, ANY, shapes=B),
    row(np.power, ANY, 2, shapes=[((2, 3),)], label="np.power[int exponent]"),
    row(np.maximum, ANY, ANY, shapes=B), row(np.minimum, ANY, ANY, shapes=B),
    row(np.arctan2, NZ, NZ, shapes=B), row(np.hypot, NZ, NZ, shapes=B),
    row(np.where, COND, ANY, ANY, shapes=[((3,), (3,)), ((2, 3), (3,)), ((), (2, 3))], none=(0,)),
    row(np.clip, ANY, -0.5, 0.5, shapes=[((3, 4),)]),
    row(np.clip, ANY, LOW, HIGH, shapes=[((3, 4), (4,), ())], label="np.clip[array bounds]"),
    *_reductions(np.sum), *_reductions(np.mean), *_reductions(np.max), *_reductions(np.min),
    *_reductions(np.amax), *_reductions(np.amin),
    *(row(op, Seq(ANY), shapes=[((None,) * 3,), (((2,), (2,)),)], label=f"{label(op)}[list]")
      for op in (np.sum, np.mean, np.max, np.min)),
    *(row(op, ANY, shapes=[(None,)], label=f"{label(op)}[Python float]")  # (crashed: a float has no .shape)
      for op in (np.sum, np.mean, np.max, np.min, np.amax, np.amin)),
    row(np.dot, ANY, ANY, shapes=DOT),
    row(np.matmul, ANY, ANY, shapes=MATMUL),
    row(np.inner, ANY, ANY, shapes=INNER),
    row(np.outer, ANY, ANY, shapes=[((3,), (2,)), ((2, 2), (3,))]),
    row(np.reshape, ANY, (3, 2), shapes=[((2, 3),), ((6,),)], none=(1,)),
    row(np.reshape, ANY, -1, shapes=[((2, 3),)], none=(1,), label="np.reshape[-1]"),
    row(np.transpose, ANY, shapes=[((2, 3),), ((2, 3, 4),)]),
    row(np.transpose, ANY, (1, 2, 0), shapes=[((2, 3, 4),)], none=(1,), label="np.transpose[axes]"),
    row(np.transpose, ANY, shapes=[((2, 3, 4),)], kw={"axes": (2, 0, 1)}, label="np.transpose[axes=]"),
    row(np.ravel, ANY, shapes=[((2, 3),)]),
    row(np.ravel, ANY, "F", shapes=[((2, 3),), ((2, 3, 2),)], none=(1,), label="np.ravel[F]"),  # (was a TypeError)
    row(np.reshape, ANY, (3, 2), "F", shapes=[((2, 3),)], none=(1, 2), label="np.reshape[F]"),  # (was wrong)
    row(np.reshape, ANY, (3, 2), shapes=[((2, 3),)], kw={"order": "F"}, none=(1,), label="np.reshape[order=F]"),
    row(np.squeeze, ANY, shapes=[((2, 1, 3),)]),
    row(np.squeeze, ANY, 1, shapes=[((2, 1, 1),)], none=(1,), label="np.squeeze[axis]"),
    row(np.expand_dims, ANY, 1, shapes=[((2, 3),)], none=(1,)),
    row(np.concatenate, Seq(ANY), shapes=[(((2, 3), (1, 3)),)]),
    row(np.concatenate, Seq(ANY, tuple), shapes=[(((2, 3), (2, 1)),)], kw={"axis": 1}, label="np.concatenate[axis=1]"),
    row(np.concatenate, Seq(ANY), 1, shapes=[(((2, 3), (2, 1)),)], none=(1,), label="np.concatenate[positional]"),
    row(np.stack, Seq(ANY), shapes=[(((3,), (3,)),), (((2, 3), (2, 3), (2, 3)),)]),
    row(np.stack, Seq(ANY), shapes=[(((2, 3), (2, 3)),)], kw={"axis": -1}, label="np.stack[axis=-1]"),
    row(np.array, Seq(ANY), shapes=[((None,) * 3,), (((2,), (2,)),)]),
    row(np.array, ANY, shapes=[((2, 3),)], label="np.array[array]"),
    row(np.asarray, Seq(ANY, tuple), shapes=[((None,) * 3,)]),
    row(np.asarray, ANY, shapes=[((2, 3),)], label="np.asarray[array]"),
    # ndarray methods, called through their descriptors
    row(np.ndarray.sum, ANY, shapes=REDUCE), row(np.ndarray.sum, ANY, 1, shapes=[((2, 3),)], none=(1,),
                                                 label="ndarray.sum[positional axis]"),
    row(np.ndarray.sum, ANY, shapes=[((2, 3),)], kw={"axis": 0, "keepdims": True}, label="ndarray.sum[keepdims]"),
    row(np.ndarray.mean, ANY, shapes=REDUCE), row(np.ndarray.mean, ANY, shapes=[((2, 3),)], kw={"axis": 1},
                                                  label="ndarray.mean[axis=1]"),
    row(np.ndarray.max, ANY, shapes=REDUCE), row(np.ndarray.max, ANY, 0, shapes=[((2, 3),)], none=(1,),
                                                 label="ndarray.max[positional axis]"),
    row(np.ndarray.min, ANY, shapes=REDUCE),
    row(np.ndarray.reshape, ANY, 3, 2, shapes=[((2, 3),)], none=(1, 2)),
    row(np.ndarray.reshape, ANY, (3, 2), shapes=[((6,),)], none=(1,), label="ndarray.reshape[tuple]"),
    row(np.ndarray.transpose, ANY, shapes=[((2, 3),)]),
    row(np.ndarray.transpose, ANY, 2, 0, 1, shapes=[((2, 3, 4),)], none=(1, 2, 3), label="ndarray.transpose[axes]"),
    row(np.ndarray.transpose, ANY, (1, 0), shapes=[((2, 3),)], none=(1,), label="ndarray.transpose[tuple]"),
    row(np.ndarray.dot, ANY, ANY, shapes=[((2, 3), (3,)), ((2, 3), (3, 4))]),
    row(np.ndarray.ravel, ANY, shapes=[((2, 3),)]),
    row(np.ndarray.ravel, ANY, "F", shapes=[((2, 3),)], none=(1,), label="ndarray.ravel[F]"),
    row(np.ndarray.reshape, ANY, 3, 2, shapes=[((2, 3),)], kw={"order": "F"}, none=(1, 2),
        label="ndarray.reshape[order=F]"),
    row(np.ndarray.squeeze, ANY, shapes=[((2, 1, 3),)]),
    row(np.ndarray.astype, ANY, np.float64, shapes=[((2, 3),)], none=(1,)),
    row(np.ndarray.astype, ANY, np.complex128, shapes=[((2, 3),)], none=(1,), label="ndarray.astype[complex]"),
    row(np.ndarray.astype, ANY, np.int64, shapes=[((2, 3),)], none=(0, 1), label="ndarray.astype[int]"),
    row(np.ndarray.copy, ANY, shapes=[((2, 3),)]),
    row(np.ndarray.__copy__, ANY, shapes=[((2, 3),)]),
    row(np.ndarray.__deepcopy__, ANY, {}, shapes=[((2, 3),)], none=(1,)),
    row(np.ndarray.view, ANY, shapes=[((2, 3),)]),
]
