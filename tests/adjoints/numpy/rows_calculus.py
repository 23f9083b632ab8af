"""Rows for `zygotepy/adjoints/numpy/calculus.py`: trapezoid (x= and dx=, by position and by keyword, along each
axis), gradient (scalar spacings, coordinate arrays, several axes, both edge orders, the shortest axes), ediff1d
(to_begin= / to_end=), polyfit (1-d and 2-d y, weights w=, an exact fit), polyder, polyint (m, constants k=) and
vander (N, increasing, complex input)."""
from dataclasses import dataclass

import numpy as np
from table_base import ANY, CPLX, POS, Kind, Seq, Shaped, row


@dataclass(frozen=True)
class Increasing(Kind):
    """Strictly increasing sample points from `start` along the last axis, steps uniform in [lo, hi] (np.gradient's
    coordinates, polyfit's x: distinct, so that the spacings and the Vandermonde matrix are well away from 0)."""
    start: float = -1.5

    def draw(self, rng, shape, dtype=np.float64):
        steps = rng.uniform(self.lo, self.hi, shape)
        return np.asarray(self.start + np.cumsum(steps, axis=-1), dtype)


INC = Increasing("increasing", 0.3, 1.0)


def _gradient_rows(order):
    tag = f"edge_order={order}"
    kw = {"edge_order": order}
    return [
        row(np.gradient, ANY, shapes=[((6,),), ((4, 5),), ((3, 4, 3),)], kw=kw, label=f"np.gradient[{tag}]"),
        row(np.gradient, ANY, POS, shapes=[((6,), None), ((4, 5), None)], kw=kw,
            label=f"np.gradient[one spacing for every axis, {tag}]"),
        row(np.gradient, ANY, INC, shapes=[((6,), (6,)), ((3,), (3,))], kw=kw,
            label=f"np.gradient[coordinates, {tag}]"),
        row(np.gradient, ANY, INC, POS, shapes=[((4, 5), (4,), None)], kw=kw,
            label=f"np.gradient[coordinates and a spacing, {tag}]"),
        row(np.gradient, ANY, INC, INC, shapes=[((3, 4, 5), (3,), (5,))], kw={**kw, "axis": (0, 2)},
            label=f"np.gradient[axis=(0, 2), {tag}]"),
        row(np.gradient, ANY, INC, shapes=[((3, 5, 2), (5,))], kw={**kw, "axis": -2},
            label=f"np.gradient[axis=-2, {tag}]"),
    ]


CALCULUS_ROWS = [
    # trapezoid
    row(np.trapezoid, ANY, shapes=[((5,),), ((3, 4),), ((2,),), ((2, 3, 4),)]),
    row(np.trapezoid, ANY, shapes=[((4, 3),)], kw={"axis": 0}, label="np.trapezoid[axis=0]"),
    row(np.trapezoid, ANY, ANY, shapes=[((5,), (5,)), ((2, 3, 5), (5,)), ((3, 4), (3, 4))],
        label="np.trapezoid[positional x]"),
    row(np.trapezoid, ANY, shapes=[((3, 5),)], kw={"x": Shaped(INC, (5,))}, label="np.trapezoid[x=]"),
    row(np.trapezoid, ANY, shapes=[((5, 3),)], kw={"x": Shaped(ANY, (5, 3)), "axis": 0},
        label="np.trapezoid[2-d x=, axis=0]"),
    row(np.trapezoid, ANY, shapes=[((5, 3),)], kw={"x": Shaped(INC, (5,)), "axis": -2},
        label="np.trapezoid[1-d x= along axis -2]"),
    row(np.trapezoid, ANY, shapes=[((3, 5),)], kw={"dx": POS}, label="np.trapezoid[dx=]"),
    row(np.trapezoid, ANY, None, POS, 0, shapes=[((4, 3), None)], none=(1, 3),
        label="np.trapezoid[positional dx, axis]"),
    row(np.trapezoid, ANY, None, POS, shapes=[((3, 5), (3, 4))], none=(1,), label="np.trapezoid[array dx]"),
    row(np.trapezoid, CPLX, ANY, shapes=[((5,), (5,))], label="np.trapezoid[complex y]"),
    row(np.trapezoid, Seq(ANY), shapes=[((None,) * 4,)], label="np.trapezoid[list]"),
    # gradient
    *_gradient_rows(1), *_gradient_rows(2),
    row(np.gradient, ANY, INC, shapes=[((2,), (2,))], label="np.gradient[two points]"),
    row(np.gradient, ANY, 2, shapes=[((5,),)], none=(1,), label="np.gradient[integer spacing]"),
    row(np.gradient, ANY, np.arange(5) * 0.5, shapes=[((5,),)], label="np.gradient[uniform constant coordinates]"),
    row(np.gradient, CPLX, INC, shapes=[((5,), (5,))], label="np.gradient[complex f]"),
    row(np.gradient, Seq(ANY), shapes=[((None,) * 4,)], label="np.gradient[list]"),
    # unwrap: steps of up to 6 between neighbours, so it adds multiples of 2 pi (piecewise constant)
    row(np.unwrap, Kind("wide", -3.0, 3.0), shapes=[((6,),), ((2, 4),)], label="unwrap"),
    # ediff1d
    row(np.ediff1d, ANY, shapes=[((5,),), ((2, 3),), ((1,),)]),
    row(np.ediff1d, ANY, shapes=[((5,),)], kw={"to_begin": Shaped(ANY, (2,)), "to_end": ANY},
        label="np.ediff1d[to_begin=, to_end=]"),
    row(np.ediff1d, ANY, ANY, ANY, shapes=[((4,), (3,), None), ((2, 2), (), (2, 1))],
        label="np.ediff1d[positional to_end, to_begin]"),
    row(np.ediff1d, ANY, shapes=[((1,),)], kw={"to_end": Shaped(ANY, (2,))}, label="np.ediff1d[one entry, to_end=]"),
    # polynomials
    row(np.polyfit, INC, ANY, 2, shapes=[((7,), (7,)), ((7,), (7, 3)), ((3,), (3,))], none=(2,)),
    row(np.polyfit, INC, ANY, 1, shapes=[((6,), (6,)), ((6,), (6, 2))], kw={"w": Shaped(POS, (6,))}, none=(2,),
        label="np.polyfit[w=]"),
    row(np.polyfit, INC, ANY, 3, None, False, POS, shapes=[((8,), (8,), (8,))], none=(2, 3, 4),
        label="np.polyfit[positional w]"),
    row(np.polyfit, Seq(ANY), Seq(ANY), 1, shapes=[((None,) * 4, (None,) * 4)], none=(2,), label="np.polyfit[lists]"),
    row(np.polyder, ANY, shapes=[((5,),), ((1,),), ((2,),)]),
    row(np.polyder, ANY, 2, shapes=[((5,),), ((2,),)], none=(1,), label="np.polyder[m=2]"),
    row(np.polyder, CPLX, shapes=[((4,),)], kw={"m": 3}, label="np.polyder[complex, m=]"),
    row(np.polyint, ANY, shapes=[((4,),), ((1,),)]),
    row(np.polyint, ANY, 3, ANY, shapes=[((4,), (3,))], none=(1,), label="np.polyint[m=3, constants]"),
    row(np.polyint, ANY, shapes=[((4,),)], kw={"m": 2, "k": ANY}, label="np.polyint[one constant k= for m=2]"),
    row(np.polyint, ANY, shapes=[((3,),)], kw={"m": 2, "k": Shaped(ANY, (3,))}, label="np.polyint[k= beyond m]"),
    row(np.polyint, ANY, 0, shapes=[((3,),)], none=(1,), label="np.polyint[m=0]"),
    row(np.vander, ANY, shapes=[((4,),), ((1,),)]),
    row(np.vander, ANY, 6, True, shapes=[((4,),)], none=(1, 2), label="np.vander[N, increasing]"),
    row(np.vander, ANY, shapes=[((3,),)], kw={"N": 2}, label="np.vander[N=]"),
    row(np.vander, CPLX, shapes=[((3,),)], label="np.vander[complex]"),
    row(np.vander, ANY, 0, shapes=[((3,),)], none=(1,), label="np.vander[N=0]"),
]
