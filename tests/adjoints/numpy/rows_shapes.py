"""Rows for `zygotepy/adjoints/numpy/` beyond the starter set: reshaping.py, gathering.py, diagonals.py, stacking.py
and conversions.py (shape functions, array assembly, conversions)."""
import numpy as np
from table_base import ANY, Kind, Seq, row

DISTINCT = Kind("distinct", -2.0, 2.0)
MASK = np.array([[True, False, True], [False, False, True]])
L = [(((2, 3), (2, 3)),)]

SHAPE_ROWS = [
    # moving, copying and dropping entries
    row(np.tile, ANY, 2, shapes=[((3,),), ((2, 3),), ((),)], none=(1,)),
    row(np.tile, ANY, (2, 1, 2), shapes=[((2, 3),)], none=(1,), label="np.tile[reps tuple]"),
    row(np.repeat, ANY, 2, shapes=[((3,),), ((2, 3),)], none=(1,)),
    row(np.repeat, ANY, [1, 0, 3], 1, shapes=[((2, 3),)], none=(1, 2), label="np.repeat[array, axis]"),
    row(np.ndarray.repeat, ANY, 2, shapes=[((2, 3),)], kw={"axis": 0}, none=(1,)),
    row(np.pad, ANY, 1, shapes=[((3,),), ((2, 3),)], none=(1,)),
    row(np.pad, ANY, ((1, 2), (0, 1)), shapes=[((2, 3),)], kw={"constant_values": 4.0}, none=(1,),
        label="np.pad[widths, constant_values]"),
    *(row(np.pad, ANY, 2, mode, shapes=[((3, 3),)], none=(1, 2), label=f"np.pad[{mode}]")
      for mode in ("edge", "reflect", "symmetric", "wrap")),
    row(np.delete, ANY, 1, shapes=[((4,),)], none=(1,)),
    row(np.delete, ANY, [0, 2], 1, shapes=[((2, 3),)], none=(1, 2), label="np.delete[axis]"),
    row(np.resize, ANY, (3, 3), shapes=[((2, 2),)], none=(1,)),
    row(np.ndarray.flatten, ANY, shapes=[((2, 3),)]),
    row(np.roll, ANY, 1, shapes=[((4,),), ((2, 3),)], none=(1,)),
    row(np.roll, ANY, (1, -1), (0, 1), shapes=[((2, 3),)], none=(1, 2), label="np.roll[axes]"),
    row(np.rot90, ANY, shapes=[((2, 3),)]),
    row(np.rot90, ANY, 3, (1, 2), shapes=[((2, 3, 4),)], none=(1, 2), label="np.rot90[k, axes]"),
    row(np.compress, [True, False, True], ANY, shapes=[((3,),)], none=(0,)),
    row(np.compress, [False, True], ANY, 0, shapes=[((2, 3),)], none=(0, 2), label="np.compress[axis]"),
    row(np.ndarray.compress, ANY, [True, False, True], 1, shapes=[((2, 3),)], none=(1, 2)),
    row(np.extract, MASK, ANY, shapes=[((2, 3),)], none=(0,)),
    # permutations
    row(np.moveaxis, ANY, 0, -1, shapes=[((2, 3, 4),)], none=(1, 2)),
    row(np.moveaxis, ANY, (0, 1), (2, 0), shapes=[((2, 3, 4),)], none=(1, 2), label="np.moveaxis[tuples]"),
    row(np.swapaxes, ANY, 0, 2, shapes=[((2, 3, 4),)], none=(1, 2)),
    row(np.ndarray.swapaxes, ANY, 0, 1, shapes=[((2, 3),)], none=(1, 2)),
    row(np.matrix_transpose, ANY, shapes=[((2, 3),), ((4, 2, 3),)]),
    row(np.flip, ANY, shapes=[((3,),), ((2, 3),)]),
    row(np.flip, ANY, 1, shapes=[((2, 3),)], none=(1,), label="np.flip[axis]"),
    row(np.fliplr, ANY, shapes=[((2, 3),)]), row(np.flipud, ANY, shapes=[((2, 3),)]),
    row(np.tril, ANY, shapes=[((3, 3),), ((2, 3, 4),)]), row(np.tril, ANY, -1, shapes=[((3, 4),)], none=(1,),
                                                                 label="np.tril[k]"),
    row(np.triu, ANY, shapes=[((3, 3),)]), row(np.triu, ANY, 1, shapes=[((4, 3),)], none=(1,), label="np.triu[k]"),
    row(np.broadcast_to, ANY, (2, 3), shapes=[((3,),), ((2, 1),), ((),), (None,)], none=(1,)),
    row(np.broadcast_arrays, ANY, ANY, shapes=[((3,), (2, 1)), ((), (2, 3))]),
    row(np.meshgrid, ANY, ANY, shapes=[((3,), (2,))]),
    row(np.meshgrid, ANY, ANY, ANY, shapes=[((3,), (2,), (4,))], kw={"indexing": "ij"}, label="np.meshgrid[ij]"),
    row(np.meshgrid, ANY, ANY, shapes=[((3,), (2,))], kw={"sparse": True}, label="np.meshgrid[sparse]"),
    # sorting and taking
    row(np.sort, DISTINCT, shapes=[((5,),), ((2, 3),)]),
    row(np.sort, DISTINCT, 0, shapes=[((3, 2),)], none=(1,), label="np.sort[axis=0]"),
    row(np.sort, DISTINCT, None, shapes=[((2, 3),)], none=(1,), label="np.sort[axis=None]"),
    row(np.take, ANY, [0, 2, 2, -1], shapes=[((4,),), ((2, 3),)], none=(1,)),
    row(np.take, ANY, np.array([[1, 0], [1, 1]]), 1, shapes=[((2, 3),)], none=(1, 2), label="np.take[axis]"),
    row(np.take, ANY, [3, -4], shapes=[((3,),)], kw={"mode": "wrap"}, none=(1,), label="np.take[wrap]"),
    row(np.ndarray.take, ANY, [1, 1], shapes=[((3,),)], none=(1,)),
    row(np.take_along_axis, ANY, np.array([[0, 0], [2, 1]]), 1, shapes=[((2, 3),)], none=(1, 2)),
    row(np.take_along_axis, ANY, np.array([0, 3, 3]), None, shapes=[((2, 2),)], none=(1, 2),
        label="np.take_along_axis[axis=None]"),
    # diagonals
    row(np.diagonal, ANY, shapes=[((3, 3),), ((2, 4),), ((2, 3, 3),)]),
    row(np.diagonal, ANY, 1, 0, 2, shapes=[((3, 2, 4),)], none=(1, 2, 3), label="np.diagonal[offset, axes]"),
    row(np.ndarray.diagonal, ANY, shapes=[((3, 4),)]),
    row(np.diag, ANY, shapes=[((3,),), ((3, 3),), ((2, 4),)]),
    row(np.diag, ANY, -1, shapes=[((3,),), ((3, 4),)], none=(1,), label="np.diag[k]"),
    row(np.diagflat, ANY, shapes=[((2, 2),)]), row(np.diagflat, ANY, 1, shapes=[((3,),)], none=(1,),
                                                     label="np.diagflat[k]"),
    # assembling and splitting
    row(np.hstack, Seq(ANY), shapes=[(((3,), (2,)),), (((2, 3), (2, 1)),), (((), ()),)]),
    row(np.vstack, Seq(ANY), shapes=[(((3,), (3,)),), (((2, 3), (1, 3)),)]),
    row(np.dstack, Seq(ANY, tuple), shapes=[(((3,), (3,)),), (((2, 3), (2, 3)),), (((2, 3, 1), (2, 3, 2)),)]),
    row(np.column_stack, Seq(ANY), shapes=[(((3,), (3, 2)),)]),
    row(np.append, ANY, ANY, shapes=[((2, 3), (2,)), ((3,), ())]),
    row(np.append, ANY, ANY, 0, shapes=[((2, 3), (1, 3))], none=(2,), label="np.append[axis]"),
    row(np.split, ANY, 2, shapes=[((4,),), ((4, 3),)], none=(1,)),
    row(np.split, ANY, [1, 2], 1, shapes=[((2, 4),)], none=(1, 2), label="np.split[indices, axis]"),
    row(np.array_split, ANY, 3, shapes=[((5,),)], none=(1,)),
    row(np.hsplit, ANY, 2, shapes=[((2, 4),), ((4,),)], none=(1,)),
    row(np.vsplit, ANY, 2, shapes=[((4, 2),)], none=(1,)),
    row(np.dsplit, ANY, [1], shapes=[((2, 2, 3),)], none=(1,)),
    # conversions and copies
    *(row(op, ANY, shapes=[(None,), ((),), ((2, 3),)]) for op in (np.float64, np.copy, np.asanyarray,
                                                                   np.ascontiguousarray, np.asfortranarray)),
    # float32 rounding is ~8 ulps of the finite-difference step: a loose check here, an exact one in test_conversions.py
    row(np.float32, ANY, shapes=[((2, 3),)], rtol=0.25),
    row(np.complex128, ANY, shapes=[(None,), ((3,),)]),
    row(np.copy, Seq(ANY), shapes=[((None,) * 3,)], label="np.copy[list]"),
    *(row(op, ANY, shapes=[(None,), ((),), ((3,),), ((2, 3),)]) for op in (np.atleast_1d, np.atleast_2d,
                                                                          np.atleast_3d)),
    row(np.ndarray.item, ANY, shapes=[((1,),), ((1, 1),)]),
    row(np.ndarray.item, ANY, 4, shapes=[((2, 3),)], none=(1,), label="ndarray.item[flat index]"),
    row(np.ndarray.item, ANY, 1, 0, shapes=[((2, 3),)], none=(1, 2), label="ndarray.item[i, j]"),
    row(np.ndarray.item, ANY, (1, -1), shapes=[((2, 3),)], none=(1,), label="ndarray.item[(i, j)]"),
    row(np.ndarray.item, ANY, shapes=[((),)], f=lambda x: np.asarray(x).item(), label="ndarray.item[0-d]"),
    row(np.generic.item, ANY, shapes=[((),)], f=lambda x: np.float64(x).item()),
    row(np.ndarray.tolist, ANY, shapes=[((3,),), ((2, 3),)]),
]
if hasattr(np, "unstack"):
    SHAPE_ROWS += [row(np.unstack, ANY, shapes=[((3, 2),)]),
                   row(np.unstack, ANY, shapes=[((2, 3),)], kw={"axis": 1}, label="np.unstack[axis=1]")]
