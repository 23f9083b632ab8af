"""Rows for `zygotepy/adjoints/numpy/`: products.py beyond dot/matmul/inner/outer, convolutions.py, linalg.py and
decompositions.py."""
import numpy as np
from table_base import ANY, NZ, SPD, SYM, WELL, Seq, row

la = np.linalg
VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 3, 0.5]
MATRIX_ORDS = ["fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]

LINALG_ROWS = [
    # contractions
    row(np.vdot, ANY, ANY, shapes=[((3,), (3,)), ((2, 3), (3, 2))]),
    row(np.tensordot, ANY, ANY, shapes=[((2, 3, 4), (3, 4, 5)), ((3, 4), (3, 4))]),
    row(np.tensordot, ANY, ANY, 1, shapes=[((2, 3), (3, 4))], none=(2,), label="np.tensordot[axes=1]"),
    row(np.tensordot, ANY, ANY, shapes=[((2, 3, 4), (4, 2))], kw={"axes": ([0, 2], [1, 0])},
        label="np.tensordot[axes pairs]"),
    row(la.tensordot, ANY, ANY, shapes=[((2, 3), (3, 2))], kw={"axes": 1}),
    *(row(np.einsum, spec, *(ANY,) * len(shapes), shapes=[shapes], none=(0,), label=f"np.einsum[{spec}]")
      for spec, shapes in [("ij,jk->ik", ((2, 3), (3, 4))), ("ij,jk", ((2, 3), (3, 4))), ("ii->", ((3, 3),)),
                           ("ii->i", ((3, 3),)), ("iij->ji", ((2, 2, 3),)), ("ij->", ((2, 3),)), ("i,i->i", ((3,), (3,))),
                           ("i,j->ij", ((2,), (3,))), ("bij,bjk->bik", ((4, 2, 3), (4, 3, 2))), ("...ij,jk", ((5, 2, 3), (3, 2))),
                           ("ij,k->ik", ((2, 3), (4,))), ("i,ij,j", ((2,), (2, 3), (3,))), ("ijk->kji", ((2, 3, 4),)),
                           ("ii,i->", ((3, 3), (3,))), ("ij,ij->", ((), (2, 3))) if False else ("i,->i", ((3,), ()))]),
    row(np.kron, ANY, ANY, shapes=[((2, 3), (2, 2)), ((3,), (2,)), ((2,), (2, 3)), ((), (2,))]),
    row(np.cross, ANY, ANY, shapes=[((3,), (3,)), ((2, 3), (3,))]),
    row(la.cross, ANY, ANY, shapes=[((2, 3), (2, 3))]),
    row(np.vecdot, ANY, ANY, shapes=[((3,), (3,)), ((2, 3), (3,))]),
    row(np.vecdot, ANY, ANY, shapes=[((3, 2), (3, 2))], kw={"axis": 0}, label="np.vecdot[axis=0]"),
    row(la.vecdot, ANY, ANY, shapes=[((2, 3), (2, 3))]),
    row(np.matvec, ANY, ANY, shapes=[((2, 3), (3,)), ((4, 2, 3), (3,)), ((2, 3), (4, 3))]),
    row(np.vecmat, ANY, ANY, shapes=[((2,), (2, 3)), ((4, 2), (2, 3))]),
    row(la.multi_dot, Seq(ANY), shapes=[(((2, 3), (3, 4), (4, 2)),), (((3,), (3, 4), (4,)),), (((2, 3), (3,)),)]),
    row(la.outer, ANY, ANY, shapes=[((3,), (2,))]), row(la.matmul, ANY, ANY, shapes=[((2, 3), (3, 4)), ((5, 2, 3), (3,))]),
    row(la.matrix_transpose, ANY, shapes=[((2, 3),)]),
    row(la.trace, ANY, shapes=[((3, 3),), ((2, 3, 4),)]),
    row(la.trace, ANY, shapes=[((3, 4),)], kw={"offset": 1}, label="np.linalg.trace[offset]"),
    row(la.diagonal, ANY, shapes=[((3, 4),), ((2, 3, 3),)]),
    row(la.diagonal, ANY, shapes=[((3, 4),)], kw={"offset": -1}, label="np.linalg.diagonal[offset]"),
    # inverses and solves
    row(la.inv, WELL, shapes=[((3, 3),), ((2, 3, 3),)]),
    row(la.solve, WELL, ANY, shapes=[((3, 3), (3,)), ((3, 3), (3, 2)), ((2, 3, 3), (2, 3, 2)), ((2, 3, 3), (3, 1))]),
    row(la.det, WELL, shapes=[((3, 3),), ((2, 2, 2),), ((1, 1),)]),
    row(la.slogdet, WELL, shapes=[((3, 3),), ((2, 2, 2),)]),
    row(la.pinv, ANY, shapes=[((4, 3),), ((3, 4),), ((3, 3),)]),
    row(la.matrix_power, WELL, 3, shapes=[((3, 3),), ((2, 2, 2),)], none=(1,)),
    row(la.matrix_power, WELL, -2, shapes=[((3, 3),)], none=(1,), label="np.linalg.matrix_power[negative]"),
    row(la.matrix_power, WELL, 0, shapes=[((2, 2),)], none=(1,), label="np.linalg.matrix_power[0]"),
    row(la.matrix_power, WELL, 1, shapes=[((2, 2),)], none=(1,), label="np.linalg.matrix_power[1]"),
    row(la.lstsq, ANY, ANY, shapes=[((5, 3), (5,)), ((5, 3), (5, 2))], kw={"rcond": None}),
    # norms
    row(la.norm, NZ, shapes=[((3,),), ((2, 3),), ((2, 3, 2),)]),
    *(row(la.norm, NZ, ord, shapes=[((4,),)], none=(1,), label=f"np.linalg.norm[vector ord={ord}]")
      for ord in VECTOR_ORDS),
    row(la.norm, NZ, 0, shapes=[((4,),)], none=(0, 1), label="np.linalg.norm[ord=0]"),
    *(row(la.norm, ANY, ord, shapes=[((3, 4),)], none=(1,), label=f"np.linalg.norm[matrix ord={ord}]")
      for ord in MATRIX_ORDS),
    row(la.norm, NZ, shapes=[((2, 3),)], kw={"axis": 1}, label="np.linalg.norm[axis=1]"),
    row(la.norm, NZ, 1, 0, True, shapes=[((2, 3),)], none=(1, 2, 3), label="np.linalg.norm[ord=1, axis=0, keepdims]"),
    row(la.norm, ANY, "nuc", (0, 2), shapes=[((3, 2, 4),)], none=(1, 2), label="np.linalg.norm[nuc, axes]"),
    row(la.norm, ANY, 2, shapes=[((2, 3, 4),)], kw={"axis": (1, 2), "keepdims": True}, none=(1,),
        label="np.linalg.norm[2, axes, keepdims]"),
    row(la.vector_norm, NZ, shapes=[((2, 3),)]),
    row(la.vector_norm, NZ, shapes=[((2, 3),)], kw={"axis": 0, "ord": 3, "keepdims": True},
        label="np.linalg.vector_norm[ord=3, axis=0]"),
    row(la.matrix_norm, ANY, shapes=[((3, 4),), ((2, 3, 3),)]),
    row(la.matrix_norm, ANY, shapes=[((2, 3, 4),)], kw={"ord": "nuc"}, label="np.linalg.matrix_norm[nuc]"),
    # decompositions
    row(la.cholesky, SPD, shapes=[((3, 3),), ((2, 3, 3),)]),
    row(la.cholesky, SPD, shapes=[((3, 3),)], kw={"upper": True}, label="np.linalg.cholesky[upper]"),
    row(la.qr, ANY, shapes=[((3, 3),), ((4, 3),), ((2, 4, 2),)]),
    row(la.qr, ANY, "r", shapes=[((4, 3),)], none=(1,), label="np.linalg.qr[r]"),
    row(la.eigh, SYM, shapes=[((3, 3),), ((2, 3, 3),)]),
    row(la.eigh, SYM, "U", shapes=[((3, 3),)], none=(1,), label="np.linalg.eigh[U]"),
    row(la.eigvalsh, SYM, shapes=[((3, 3),), ((2, 3, 3),)]),
    row(la.svd, ANY, shapes=[((3, 3),), ((2, 3, 3),)]),
    row(la.svd, ANY, False, shapes=[((4, 3),), ((3, 4),), ((2, 4, 2),)], none=(1,), label="np.linalg.svd[reduced]"),
    row(la.svd, ANY, shapes=[((4, 3),)], kw={"compute_uv": False}, label="np.linalg.svd[compute_uv=False]"),
    row(la.svdvals, ANY, shapes=[((4, 3),), ((2, 3, 3),)]),
]

LINALG_ROWS += [
    row(np.convolve, ANY, ANY, shapes=[((4,), (3,)), ((2,), (5,)), ((1,), (3,))]),
    *(row(np.convolve, ANY, ANY, mode, shapes=[((4,), (3,)), ((2,), (5,)), ((4,), (4,))], none=(2,),
          label=f"np.convolve[{mode}]") for mode in ("same", "valid")),
    row(np.correlate, ANY, ANY, shapes=[((4,), (3,)), ((2,), (5,))]),
    *(row(np.correlate, ANY, ANY, mode, shapes=[((4,), (3,)), ((2,), (5,)), ((3,), (3,))], none=(2,),
          label=f"np.correlate[{mode}]") for mode in ("same", "full")),
    row(np.polyval, ANY, ANY, shapes=[((3,), None), ((4,), (2, 3)), ((1,), (3,)), ((3,), ())]),
]
