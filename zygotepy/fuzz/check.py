"""Check one generated program: gradient and pullback (back called twice) against central finite differences in
float64 at two steps, the arguments left as one plain call leaves them, and, for a share, second derivatives
(`hessian`, nested `gradient`) and the same program on array-api-strict, JAX and torch arrays.

Outcomes: `pass`, `clear_error` (a ZygoteError naming the program's file and a line), `skipped` (the two
finite-difference steps disagree: not smooth there), `invalid` (the program itself fails or overflows when run
plainly: a generator fault, never the library's), and the bugs in `BUGS`.
"""
import copy
import linecache
import math
import re
import signal
import time
import traceback

import numpy as np

import zygotepy  # (its entry points read at each call: a test replaces zygotepy.gradient with a broken one)

from ..backends import namespace
from ..errors import ZygoteError

BUGS = ("wrong", "structure", "crash", "changed_argument", "false_refusal", "hang")
OUTCOMES = ("pass", "clear_error", "skipped", "invalid") + BUGS
STEPS = (1e-5, 1e-6)   # relative finite-difference steps; they must agree for the point to count as smooth
RTOL = 1e-5            # gradient vs finite differences: |g - fd| <= RTOL * (1 + |fd|)
TIMEOUT_S = [10]
REFUSAL = re.compile(r"argument.{0,80}in place|in place.{0,80}argument", re.I | re.S)  # says an argument is updated


class Timeout(BaseException):
    """Raised by the alarm: a BaseException, so that no `except Exception` in the library swallows it."""


class Result(dict):
    """outcome, stage, message (and detail): a dict, so it pickles and goes into the JSON report as it is."""


def _alarm(signum, frame):
    raise Timeout(f"no result within {TIMEOUT_S[0]} s")


def load(src, filename, name="program"):
    """Compile `src` under `filename`, registered in linecache so that zygotepy can read its source."""
    linecache.cache[filename] = (len(src), None, src.splitlines(True), filename)
    namespace = {"__name__": "fuzzprog"}
    exec(compile(src, filename, "exec"), namespace)
    return namespace[name]


def _message(e):
    return "".join(traceback.format_exception_only(type(e), e)) + "\n".join(getattr(e, "__notes__", []))


def names_file_and_line(e, filename):
    text = _message(e)
    return filename in text and re.search(re.escape(filename) + r"(:\d+|, line \d+|\", line \d+)", text) is not None


def _classify_error(e, prog, stage):
    msg = _message(e)
    if isinstance(e, Timeout):
        return Result(outcome="hang", stage=stage, message=msg)
    if isinstance(e, ZygoteError):
        # on torch and array-API arrays a helper's `p1 *= 0.5` on an array it is given (`np.mean(x)`, a 0-d array)
        # is a real update in place, as it is not on NumPy's scalars
        mutates = prog.mutates_any or stage.startswith("foreign") and "h_rebind(" in prog.src
        if REFUSAL.search(msg) and not mutates:
            return Result(outcome="false_refusal", stage=stage, message=msg)
        named = re.search(r"updating '(\w+)' in place", msg)
        if named and never_updated(prog.src, named.group(1)):
            return Result(outcome="false_refusal", stage=stage, message=msg)
        if names_file_and_line(e, prog.filename):
            return Result(outcome="clear_error", stage=stage, message=msg,
                          in_place_refusal="in place" in msg and not prog.mutates_arg)
        return Result(outcome="crash", stage=stage, message="ZygoteError naming no file and line: " + msg)
    return Result(outcome="crash", stage=stage, message=msg, trace=traceback.format_exc(limit=-6))


def never_updated(src, name):
    """Is `name` bound once in `program` and never updated (no augmented assignment, item or attribute store,
    method call or helper call on it)? Then a refusal saying it is updated in place is false."""
    import ast
    tree = next(n for n in ast.parse(src).body if isinstance(n, ast.FunctionDef) and n.name == "program")
    binds = sum(a.arg == name for a in tree.args.args)
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == name and isinstance(node.ctx, ast.Store):
            binds += 1
        elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name) and node.target.id == name:
            return False
        elif isinstance(node, (ast.Subscript, ast.Attribute)) and isinstance(node.ctx, ast.Store) and \
                isinstance(node.value, ast.Name) and node.value.id == name:
            return False
        elif isinstance(node, ast.Call) and any(isinstance(a, ast.Name) and a.id == name for a in (
                *node.args, *(k.value for k in node.keywords))) and isinstance(node.func, ast.Name) and \
                node.func.id in ("h_none", "h_setlist", "h_inplace", "h_fill", "h_put"):  # (h_fill's `out=`)
            return False
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and \
                isinstance(node.func.value, ast.Name) and node.func.value.id == name:
            return False
        elif isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id == name:
            return False  # an alias: it may be updated through the other name
    return binds <= 1


# -- values ----------------------------------------------------------------------------------------------------------
def make_args(prog):
    return tuple(np.array(v, dtype=np.float64) if kind == "array" else v for _, kind, v in prog.args)


def _plain(fn, args):
    """(result, arguments as the call leaves them) of one plain call on a copy."""
    args = copy.deepcopy(args)
    return fn(*args), args


def _real_scalar(y):
    return isinstance(y, (float, int, np.floating, np.integer)) and not isinstance(y, bool) or \
        isinstance(y, np.ndarray) and y.shape == () and y.dtype.kind in "fi"


def finite_differences(fn, args, prog, steps=STEPS):
    """For each step: {argument index: vector of partial derivatives (complex: d/dre, d/dim)}, None for data ints;
    NaN (skipped) where the point is a kink."""
    outs = [{} for _ in steps]
    for i, (name, kind, v) in enumerate(prog.args):
        if kind == "int_data":
            for out in outs:
                out[i] = None
            continue
        base = np.array([v.real, v.imag]) if kind == "complex" else np.atleast_1d(np.asarray(v, dtype=np.float64))
        parts = [[] for _ in steps]
        for j in range(base.size):

            def at(delta):
                moved = base.copy()
                moved[j] += delta
                val = complex(moved[0], moved[1]) if kind == "complex" else \
                    moved.copy() if kind == "array" else float(moved[0])
                call = list(copy.deepcopy(args))
                call[i] = val
                return float(fn(*call))
            mid, gaps = at(0.0), []
            for k, step in enumerate(steps):
                h = step * (1.0 + abs(base[j]))
                up, down = at(h), at(-h)
                right, left = (up - mid) / h, (mid - down) / h
                # a kink at the point (a branch's test exactly tied, as ints in float roles make it: `a * m * 0.5`
                # against `a` at m = 2): central differences average two slopes, neither of which is the gradient
                kink = abs(right - left) > 1e-3 * (1 + abs(right) + abs(left))
                parts[k].append(float("nan") if kink else (up - down) / (2 * h))
                gaps.append((abs(right - left), abs(right) + abs(left)))
            # a smaller kink (`sorted([tanh(0.2 n), tanh(0.1 w), ...])[1]` tied at n = 1, w = 2, its share damped by
            # the factors after it): the gap between the one-sided slopes stays as the step shrinks, where on a
            # smooth function it shrinks with the step
            (wide, _), (narrow, size) = gaps[0], gaps[-1]
            if narrow > 0.2 * RTOL * (1 + size) and narrow > 0.5 * wide:
                for part in parts:
                    part[-1] = float("nan")
        for out, part in zip(outs, parts):
            out[i] = np.array(part)
    return outs


def gradient_vector(kind, g, shape=None):
    """(vector or None, problem) for one argument's gradient: None for a None gradient."""
    if g is None:
        return None, None
    if kind == "int_data":
        return None, f"gradient {g!r} for an int used only as data (expected None)"
    if kind == "array":
        if not isinstance(g, np.ndarray) or g.shape != shape or g.dtype != np.float64:
            return None, f"gradient {type(g).__name__} {getattr(g, 'shape', '')} {getattr(g, 'dtype', '')} " \
                         f"for a float64 array of shape {shape}"
        return g.ravel().astype(float), None
    if kind == "complex":
        if not isinstance(g, (complex, float, int, np.number)) or isinstance(g, bool):
            return None, f"gradient of type {type(g).__name__} for a complex number"
        return np.array([complex(g).real, complex(g).imag]), None
    if not _real_scalar(g):
        return None, f"gradient of type {type(g).__name__} {getattr(g, 'shape', '')} for a real number"
    return np.array([float(g)]), None


def compare(grads, fd, prog, what):
    """None, or a Result for the first argument whose gradient is wrong or badly formed."""
    if not isinstance(grads, tuple) or len(grads) != len(prog.args):
        return Result(outcome="structure", stage=what, message=f"{what} gave {grads!r} for {len(prog.args)} arguments")
    for i, ((name, kind, v), g) in enumerate(zip(prog.args, grads)):
        vec, problem = gradient_vector(kind, g, np.shape(v))
        if problem:
            return Result(outcome="structure", stage=what, message=f"argument {name}: {problem}")
        want = fd[i]
        if want is None:
            continue
        if vec is None:
            if np.max(np.abs(want)) > 1e-7:
                return Result(outcome="structure", stage=what,
                              message=f"argument {name}: gradient None, finite differences {want.tolist()}")
            continue
        if not np.all(np.abs(vec - want) <= RTOL * (1 + np.abs(want))):
            return Result(outcome="wrong", stage=what, message=f"argument {name}: gradient {vec.tolist()}, finite "
                                                               f"differences {want.tolist()}")
    return None


def same_values(a, b):
    if isinstance(a, np.ndarray) or isinstance(b, np.ndarray):
        return isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.shape == b.shape and \
            np.allclose(a, b, rtol=1e-12, atol=1e-14)
    if isinstance(a, (list, tuple)):
        return type(a) is type(b) and len(a) == len(b) and all(same_values(x, y) for x, y in zip(a, b))
    return a == b or abs(complex(a) - complex(b)) <= 1e-12 * (1 + abs(complex(a)))


# -- the check -------------------------------------------------------------------------------------------------------
def check_program(prog, timeout=None):
    """Result for one program (with the alarm set, so that a hang is reported rather than waited for)."""
    seconds = TIMEOUT_S[0] if timeout is None else timeout
    old = signal.signal(signal.SIGALRM, _alarm)
    signal.alarm(seconds)
    t0 = time.perf_counter()
    try:
        res = _check(prog)
    except Timeout as e:
        res = Result(outcome="hang", stage="?", message=str(e))
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, old)
    res["time"] = time.perf_counter() - t0
    return res


def _check(prog):
    args = make_args(prog)
    try:
        fn = load(prog.src, prog.filename)
        fd_fn = load(prog.fd_src(), prog.filename + " fd") if "[n]" in prog.src or "range(n)" in prog.src else fn
        y0, after = _plain(fn, args)
        fds = finite_differences(fd_fn, args, prog)
    except Timeout:
        raise
    except Exception as e:
        return Result(outcome="invalid", stage="plain", message=_message(e))
    if not _real_scalar(y0) or not math.isfinite(float(y0)):
        return Result(outcome="invalid", stage="plain", message=f"result {y0!r}")
    fd = fds[0]
    for i in fd:
        if fd[i] is not None and (not np.all(np.isfinite(fd[i])) or
                                  not np.all(np.abs(fd[i] - fds[1][i]) <= 1e-6 * (1 + np.abs(fd[i])))):
            return Result(outcome="skipped", stage="fd", message=f"not smooth at the point (a kink where NaN): "
                                                                f"{fd[i]} vs {fds[1][i]}")
        if fd[i] is not None and np.max(np.abs(fd[i])) > 1e8:
            return Result(outcome="invalid", stage="fd", message="derivatives too large to compare")

    for stage in ("gradient", "pullback"):
        mine = copy.deepcopy(args)
        try:
            if stage == "gradient":
                grads = zygotepy.gradient(fn, *mine)
            else:
                y, back = zygotepy.pullback(fn, *mine)
                g1 = back(1.0)
                g2 = back(1.0)
        except (Timeout, ZygoteError, Exception) as e:
            if isinstance(e, Timeout):
                raise
            return _classify_error(e, prog, stage)
        if stage == "pullback":
            if not _real_scalar(y) or abs(float(y) - float(y0)) > 1e-10 * (1 + abs(float(y0))):
                return Result(outcome="wrong", stage=stage, message=f"pullback's value {y!r}, plain call {y0!r}")
            bad = compare(g1, fd, prog, "pullback") or compare(g2, fd, prog, "pullback, second call of back")
            if bad:
                return bad
        else:
            bad = compare(grads, fd, prog, stage)
            if bad:
                return bad
        for (name, _, _), a, b in zip(prog.args, mine, after):
            if not same_values(a, b):
                return Result(outcome="changed_argument", stage=stage,
                              message=f"argument {name} ends as {a!r}, a plain call leaves {b!r}")
    if prog.second and grads[0] is not None:
        res = _check_second(fn, args, prog)
        if res:
            return res
    if prog.foreign:
        res = _check_foreign(fn, args, prog, fd)
        if res:
            return res
    return Result(outcome="pass", stage="", message="")


def _check_second(fn, args, prog):
    """d2f/da2 by `hessian` and by nested `gradient`, against finite differences of zygotepy's own gradient (checked
    just before); None when they agree or that gradient is not smooth at the point."""
    a, rest = args[0], args[1:]

    def slope(t):
        g = zygotepy.gradient(fn, t, *rest)[0]
        return 0.0 if g is None else float(g)
    try:
        ests = [(slope(a + h * (1 + abs(a))) - slope(a - h * (1 + abs(a)))) / (2 * h * (1 + abs(a)))
                for h in (1e-4, 1e-5)]
    except (ZygoteError, Exception) as e:
        return _classify_error(e, prog, "second: gradient near the point")
    if abs(ests[0] - ests[1]) > 1e-4 * (1 + abs(ests[0])):
        return None
    for stage in ("hessian", "nested gradient"):
        try:
            if stage == "hessian":
                h = zygotepy.hessian(lambda t: fn(t, *rest), a)
            else:
                h = zygotepy.gradient(lambda t: zygotepy.gradient(fn, t, *rest)[0], a)[0]
        except (ZygoteError, Exception) as e:
            return _classify_error(e, prog, stage)
        if h is None and abs(ests[0]) < 1e-7:
            continue
        if h is None or np.size(h) != 1:
            return Result(outcome="structure", stage=stage, message=f"second derivative {h!r}")
        value = float(np.asarray(h).ravel()[0])
        if abs(value - ests[0]) > 1e-4 * (1 + abs(ests[0])):
            return Result(outcome="wrong", stage=stage, message=f"second derivative {value!r}, finite differences of "
                                                                f"the gradient {ests[0]!r}")
    return None


_LIBS = {}


def foreign_libraries():
    """{name: (to_library, library's top module name)} for the installed ones (imported once)."""
    if _LIBS:
        return _LIBS
    try:
        import array_api_strict as xps
        _LIBS["array_api_strict"] = (lambda v: xps.asarray(v), ("array_api_strict",))
    except ImportError:
        pass
    try:
        import jax
        jax.config.update("jax_enable_x64", True)
        import jax.numpy as jnp
        _LIBS["jax"] = (lambda v: jnp.asarray(v), ("jax", "jaxlib"))
    except ImportError:
        pass
    try:
        import torch
        _LIBS["torch"] = (lambda v: torch.tensor(v, dtype=torch.float64), ("torch",))
    except ImportError:
        pass
    _LIBS.setdefault("none", None)
    return _LIBS


def _check_foreign(fn, args, prog, fd):
    for lib, entry in foreign_libraries().items():
        if entry is None:
            continue
        convert, top = entry
        fargs = tuple(convert(v) if kind == "array" else v for (_, kind, _), v in zip(prog.args, args))
        # the program written for this library: `np` is its array namespace (np.sum of a torch tensor or an
        # array-API array would compute in NumPy, on a copy, which no user of that library writes); a function it
        # lacks (np.r_, np.dot in the array API) makes the program not run there: skipped
        lib_fn = load(prog.src, prog.filename)  # (the same text: errors name the program's own file and line)
        lib_fn.__globals__["np"] = namespace(next(a for (_, kind, _), a in zip(prog.args, fargs) if kind == "array"))
        try:
            value = float(np.asarray(lib_fn(*copy.deepcopy(fargs))))
        except Timeout:
            raise
        except Exception:
            continue  # the program itself does not run on this library's arrays (JAX's are immutable)
        if not np.isclose(value, float(np.asarray(fn(*copy.deepcopy(args)))), rtol=1e-9, atol=1e-12):
            continue  # it computes something else there (`y = x[1:]; y *= 2` copies on JAX): NumPy's differences
            # are not its derivatives
        try:
            grads = zygotepy.gradient(lib_fn, *copy.deepcopy(fargs))
        except (ZygoteError, Exception) as e:
            return _classify_error(e, prog, f"foreign {lib}")
        plain = []
        for (name, kind, _), g in zip(prog.args, grads):
            if kind == "array" and g is not None:
                if type(g).__module__.split(".")[0] not in top:
                    return Result(outcome="structure", stage=f"foreign {lib}",
                                  message=f"gradient of {name} is a {type(g).__module__}.{type(g).__name__}")
                g = np.asarray(g)
            elif g is not None and kind != "int_data":
                g = float(np.asarray(g))
            plain.append(g)
        bad = compare(tuple(plain), fd, prog, f"foreign {lib}")
        if bad:
            return bad
    return None
