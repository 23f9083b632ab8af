"""`hessian` of several arguments (zygotepy/api_blocks.py), and of arrays a rule builds from dual numbers: where an
array is made from one argument and another's value is stored into it, the columns are retried with every picked
leaf a dual number (zero tangents but the column's own), so the array holds a tangent; checked against central
finite differences of the gradient, with every optimisation on and off. Both were refused before."""
import numpy as np

from zygotepy import gradient, hessian

V = np.array([[0.5, -1.0], [2.0, 0.3]])
P = np.random.default_rng(0).normal(size=(4, 2))


def copy_then_store(V, lam):
    W = V.copy()  # made from V; lam's column stores a value carrying lam's tangent into it
    W[1] = V[1] * lam
    return np.sum(W ** 3) + lam * np.sum(V)


def _by_differences(f, args, i, j, h=1e-6):
    """d/d args[j] of the gradient in args[i], central differences: shape args[i].shape + args[j].shape."""
    x = np.asarray(args[j], dtype=float)
    cols = []
    for k in range(x.size):
        e = np.zeros(x.size)
        e[k] = h
        e = e.reshape(x.shape) if x.shape else float(e[0])
        up = list(args)
        down = list(args)
        up[j], down[j] = args[j] + e, args[j] - e
        cols.append((np.asarray(gradient(f, *up)[i]) - np.asarray(gradient(f, *down)[i])) / (2 * h))
    return np.stack(cols, axis=-1).reshape(np.shape(args[i]) + x.shape)


def test_hessian_of_two_arguments_one_stored_into_a_copy_of_the_other(mode):
    args = (V, 0.7)
    H = hessian(copy_then_store, *args)
    for i in range(2):
        for j in range(2):
            assert np.allclose(H[i][j], _by_differences(copy_then_store, args, i, j), atol=1e-5), (i, j)


def column_stack_of_a_dual_column(P):
    A = np.column_stack([P[:, 0], np.ones(P.shape[0])])  # (a dual column beside a constant one)
    return np.sum(A ** 3) + np.sum(np.column_stack([P[:, 1] * P[:, 0], P]) ** 2)


def test_hessian_through_column_stack(mode):
    got = hessian(column_stack_of_a_dual_column, P)
    assert np.allclose(got, _by_differences(column_stack_of_a_dual_column, (P,), 0, 0), atol=1e-5)


FACES = np.array([[0, 1], [1, 3]])


def crossed_faces(V, F):
    return np.sum(np.cross(V[F[:, 0]], V[F[:, 1]]) ** 2)


def many_sincs(V, F):
    return np.sum(np.sinc(V[F] * np.linspace(0.5, 1.5, F.size)) ** 2)  # (70 outputs: no tangent by pullbacks)


def test_hessian_beside_an_index_array_argument(mode):
    """An int array passed beside the point (the faces of a mesh) has no blocks (None); np.cross's back on dual
    numbers, and the retry by reverse-over-reverse (np.sinc of 70 entries), were refused with it there."""
    V = np.random.default_rng(0).normal(size=(4, 3))
    H = hessian(crossed_faces, V, FACES)
    assert H[0][1] is None and H[1][0] is None and H[1][1] is None
    assert np.allclose(H[0][0], _by_differences(crossed_faces, (V, FACES), 0, 0), atol=1e-5)
    v, idx = np.array([0.3, 0.8, 1.9]), np.arange(70) % 3
    H = hessian(many_sincs, v, idx)
    assert H[1][1] is None and np.allclose(H[0][0], _by_differences(many_sincs, (v, idx), 0, 0), atol=1e-5)
