"""Complex numbers: the convention of docs/api.md (`gradient(lambda z: abs(z)**2, 1+2j) == (2+4j,)`), complex scalars and
arrays through arithmetic, abs, real/imag/conj/angle/exp/log, and pullbacks of complex-to-complex functions.

Every row is checked by `check_grads` against central differences over the real and imaginary parts; a few closed
forms pin the convention itself (cotangent = dL/dx + 1j dL/dy; a holomorphic w = f(z) pulls dw back to conj(f'(z)) dw).
"""
import cmath
import math

import numpy as np
import pytest

import zygotepy
from zygotepy import gradient, pullback, value_and_gradient
from zygotepy.testing import check_grads

RNG = np.random.default_rng(11)
Z = 0.7 - 0.4j
W = 0.3 + 1.1j
ZA = RNG.normal(size=4) + 1j * RNG.normal(size=4)
WA = RNG.normal(size=4) + 1j * RNG.normal(size=4)
XA = RNG.normal(size=4)
ZM = RNG.normal(size=(3, 3)) + 1j * RNG.normal(size=(3, 3))
ZV = RNG.normal(size=3) + 1j * RNG.normal(size=3)


def loop_poly(z, n):
    acc = 0j
    for k in range(n):
        acc = acc * z + (k + 1)
    return abs(acc)


def branchy(z):
    if z.real > 0:
        return (z * z).imag
    return abs(z)


# (name, function, args): real-valued functions of complex (and mixed) arguments
REAL_VALUED = [
    ("abs2", lambda z: abs(z) ** 2, (1 + 2j,)),
    ("abs", lambda z: abs(z), (Z,)),
    ("arith", lambda z, w: abs(z * w + z / w - w ** 2 + 2.0 * z - 1j), (Z, W)),
    ("complex_const", lambda x: (x * 1j + 2j * x * x).imag, (0.8,)),
    ("real_imag_attrs", lambda z: z.real * z.imag + z.real ** 2, (Z,)),
    ("conjugate_method", lambda z: (z * z.conjugate()).real, (Z,)),
    ("cmath_exp_log_sqrt", lambda z: abs(cmath.exp(z)) + cmath.log(z).imag + cmath.sqrt(z).real, (Z,)),
    ("cmath_trig", lambda z: (cmath.sin(z) * cmath.cos(z)).real + cmath.tanh(z).imag, (Z,)),
    ("cmath_phase", lambda z: cmath.phase(z), (Z,)),
    ("complex_ctor", lambda x, y: abs(complex(x, y)) ** 2, (0.3, 0.4)),
    ("loop", lambda z: loop_poly(z, 4), (Z,)),
    ("branch_then", branchy, (Z,)),
    ("branch_else", branchy, (-Z,)),
    ("np_real_imag", lambda z: np.sum(np.real(z) ** 2 + np.imag(z)), (ZA,)),
    ("np_conj", lambda z: np.sum(np.real(np.conj(z) * z * z)), (ZA,)),
    ("np_conjugate", lambda z: np.sum(np.imag(np.conjugate(z) * z ** 3)), (ZA,)),
    ("np_angle", lambda z: np.sum(np.angle(z) * np.abs(z)), (ZA,)),
    ("np_angle_deg", lambda z: np.sum(np.angle(z, deg=True)), (ZA,)),
    ("np_exp", lambda z: np.sum(np.abs(np.exp(z))), (ZA,)),
    ("np_log", lambda z: np.sum(np.imag(np.log(z)) + np.real(np.log(z))), (ZA,)),
    ("np_abs", lambda z: np.sum(np.abs(z) ** 2), (ZA,)),
    ("np_sin_sqrt", lambda z: np.sum(np.real(np.sin(z)) + np.imag(np.sqrt(z))), (ZA,)),
    ("array_attrs", lambda z: np.sum(z.real * z.imag), (ZA,)),
    ("array_conj_method", lambda z: np.sum((z.conj() * z).real), (ZA,)),
    ("mixed_real_complex", lambda z, x: np.sum(np.real(z * x) + np.abs(z - x)), (ZA, XA)),
    ("two_complex", lambda z, w: np.sum(np.abs(z * w + z / w)), (ZA, WA)),
    ("scalar_through_numpy", lambda z: np.abs(np.exp(z) * z), (Z,)),
    ("matmul_quadratic", lambda A, v: np.real(np.sum(np.conj(v) * (A @ v))), (ZM, ZV)),
    ("sum_mean", lambda z: np.abs(np.sum(z)) + np.real(np.mean(z * z)), (ZA,)),
    ("real_to_complex_to_real", lambda x: np.real(np.exp(1j * x)), (0.3,)),
    ("cmath_polar", lambda z: cmath.polar(z)[0] * math.sin(cmath.polar(z)[1]) + cmath.polar(z)[1] ** 2, (Z,)),
    ("cmath_rect", lambda r, p: (cmath.rect(r, p) * (0.3 - 2j)).real + abs(cmath.rect(r * p, p)) ** 2, (0.7, 1.1)),
    ("cmath_log_with_a_base", lambda z, w: (cmath.log(z, w) * (0.5 - 1j)).real + abs(cmath.log(z, 2.5)), (Z, Z * 2)),
    ("real_array_imag_const", lambda x: np.sum(x * x + np.imag(x)), (XA,)),
    # NumPy 2's sign(z) = z/|z| (it was declared non-differentiable: its gradient was silently None until 2026-11-27)
    *([("np_sign", lambda z: np.sum((np.sign(z) * (1 + 2j)).real * np.abs(z)), (ZA,)),
       ("sign_scalar", lambda z: (np.sign(z) * z * (0.5 - 1j)).imag, (Z,))] if complex(np.sign(1j)) == 1j else []),
]


@pytest.mark.parametrize("fn, args", [r[1:] for r in REAL_VALUED], ids=[r[0] for r in REAL_VALUED])
def test_real_valued(fn, args):
    check_grads(fn, *args)


def test_api_convention():
    assert gradient(lambda z: abs(z) ** 2, 1 + 2j) == (2 + 4j,)
    # f = Re z * Im z: df/dx = y, df/dy = x -> y + 1j x
    g, = gradient(lambda z: z.real * z.imag, 0.5 + 2j)
    assert g == pytest.approx(2.0 + 0.5j)
    g, = gradient(lambda z: np.sum(np.abs(z) ** 2), ZA)
    np.testing.assert_allclose(g, 2 * ZA)
    assert g.dtype.kind == "c"


def test_real_argument_gets_a_real_gradient():
    g, = gradient(lambda x: np.real(np.exp(1j * x)), 0.3)
    assert isinstance(g, float) and g == pytest.approx(-math.sin(0.3))
    g, = gradient(lambda x: np.sum(np.abs(x * (1 + 1j))), XA)
    assert g.dtype.kind == "f"
    np.testing.assert_allclose(g, math.sqrt(2) * np.sign(XA))


# (name, function, args): complex-valued functions (pullback with a complex cotangent)
COMPLEX_VALUED = [
    ("square", lambda z: z * z, (Z,)),
    ("poly", lambda z, w: z ** 3 - w * z + 1j, (Z, W)),
    ("cmath_exp", cmath.exp, (Z,)),
    ("conj_nonholomorphic", lambda z: z.conjugate() * z * z, (Z,)),
    ("np_exp", np.exp, (ZA,)),
    ("np_log", lambda z: np.log(z) * z, (ZA,)),
    ("np_conj", lambda z: np.conj(z) + 2 * z, (ZA,)),
    ("matmul", lambda A, v: A @ v, (ZM, ZV)),
    ("real_in_complex_out", lambda x: np.exp(1j * x) * x, (XA,)),
]


@pytest.mark.parametrize("fn, args", [r[1:] for r in COMPLEX_VALUED], ids=[r[0] for r in COMPLEX_VALUED])
def test_complex_valued_pullback(fn, args):
    check_grads(fn, *args)


def test_holomorphic_pullback_conjugates_the_derivative():
    # w = z^2: dz = conj(2 z) * dw
    _, back = pullback(lambda z: z * z, Z)
    assert back(1.0)[0] == pytest.approx((2 * Z).conjugate())
    assert back(1j)[0] == pytest.approx((2 * Z).conjugate() * 1j)
    _, back = pullback(np.exp, ZA)
    np.testing.assert_allclose(back(np.ones(4))[0], np.conj(np.exp(ZA)))


def test_value_and_gradient_of_complex_argument():
    y, (g,) = value_and_gradient(lambda z: (z * z).real, Z)
    # Re z^2 = x^2 - y^2: gradient 2x - 2y 1j
    assert y == pytest.approx((Z * Z).real)
    assert g == pytest.approx(2 * Z.real - 2j * Z.imag)


# --- forward mode on complex inputs: a tangent dz is a direction in the plane, |z| and friends are not holomorphic ------

def _along(fn, z, v, h=1e-6):
    """The derivative of fn at z along the complex direction v, by central differences."""
    return (fn(z + h * v) - fn(z - h * v)) / (2 * h)


FORWARD_COMPLEX = [
    ("abs", lambda z: abs(z)),
    ("np.abs", lambda z: np.abs(z)),
    ("abs-squared", lambda z: abs(z) ** 2),
    ("unit", lambda z: z / abs(z)),
    ("real-imag", lambda z: z.real * np.imag(z) + np.real(z)),
    ("conj-product", lambda z: z * np.conj(z) + np.exp(z)),
    ("sign", lambda z: np.sign(z) * (1 + 2j)),
    ("norm", lambda z: np.linalg.norm(np.array([z, 2.0 * z + 1j, 0.5]))),
    ("gradient-of-abs4", lambda z: gradient(lambda w: abs(w) ** 4 + (w * w).real, z)[0]),
    ("gradient-of-abs", lambda z: gradient(lambda w: abs(w) * w.real, z)[0]),
]


@pytest.mark.parametrize("fn", [r[1] for r in FORWARD_COMPLEX], ids=[r[0] for r in FORWARD_COMPLEX])
@pytest.mark.parametrize("v", [1.0, 1j, 0.3 - 0.5j], ids=["real", "imaginary", "oblique"])
def test_pushforward_of_complex_inputs_along_a_direction(fn, v):
    # (forward mode's |z| used sign(z) dz, the holomorphic guess: wrong off the real axis, silently, until 2026-11-27)
    from zygotepy import pushforward
    z = 0.7 - 0.4j
    assert complex(pushforward(fn, z)(v)) == pytest.approx(complex(_along(fn, z, v)), rel=1e-7, abs=1e-9)


def test_pushforward_of_abs_over_a_complex_array():
    from zygotepy import pushforward
    z, v = np.array([0.7 - 0.4j, -1.1 + 0.2j, 0.0 + 0.0j]), np.array([0.3 - 0.5j, 1j, 1.0])
    got = pushforward(lambda z: np.abs(z), z)(v)
    np.testing.assert_allclose(got[:2], _along(np.abs, z, v)[:2], rtol=1e-7)
    assert got[2] == 0.0  # at 0, as sign(0): the reverse rules' convention


def test_sign_of_real_numbers_stays_without_gradient():
    assert gradient(lambda x: np.sign(x) * x * x, -1.5) == (3.0,)
    assert gradient(lambda x: np.sum(np.sign(x)), np.array([1.0, -2.0])) == (None,)


_Z, _W = 0.7 + 0.4j, 0.3 - 0.5j
COMPLEX_POWERS = {  # real functions of a real x through a complex power (each checked against central differences)
    "np.power(z, w(x)).real": lambda x: np.power(_Z, _W + x).real,
    "abs(np.power([1.5, 2.0], x + 1j))": lambda x: np.sum(np.abs(np.power(np.array([1.5, 2.0]), x + 1j))),
    "np.power(-1 + 1j, x).imag": lambda x: np.power(-1 + 1j, x).imag,
    "abs(np.power([-2, 1.5] + 0j, x))": lambda x: np.sum(np.abs(np.power(np.array([-2.0, 1.5]) + 0j, x))),
    "np.float_power(-2.0, x + 1j).real": lambda x: np.float_power(-2.0, x + 1j).real,
    "abs((-2.0) ** (x + 1j))": lambda x: abs((-2.0) ** (x + 1j)),
    "abs(np.power(-2.0, x + 1j))": lambda x: np.abs(np.power(-2.0, x + 1j)),
    "abs([-1.5, 2.0] ** (x + 0.5j))": lambda x: np.sum(np.abs(np.array([-1.5, 2.0]) ** (x + 0.5j))),
}


@pytest.mark.parametrize("name", sorted(COMPLEX_POWERS))
def test_a_complex_power_in_its_exponent(name, mode):
    """np.power's exponent gradient was conjugated, and 0 where the base's real part is <= 0 (NumPy orders complex
    numbers by it); a real negative base's log was real (nan in reverse mode, 0 in forward mode)."""
    f, x = COMPLEX_POWERS[name], 0.7
    want = (f(x + 1e-6) - f(x - 1e-6)) / 2e-6
    with zygotepy.optimizations(mode):
        assert zygotepy.gradient(f, x)[0] == pytest.approx(want, rel=1e-6)
        assert zygotepy.derivative(f, x) == pytest.approx(want, rel=1e-6)


def test_forward_mode_of_complex_parts_and_moments():
    """complex(t, 0.5)'s tangent was complex(dt, 0.5) (the constant imaginary part taken as linear); np.var/np.std of
    complex entries had a complex tangent."""
    assert zygotepy.derivative(lambda t: complex(t, 0.5).imag, 0.3) == 0.0
    assert zygotepy.derivative(lambda t: (complex(t, 0.5) ** 2).real, 0.3) == pytest.approx(0.6)
    assert zygotepy.derivative(lambda t: (complex(0.5, t) ** 2).real, 0.3) == pytest.approx(-0.6)
    c = np.array([1.0, 0.5 - 0.2j, -0.3j])
    for fn in (np.var, np.std):
        f = lambda t, fn=fn: fn(np.exp(1j * t * np.array([1.0, 2.0, 3.0])) * c)
        want = (f(0.4 + 1e-6) - f(0.4 - 1e-6)) / 2e-6
        assert zygotepy.derivative(f, 0.4) == pytest.approx(want, rel=1e-6)


def test_hessian_through_the_complex_sign_of_slogdet():
    """The sign's cotangent under hessian is a dual number of a Python complex: `d[..., None, None]` could not index it."""
    C = np.array([[1.0 + 0.5j, 0.2, 0.1j], [0.3, -0.8 + 0.2j, 0.4], [0.1, 0.2j, 1.2]])

    def f(x):
        return np.linalg.slogdet(C + np.diag(np.exp(1j * x)))[0].imag
    x = np.array([0.1, -0.5, 0.9])
    fd = np.array([(zygotepy.gradient(f, x + 1e-6 * e)[0] - zygotepy.gradient(f, x - 1e-6 * e)[0]) / 2e-6
                   for e in np.eye(3)])
    np.testing.assert_allclose(zygotepy.hessian(f, x), fd, atol=1e-7)


def test_hessian_of_a_negative_base_to_a_real_power():
    """Under hessian the complex power is a dual number, which took the real branch (its log taken as 0): 0 for
    log(0.5)^2 0.5^a."""
    f = lambda a: abs((0.5 - 1.0) ** a)  # noqa: E731
    assert zygotepy.hessian(f, 0.7) == pytest.approx(math.log(0.5) ** 2 * 0.5 ** 0.7)
    g = lambda x, y: abs((x - 2.0) ** y)  # noqa: E731
    H = zygotepy.hessian(g, 0.73, 1.37)
    gy = lambda y: zygotepy.gradient(g, 0.73, y)  # noqa: E731
    assert H[1][1] == pytest.approx((gy(1.37 + 1e-5)[1] - gy(1.37 - 1e-5)[1]) / 2e-5, rel=1e-6)
    assert H[0][1] == pytest.approx((gy(1.37 + 1e-5)[0] - gy(1.37 - 1e-5)[0]) / 2e-5, rel=1e-6)


_C = np.array([1 + 1j, 2, 1j])


@pytest.mark.parametrize("f", [
    lambda x: np.abs(np.sum(np.concatenate([np.abs(np.fft.fft(x)), np.fft.fft(x)[:2]]) * np.array([1, 2, 3, 1j, 1]))),
    lambda x: np.abs(np.vdot(_C, np.abs(np.exp(1j * x) * (1 + x)))),
    lambda x: np.real(np.dot(_C, np.absolute(x + 1j))),
    lambda x: np.real(np.sum(np.outer(_C, np.abs(x * (1 + 2j))) * 1j)),
], ids=["concatenate", "vdot", "dot", "outer"])
def test_the_cotangent_of_a_complex_arrays_modulus_is_real(f, mode):
    """np.abs(z) beside a complex array in a concatenate or a product got a complex cotangent from it, which its back
    used as it was: the imaginary part leaked into z's gradient (vdot: [0.28, -1.11, 0.83] for a constant)."""
    from plain_checks import agree_at
    agree_at(f, np.array([0.3, -1.2, 0.8]))


def test_average_with_complex_weights(mode):
    """np.average's back divided by sum(w) where the cotangent needs its conjugate: wrong wherever sum(w) is not real."""
    a = np.array([0.3 + 0.1j, -1.2 + 0.4j, 0.8 - 0.3j])
    w = np.array([1.0 + 0.5j, 2.0 - 1.0j, 0.5 + 0.2j])

    def f(a, w):
        return np.abs(np.average(a, weights=w)) ** 2

    def central(k):
        out = []
        for i in range(3):
            parts = []
            for step in (1e-6, 1e-6j):
                args = [a.copy(), w.copy()]
                up, down = [v.copy() for v in args], [v.copy() for v in args]
                up[k][i] += step
                down[k][i] -= step
                parts.append((f(*up) - f(*down)) / 2e-6)
            out.append(parts[0] + 1j * parts[1])
        return np.array(out)
    da, dw = gradient(f, a, w)
    np.testing.assert_allclose(da, central(0), rtol=1e-6, atol=1e-8)
    np.testing.assert_allclose(dw, central(1), rtol=1e-6, atol=1e-8)


def test_logsumexp_of_a_complex_array(mode):
    """scipy.special.logsumexp of complex values: TypeError (np.isneginf of a complex array) in its rule's back."""
    special = pytest.importorskip("scipy.special")
    z = np.array([0.3 + 1.0j, -0.5 + 0.2j, 1.1 - 0.7j])
    (g,) = gradient(lambda v: np.real(special.logsumexp(v)), z)
    np.testing.assert_allclose(g, np.conj(np.exp(z) / np.sum(np.exp(z))), rtol=1e-12)


def _complex_central(f, z, h=1e-6):
    return (f(z + h) - f(z - h)) / (2 * h) + 1j * (f(z + 1j * h) - f(z - 1j * h)) / (2 * h)


def scaled_by_a_root_of_the_modulus(z):
    return (z * cmath.sqrt(abs(z))).imag + (cmath.exp(abs(z)) * 1j).real + (z * cmath.sqrt(1 - abs(z) ** 2)).imag \
        + (cmath.log(abs(z) + 2.0, 3.0) * z).real + (z * cmath.sqrt(np.linalg.norm(np.array([z, 0.5j])))).imag


def amplitude(a, b):
    amp = complex(math.cos(a), b * math.sin(a))
    return (amp * cmath.sqrt(abs(amp))).imag + (cmath.sin(b) * 1j * amp).real


def test_cmath_of_a_real_number_gives_it_a_real_cotangent(mode):
    """cmath's functions of a real number (abs(z), a real parameter): the imaginary part of their cotangent was
    passed back to the real input, and through abs's back into z's gradient (1.06j for 0.17 + 0.93j)."""
    z = 0.3 + 0.4j
    assert gradient(scaled_by_a_root_of_the_modulus, z)[0] == pytest.approx(
        _complex_central(scaled_by_a_root_of_the_modulus, z), rel=1e-6)
    got = gradient(amplitude, 0.7, 0.4)
    for k, args in enumerate(((0.7 + 1e-6, 0.4), (0.7, 0.4 + 1e-6))):
        down = tuple(2 * a - b for a, b in zip((0.7, 0.4), args))
        assert got[k] == pytest.approx((amplitude(*args) - amplitude(*down)) / 2e-6, rel=1e-6), k
