"""Rows for `zygotepy/adjoints/numpy/`: products.py beyond dot/matmul/inner/outer (cross with axisa/axisb/axisc and
2-vectors), convolutions.py, linalg.py (det of singular matrices) and decompositions.py (a float ord of a vector norm
that carries a gradient; svd with hermitian=True, NumPy arrays only: test_decompositions.py), spectral.py (eigvals, cond)."""
from dataclasses import dataclass

import numpy as np
from table_base import ANY, CPLX, NZ, SPD, SYM, WELL, Kind, Seq, row

la = np.linalg
VECTOR_ORDS = [None, 2, 1, np.inf, -np.inf, 3, 0.5]
MATRIX_ORDS = ["fro", "nuc", 2, -2, 1, -1, np.inf, -np.inf]
P, NEG_P = Kind("p", 0.5, 4.0), Kind("negative p", -3.0, -0.5)  # a float ord that carries a gradient


@dataclass(frozen=True)
class WellTensor(Kind):
    """Random tensors `a` for tensorsolve (a.shape = b.shape + x.shape): well conditioned as a square matrix, the
    diagonal of its (n, n) reshape raised by n."""

    def draw(self, rng, shape, dtype=np.float64):
        n = int(round(np.prod(shape) ** 0.5))
        return np.asarray((rng.uniform(self.lo, self.hi, (n, n)) + n * np.eye(n)).reshape(shape), dtype)


@dataclass(frozen=True)
class Singular(Kind):
    """Random singular square matrices (batched): the last row a copy of the first ("copy": det 0 or a rounding error
    away) or zeros ("zero": det exactly 0, where the inverse fails)."""
    last: str = "copy"

    def draw(self, rng, shape, dtype=np.float64):
        x = rng.uniform(self.lo, self.hi, shape)
        x[..., -1, :] = x[..., 0, :] if self.last == "copy" else 0.0
        return np.asarray(x, dtype)


COPIED_ROW, ZERO_ROW = Singular("singular", -1.0, 1.0), Singular("zero row", -1.0, 1.0, last="zero")

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
    row(np.cross, ANY, ANY, shapes=[((3, 2), (2, 3)), ((3,), (4, 3))], kw={"axisa": 0}, label="np.cross[axisa=0]"),
    row(np.cross, ANY, ANY, shapes=[((2, 3), (2, 3)), ((3,), (3,))], kw={"axisc": 0}, label="np.cross[axisc=0]"),
    row(np.cross, ANY, ANY, shapes=[((4, 3), (3, 4))], kw={"axisa": 1, "axisb": 0, "axisc": 0},
        label="np.cross[axisa, axisb, axisc]"),
    row(np.cross, ANY, ANY, shapes=[((3, 4), (3, 1)), ((3, 2, 2), (3, 2, 2))], kw={"axis": 0, "axisa": 1},
        label="np.cross[axis= over axisa]"),
    row(np.cross, ANY, ANY, shapes=[((2,), (2,)), ((2, 4), (2,)), ((2,), (3,)), ((2, 4), (4, 3)), ((3, 5), (5, 2))],
        kw={"axisa": 0}, label="np.cross[2-vectors]"),
    row(np.cross, ANY, ANY, shapes=[((2,), (2,)), ((3, 2), (2,))], label="np.cross[2-vectors, default axes]"),
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
    row(la.tensorsolve, WellTensor("well tensor", -1.0, 1.0), ANY, shapes=[((2, 3, 6), (2, 3)), ((4, 2, 2), (4,))]),
    row(la.tensorsolve, WellTensor("well tensor", -1.0, 1.0), ANY, (0,), shapes=[((6, 2, 3), (2, 3), None)], none=(2,),
        label="np.linalg.tensorsolve[axes]"),
    row(la.det, WELL, shapes=[((3, 3),), ((2, 2, 2),), ((1, 1),)]),
    row(la.det, COPIED_ROW, shapes=[((3, 3),), ((2, 2),), ((2, 4, 4),)], label="np.linalg.det[singular]"),
    row(la.det, ZERO_ROW, shapes=[((3, 3),), ((2, 3, 3),), ((1, 1),)], label="np.linalg.det[zero row]"),
    row(la.slogdet, WELL, shapes=[((3, 3),), ((2, 2, 2),)]),
    row(la.slogdet, ANY, shapes=[((3, 3),), ((2, 4, 4),)], label="np.linalg.slogdet[any sign]"),
    row(la.pinv, ANY, shapes=[((4, 3),), ((3, 4),), ((3, 3),)]),
    row(la.matrix_power, WELL, 3, shapes=[((3, 3),), ((2, 2, 2),)], none=(1,)),
    row(la.matrix_power, WELL, -2, shapes=[((3, 3),)], none=(1,), label="np.linalg.matrix_power[negative]"),
    row(la.matrix_power, WELL, 0, shapes=[((2, 2),)], none=(1,), label="np.linalg.matrix_power[0]"),
    row(la.matrix_power, WELL, 1, shapes=[((2, 2),)], none=(1,), label="np.linalg.matrix_power[1]"),
    row(la.lstsq, ANY, ANY, shapes=[((5, 3), (5,)), ((5, 3), (5, 2))], kw={"rcond": None}),
    # norms
    row(la.norm, NZ, shapes=[((3,),), ((2, 3),), ((2, 3, 2),)]),
    *(row(la.norm, NZ, ord, shapes=[((4,),)], none=() if isinstance(ord, float) and np.isfinite(ord) else (1,),
          label=f"np.linalg.norm[vector ord={ord}]") for ord in VECTOR_ORDS),
    row(la.norm, NZ, P, shapes=[((4,), None), ((1,), None)], label="np.linalg.norm[float ord]"),
    row(la.norm, NZ, NEG_P, shapes=[((3,), None)], label="np.linalg.norm[negative float ord]"),
    row(la.norm, NZ, P, 1, shapes=[((2, 3), None)], none=(2,), label="np.linalg.norm[float ord, axis=1]"),
    row(la.norm, NZ, P, 0, True, shapes=[((3, 2), None)], none=(2, 3), label="np.linalg.norm[float ord, keepdims]"),
    row(la.norm, NZ, P, (-1,), shapes=[((2, 2, 3), None)], none=(2,), label="np.linalg.norm[float ord, axis=(-1,)]"),
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
    # spectra (spectral.py): complex eigenvalues of real matrices, condition numbers
    row(la.eigvals, ANY, shapes=[((2, 2),), ((3, 3),), ((4, 4),), ((2, 3, 3),)]),
    row(la.eigvals, WELL, shapes=[((3, 3),), ((1, 1),)], label="np.linalg.eigvals[well]"),
    row(la.eigvals, CPLX, shapes=[((3, 3),), ((2, 2, 2),)], label="np.linalg.eigvals[complex]"),
    row(la.cond, WELL, shapes=[((3, 3),), ((2, 3, 3),)]),
    row(la.cond, ANY, shapes=[((4, 3),), ((3, 4),)], label="np.linalg.cond[rectangular]"),
    *(row(la.cond, WELL, p, shapes=[((3, 3),), ((2, 4, 4),)], none=(1,), label=f"np.linalg.cond[p={p}]")
      for p in (2, -2, "fro", "nuc", 1, -1, np.inf, -np.inf)),
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
