"""The `reduceat` methods of `np.add`, `np.multiply`, `np.maximum` and `np.minimum` (segment sums, products and extrema,
as graph networks pool over a node's edges), and the products within segments that mutation/array_calls.py's
`np.multiply.at` shares.

`ufunc.reduceat(x, indices, axis=0, dtype=None)` as NumPy defines it: output i reduces x[indices[i]:indices[i+1]]
along `axis` (the last one runs to the end), except where indices[i] >= indices[i+1], where it is x[indices[i]] alone.
Segments may overlap (indices need not increase): the back gathers every segment's entries one after another (segment
by segment), computes each entry's share of its segment's cotangent there and adds the shares back where the entries
came from. Sums pass dy on; products the product of the segment's other entries (computed as products, never by
dividing by the result, so zeros are fine); maxima and minima give dy to the entries equal to their result, shared
evenly among ties, as np.max's rule does (a NaN result: none). `dtype=` is passed through (the cotangent keeps the
input's float type); `out=` is refused. A call in user code reaches these rules as ufunc_methods.py explains.
"""
import numpy as np

from ...backends import conj
from ..registry import adjoint
from .common import _restore, arrayed
from .ufunc_methods import _array, _keywords, _like_input

_NAMES = ("axis", "dtype", "out")


def run_products(values, runs):
    """For each entry of `values` (along axis 0), the product of the other entries of its run (the entries with the same
    `runs` label, which lie next to each other), and each entry's inclusive product from its run's start: prefix and
    suffix products scanned within runs by doubling (log2 of the longest run steps), with no division."""
    def scan(v, r):
        out, n, step = v.copy(), len(v), 1
        while step < n:
            same = (r[step:] == r[:-step]).reshape((-1,) + (1,) * (v.ndim - 1))
            if not same.any():
                break
            out[step:] = np.where(same, out[step:] * out[:-step], out[step:])
            step *= 2
        return out
    runs = np.asarray(runs)
    prefix = scan(values, runs)
    suffix = scan(values[::-1], runs[::-1])[::-1]
    before, after = np.ones_like(prefix), np.ones_like(suffix)
    starts = np.ones(len(runs), bool)
    starts[1:] = runs[1:] != runs[:-1]
    ends = np.ones(len(runs), bool)
    ends[:-1] = starts[1:]
    shape = (-1,) + (1,) * (values.ndim - 1)
    before[1:] = np.where(starts[1:].reshape(shape), 1, prefix[:-1])
    after[:-1] = np.where(ends[:-1].reshape(shape), 1, suffix[1:])
    return before * after, prefix


def segment_bounds(indices, n):
    """[start, stop) of each output of reduceat along an axis of length n."""
    starts = np.asarray(indices, dtype=np.intp).reshape(-1)
    stops = np.append(starts[1:], n).astype(np.intp)
    return starts, np.where(stops > starts, stops, starts + 1)


def _sum_share(x, y, dy, runs, first):
    return dy


def _product_share(x, y, dy, runs, first):
    return dy * conj(run_products(x, runs)[0])


def _extremum_share(x, y, dy, runs, first):
    hit = x == y
    count = np.add.reduceat(hit.astype(np.intp), first, axis=0)[runs]
    return np.where(hit, dy / np.maximum(count, 1), 0)


def _reduceat(ufunc, share):
    """`ufunc.reduceat(array, indices, axis=0, dtype=None)`: `share(x, y, dy, runs, first)` of the gathered segments
    (each entry with its segment's result and cotangent; `runs` its segment, `first` where each segment starts), added
    back along `axis`."""
    name = f"np.{ufunc.__name__}.reduceat"

    def rule(array, indices, *args, **kwargs):
        kw = _keywords(name, _NAMES, args, kwargs)
        x_arr = _array(array)
        y = ufunc.reduceat(array, indices, *args, **kwargs)
        axis = kw.get("axis", 0)

        def back(dy):
            if dy is None:
                return (None, None, *(None for _ in args))
            x = np.moveaxis(x_arr if x_arr.dtype == y.dtype else x_arr.astype(y.dtype), axis, 0)
            d = np.moveaxis(np.broadcast_to(arrayed(dy), y.shape), axis, 0)
            starts, stops = segment_bounds(indices, x.shape[0])
            lengths = stops - starts
            runs = np.repeat(np.arange(len(starts)), lengths)
            first = np.cumsum(lengths) - lengths  # (every segment holds an entry at least)
            at = np.arange(len(runs)) - first[runs] + starts[runs]
            g = np.zeros(x.shape, np.result_type(x.dtype, d.dtype, np.float64 if x.dtype.kind not in "fc" else x.dtype))
            if len(runs):
                np.add.at(g, at, share(x[at], np.moveaxis(y, axis, 0)[runs], d[runs], runs, first))
            g = _like_input(np.moveaxis(g, 0, axis), x_arr)
            return (_restore(g, array), None, *(None for _ in args))
        return y, back
    rule.__qualname__ = f"{ufunc.__name__}_reduceat_rule"
    return rule


REDUCEAT = {np.add.reduceat: _reduceat(np.add, _sum_share),
            np.multiply.reduceat: _reduceat(np.multiply, _product_share),
            np.maximum.reduceat: _reduceat(np.maximum, _extremum_share),
            np.minimum.reduceat: _reduceat(np.minimum, _extremum_share)}

for _method, _rule in REDUCEAT.items():
    adjoint(_method)(_rule)
