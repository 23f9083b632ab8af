"""Rows for `zygotepy/adjoints/numpy/`: the ufuncs beyond the starter set (elementwise.py), the complex parts
(complex_parts.py), `x.clip` (select.py), interp.py, and the ndarray methods that run as constants (constants.py)."""
import numpy as np
from table_base import ANY, CPLX, GT1, HIGH, LOW, NZ, POS, UNIT, B, Kind, U, row

SMALL = Kind("small", -1.0, 1.0)  # exp2-like functions of differences stay well scaled

# domain of each one-argument rule, also used by the float32 and complex checks
ELEMENTWISE_DOMAINS = {
    np.exp2: ANY, np.cbrt: NZ, np.arcsinh: ANY, np.arccosh: GT1, np.arctanh: UNIT, np.deg2rad: ANY, np.radians: ANY,
    np.rad2deg: ANY, np.degrees: ANY, np.fabs: NZ, np.sinc: NZ, np.nan_to_num: ANY, np.conjugate: ANY, np.real: ANY,
}

BINARY_DOMAINS = {
    np.logaddexp: (ANY, ANY), np.logaddexp2: (ANY, ANY), np.fmax: (ANY, ANY), np.fmin: (ANY, ANY),
    np.fmod: (ANY, NZ), np.remainder: (ANY, POS), np.float_power: (POS, ANY),
}

ELEMENTWISE_ROWS = [
    *(row(op, kind, shapes=U) for op, kind in ELEMENTWISE_DOMAINS.items()),
    row(np.sinc, ANY, shapes=[((4,),)], label="np.sinc[any]"),
    row(np.nextafter, ANY, 10.0, shapes=[((4,),), (None,)], none=(1,)),  # (was None: declared non-differentiable)
    row(np.imag, ANY, shapes=U, none=(0,), label="np.imag[real]"),
    row(np.imag, CPLX, shapes=[(None,), ((2, 3),)]),
    row(np.angle, ANY, shapes=U, none=(0,), label="np.angle[real]"),
    row(np.angle, CPLX, shapes=[(None,), ((2, 3),)]),
    row(np.angle, CPLX, True, shapes=[((3,),)], none=(1,), label="np.angle[deg]"),
    row(np.conjugate, CPLX, shapes=[(None,), ((2, 3),)], label="np.conjugate[complex]"),
    row(np.real, CPLX, shapes=[(None,), ((2, 3),)], label="np.real[complex]"),
    *(row(op, a, b, shapes=B) for op, (a, b) in BINARY_DOMAINS.items()),
    row(np.float_power, ANY, 3, shapes=[((2, 3),)], label="np.float_power[int exponent]"),
    row(np.copysign, NZ, NZ, shapes=B, none=(1,)),
    row(np.heaviside, NZ, ANY, shapes=B, none=(0,)),  # (h at x == 0: tests/adjoints/numpy/test_elementwise.py)
    row(np.ldexp, ANY, 3, shapes=U, none=(1,)),
    row(np.ldexp, ANY, np.array([1, -2, 0]), shapes=[((3,),), ((2, 3),)], none=(1,), label="np.ldexp[array]"),
    row(np.ndarray.conj, ANY, shapes=[((2, 3),)]),
    row(np.ndarray.conjugate, CPLX, shapes=[((2, 3),)]),
    row(np.ndarray.clip, ANY, -0.5, 0.5, shapes=[((3, 4),)]),
    row(np.ndarray.clip, ANY, LOW, HIGH, shapes=[((3, 4), (4,), ())], label="ndarray.clip[array bounds]"),
]

# ndarray methods that run as constants (rules returning no cotangent, so that method calls find them)
CONSTANT_METHOD_ROWS = [
    row(np.ndarray.argmax, ANY, shapes=[((2, 3),)], none=(0,)),
    row(np.ndarray.argmin, ANY, 1, shapes=[((2, 3),)], none=(0, 1)),
    row(np.ndarray.argsort, ANY, shapes=[((4,),)], none=(0,)),
    row(np.ndarray.argpartition, ANY, 1, shapes=[((4,),)], none=(0, 1)),
    row(np.ndarray.nonzero, ANY, shapes=[((4,),)], none=(0,)),
    row(np.ndarray.round, ANY, shapes=[((4,),)], none=(0,)),
    row(np.ndarray.all, ANY, shapes=[((4,),)], none=(0,)),
    row(np.ndarray.any, ANY, shapes=[((4,),)], none=(0,)),
    row(np.ndarray.searchsorted, POS, 1.0, shapes=[((4,),)], none=(0, 1)),
]

INTERP_TABLE = Kind("table", -1.0, 1.0)
ELEMENTWISE_ROWS += [
    row(np.interp, Kind("inside", -1.9, 1.9), np.array([-2.0, -0.5, 0.5, 2.0]), ANY, shapes=[(None, (4,)), ((5,), (4,))],
        label="np.interp[table fp]"),
    row(np.interp, Kind("wide", -3.0, 3.0), np.array([-2.0, -0.5, 0.5, 2.0]), ANY, shapes=[((2, 6), (4,))],
        label="np.interp[outside the table]"),
]

# np.vectorize(f)(x): f called on each element through a twin zygotepy differentiates (vectorize.py)
_SQUARE_SIN = np.vectorize(lambda t: t * t + np.sin(t))
_PRODUCT = np.vectorize(lambda a, b: a * b - a)
ELEMENTWISE_ROWS += [
    row(np.vectorize.__call__, _SQUARE_SIN, ANY, shapes=[((),), ((3,),), ((2, 3),)], f=lambda v, x: v(x),
        label="np.vectorize()"),
    row(np.vectorize.__call__, _PRODUCT, ANY, ANY, shapes=[((3,), (3,)), ((2, 1), (1, 3)), ((), (2,))],
        f=lambda v, a, b: v(a, b), label="np.vectorize()[two arrays]"),
]
