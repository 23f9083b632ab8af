"""The forward source transform: every call `f(*a, **k)` in a user's function becomes `__zygote_call__(f, *a, **k)`.

Why a transform at all: operators and NumPy reach the dual numbers' own methods (dunders, `__array_ufunc__`,
`__array_function__`), but `math.sin(x)` is C code that converts its argument with `float(x)`, dropping the tangent.
So calls are routed through `call`, which looks up the forward rule of the callee (`dual.FORWARD`, keyed by the
callable) when a dual number flows in. Nothing else of the function changes: operators, control flow, comprehensions,
nested functions and lambdas keep Python's semantics (nested definitions are transformed with their parent, so a
closure made inside `f` routes its calls too).

The transformed function is compiled from the user's own source node (real line numbers and filename, so tracebacks
show the user's lines), inside a factory whose locals are the function's free variables: the new code object gets
the original closure cells plus one cell holding `call`. No globals are written (nothing patches numpy, builtins or
func.__globals__). One code object is compiled per original code object; `forward_version(fn)` only builds a new
function object around it.

Library code is called as it is: zygotepy's own functions, NumPy, SciPy and the standard library. A C function with
no forward rule that receives a dual number raises `MissingTangentRule` (through `Dual.__float__`/`__array__`).

Reverse mode calls a user's function that no gradient flows through with `as_written`, which uses `call` only where a
dual number flows in: hessian runs the reverse program on duals, those calls included.
"""
import ast
import functools
import math
import operator
import sys
import types

import gast
import numpy as np


from ..adjoints import registry
from ..ast_adjoint.call_checks import installed, library
from ..ast_adjoint.dispatch import J, J_kw
from ..ast_adjoint.guards_runtime import class_of
from ..ast_adjoint.source import _FUTURE_FLAGS as FUTURE_FLAGS
from ..ast_adjoint.source import SourceUnavailable, get_source, kwdefaults_for
from ..ast_adjoint.text_checks import READERS
from ..errors import ForwardModeError, MissingTangentRule, ZygoteError
from ..runtime.context import current
from .dual import FORWARD, GIVEN, Dual, _top_tag, apply, dispatch, has_dual, strip
from .in_place import IN_PLACE
from .operators import user_operand
from .levels import PASS_THROUGH
from .texts import noted, refuse_read_back

__all__ = ["call", "forward_version"]

CALL = "__zygote_call__"
ATTR = "__zygote_attr__"
FN = "__zygote_fn__"
_CODES = {}  # original code object -> transformed code object (or the SourceUnavailable it raised)
_TRANSFORMED = set()  # transformed code objects: functions made by transformed code are already transformed


class _RouteCalls(ast.NodeTransformer):
    def __init__(self, filename, modules=frozenset()):
        self.filename = filename
        self.modules = modules  # global names bound to modules: `np.sin` is read as it is (no property there)

    def visit_ExceptHandler(self, node):
        """A handler starts by raising again an error of zygotepy's own (`call.own_errors`): a refusal is never the
        user's exception (`except Exception:` would take another path than Python's, silently)."""
        self.generic_visit(node)
        first = node.body[0] if node.body else node
        again = ast.Expr(ast.Call(ast.Attribute(ast.Name(CALL, ast.Load()), "own_errors", ast.Load()), [], []))
        node.body = [ast.copy_location(again, first), *node.body]
        return node

    def visit_Attribute(self, node):
        """`x.__class__` is the class of the value a dual number carries (`type(x)`'s answer), not `Dual`."""
        self.generic_visit(node)
        if not isinstance(node.ctx, ast.Load) or node.attr.startswith("__") and node.attr != "__class__":
            return node
        if isinstance(node.value, ast.Name) and node.value.id in self.modules:
            return node
        if node.attr != "__class__":  # `__zygote_attr__(x).name`: a property's getter runs transformed (`_Read`);
            # (the names and constants stay the text's: a lambda made here is read from the file by `gradient`)
            node.value = ast.copy_location(ast.Call(ast.Name(ATTR, ast.Load()), [node.value], []), node.value)
            return node
        of = ast.Attribute(ast.Name(CALL, ast.Load()), "class_of", ast.Load())
        return ast.copy_location(ast.Call(of, [node.value], []), node)

    def visit_Call(self, node):
        self.generic_visit(node)
        if isinstance(node.func, ast.Name) and node.func.id == "super":  # zero-argument super reads its frame
            return node
        routed = ast.Call(ast.Name(CALL, ast.Load()), [node.func, *node.args], node.keywords)
        return ast.copy_location(routed, node)

    def visit_Match(self, node):
        """A class pattern (`case float():`) asks `isinstance` of the subject's parts in C, which a dual number fails:
        the subject goes through `call.class_patterns`, which refuses one carrying a derivative."""
        self.generic_visit(node)
        if any(isinstance(p, ast.MatchClass) for case in node.cases for p in ast.walk(case.pattern)):
            check = ast.Attribute(ast.Name(CALL, ast.Load()), "class_patterns", ast.Load())
            where = ast.Constant(f"{self.filename}:{node.lineno}")
            node.subject = ast.copy_location(ast.Call(check, [node.subject, where], []), node.subject)
        return node


def _compile(fn):
    src = get_source(fn)
    node = gast.gast_to_ast(src.node)
    if isinstance(node, ast.Lambda):
        node = ast.copy_location(ast.FunctionDef(FN, node.args, [ast.copy_location(ast.Return(node.body),
                                                                                           node)], [], None), node)
    modules = frozenset(k for k, v in fn.__globals__.items() if type(v) is types.ModuleType)
    node = _RouteCalls(src.filename, modules).visit(node)
    node.name = FN  # not the user's name: a recursive call must reach the global (or cell), not this definition
    code = fn.__code__
    names = [*code.co_freevars, CALL, ATTR]
    binds = [ast.Assign([ast.Name(n, ast.Store())], ast.Constant(None)) for n in names]
    factory = ast.FunctionDef("__zygote_factory__", ast.arguments([], [], None, [], [], None, []),
                              [*binds, node, ast.Return(ast.Name(node.name, ast.Load()))], [], None)
    for n in [factory, *binds]:
        ast.copy_location(n, node)
    module = ast.fix_missing_locations(ast.Module([factory], []))
    # (under the `__future__` features of the user's file: `from __future__ import annotations` leaves a nested def's
    # annotations unevaluated, names imported only under `typing.TYPE_CHECKING` included)
    compiled = compile(module, src.filename, "exec", flags=code.co_flags & FUTURE_FLAGS, dont_inherit=True)
    factory_code = next(c for c in compiled.co_consts if isinstance(c, types.CodeType))
    inner = next(c for c in factory_code.co_consts if isinstance(c, types.CodeType) and c.co_name == node.name)
    if not hasattr(code, "co_qualname"):
        return inner.replace(co_name=code.co_name)
    return _requalified(inner.replace(co_name=code.co_name), inner.co_qualname, code.co_qualname)


def _requalified(code, made, user):
    """`code` and its nested code with the qualified names of the user's text: compiled inside the factory, a nested
    `def inner` is `__zygote_factory__.<locals>.__zygote_fn__.<locals>.inner`, which its function objects (and
    errors naming them) would show."""
    consts = tuple(_requalified(c, made, user) if isinstance(c, types.CodeType) else c for c in code.co_consts)
    qualname = user + code.co_qualname[len(made):] if code.co_qualname.startswith(made) else code.co_qualname
    return code.replace(co_qualname=qualname, co_consts=consts)


def _with_nested(code):
    """`code` and every code object nested in it: the functions transformed code makes (a nested `def`, a lambda, a
    comprehension) are transformed already. Read again from the file, their text is not their code (calls routed
    through `call`, `except` handlers starting with `call.own_errors()`), which `get_source` refuses as an edit."""
    yield code
    for c in code.co_consts:
        if isinstance(c, types.CodeType):
            yield from _with_nested(c)


def _transformed_code(fn):
    code = fn.__code__
    hit = _CODES.get(code)
    if hit is None:
        try:
            hit = _compile(fn)
            _TRANSFORMED.update(_with_nested(hit))
        except SourceUnavailable as e:
            hit = e
        _CODES[code] = hit
    return hit


_CALL_CELL = _ATTR_CELL = None


def forward_version(fn):
    """`fn` with its calls routed through `call` (raises SourceUnavailable when its source cannot be read)."""
    code = fn.__code__
    if code in _TRANSFORMED:
        return fn
    new = _transformed_code(fn)
    if isinstance(new, SourceUnavailable):
        raise new
    cells = dict(zip(code.co_freevars, fn.__closure__ or (), strict=True))
    cells[CALL], cells[ATTR] = _CALL_CELL, _ATTR_CELL
    g = types.FunctionType(new, fn.__globals__, fn.__name__, fn.__defaults__,
                           tuple(cells[n] for n in new.co_freevars))
    g.__kwdefaults__, g.__qualname__ = kwdefaults_for(fn.__kwdefaults__, new), fn.__qualname__
    return g


def call(fn, /, *args, **kwargs):
    """Call `fn` from transformed code: a callable with a forward rule uses it when a dual number flows in; Python
    functions (and methods, partials, callable objects) run transformed, since a dual may also arrive through their
    closures or objects; constant functions see the primals; other library callables run as they are."""
    try:
        rule = FORWARD.get(fn)
        through = fn in PASS_THROUGH
        reader = fn in READERS
        dunder = _UNARY_DUNDERS.get(fn)
    except TypeError:
        rule = through = reader = dunder = None
    if dunder is not None and args and user_operand(args[0]):
        method = getattr(type(args[0]), dunder, None)
        if type(method) is types.FunctionType:  # (`abs(v)`: Python runs `Vec.__abs__`, transformed as any method)
            return call(method, *args, **kwargs)
    if reader and current().dual_texts:
        refuse_read_back(args)
    if rule is not None and has_dual(args, kwargs):
        if type(fn) is types.BuiltinFunctionType and fn.__module__ == "_operator" and any(map(user_operand, args)):
            return fn(*args, **kwargs)  # (`operator.truediv(v, x)`: the class's own operator, run by Python's protocol)
        return apply(fn, args, kwargs)
    if through:  # (`checkpoint(f, x)`: `f(x)`)
        return call(*args, **kwargs)
    if type(fn) is functools._lru_cache_wrapper and has_dual(args, kwargs):  # (a cache hands back another call's
        return call(fn.__wrapped__, *args, **kwargs)  # value, no tangent, and would keep the dual for later calls)
    if registry.is_user_rule(fn) and has_dual(args, kwargs):  # (its source is not what the user's rule says)
        if type(fn) is types.MethodType:  # (a rule given to `Class.method`, called bound)
            fn, args = fn.__func__, (fn.__self__, *args)
        return registry.find_rule(fn)(*args, **kwargs)[0]  # (the output's tangent from the rule, or refused)
    if type(fn) is types.FunctionType and hasattr(fn, "registry") and callable(getattr(fn, "dispatch", None)) \
            and args and has_dual(args, kwargs):  # functools.singledispatch: by the value's class, not `Dual`
        return call(fn.dispatch(type(strip(args[0]))), *args, **kwargs)
    if type(fn) is types.FunctionType:
        if installed(fn) and not library(fn) and fn in registry.RULES and has_dual(args, kwargs):
            return GIVEN["without_rule"](fn, args, kwargs)  # (`scipy.linalg.expm`: its reverse rule's tangent)
        if library(fn):
            return _library(fn, args, kwargs)
        try:
            g = forward_version(fn)
        except SourceUnavailable as e:
            if e.fn is not fn:
                raise
            if has_dual(args, kwargs):
                raise MissingTangentRule(fn, e.reason or "no Python source") from None
            return fn(*args, **kwargs)
        if not installed(fn):
            return g(*args, **kwargs)
        return _library(g, args, kwargs, fn)  # an installed package's Python (SciPy's), transformed
    if type(fn) is types.MethodType and (type(fn.__func__) is types.FunctionType and not library(fn.__func__)
                                        or type(fn.__func__) is functools._lru_cache_wrapper):
        return call(fn.__func__, fn.__self__, *args, **kwargs)  # (a cached method: its function, as above)
    if has_dual(args, kwargs):
        operator_ = _number_operator(fn)
        if operator_ is not None:  # `(2.0).__mul__(x)`, `float.__mul__(a, x)`: the operator
            return call(operator_, *((fn.__self__,) if isinstance(fn.__self__, _NUMBERS) else ()), *args)
    if type(fn) is functools.partial:
        return call(fn.func, *fn.args, *args, **{**fn.keywords, **kwargs})
    if type(fn) is np.vectorize and has_dual(args, kwargs) and not kwargs and fn.signature is None \
            and not fn.excluded:  # (a user's function of numbers, mapped over the broadcast arrays: transformed)
        shape = np.broadcast_shapes(*(np.shape(strip(a)) for a in args))
        if not shape:
            return call(fn.pyfunc, *args)
        spread = [dispatch(np.broadcast_to, (a, shape), {}) for a in args]
        items = [call(fn.pyfunc, *(a[k] for a in spread)) for k in np.ndindex(shape)]
        return dispatch(np.reshape, (dispatch(np.asarray, (items,), {}), shape), {})
    if isinstance(fn, type) and has_dual(args, kwargs):
        made = _construct(fn, args, kwargs)
        if made is not _NOT_MADE:
            return made
    method = getattr(type(fn), "__call__", None)  # noqa: B004  (the Python method itself, to transform it)
    if type(method) is types.FunctionType and not isinstance(fn, type) and not library(method):
        return call(method, fn, *args, **kwargs)
    if not has_dual(args, kwargs):
        return fn(*args, **kwargs)
    if registry.is_nondifferentiable(fn):
        out = fn(*strip(args), **strip(kwargs))
        if type(out) is str:  # (`str(x)`, `repr(x)`: a number read back out of it is refused, `call`'s READERS)
            noted(out, _top_tag([*args, *kwargs.values()]))
        return out
    try:
        return fn(*args, **kwargs)
    except MissingTangentRule:
        raise
    except ForwardModeError as e:  # a dual reached C code through float() or np.asarray()
        if isinstance(getattr(fn, "__self__", None), Dual) or any(fn is f for f in IN_PLACE):
            raise  # (np.put into a plain array: in_place.py's refusal says why)
        raise MissingTangentRule(fn, str(e).split(":")[0]) from e
    except (TypeError, AttributeError) as e:  # a library's code that cannot take one (`statistics.mean`)
        if any(fn is f for f in IN_PLACE):
            raise  # (NumPy's own error: np.copyto of floats into an int array)
        raise MissingTangentRule(fn, f"it raised {type(e).__name__}: {e}") from e


_NUMBERS = (int, float, complex)
_UNARY_DUNDERS = {abs: "__abs__", operator.abs: "__abs__", operator.neg: "__neg__", operator.pos: "__pos__",
                  operator.invert: "__invert__", round: "__round__", math.floor: "__floor__", math.ceil: "__ceil__",
                  math.trunc: "__trunc__"}
"""Functions Python answers by calling a method of their first argument's class."""


def _number_operator(fn):
    """The `operator` function a number's arithmetic method (`(2.0).__mul__`, `float.__rmul__`) computes, with its
    operands in Python's order, or None. Given a dual number, the method itself answers NotImplemented."""
    name = getattr(fn, "__name__", "")
    owner = getattr(fn, "__self__", None) if type(fn) is types.BuiltinMethodType else getattr(fn, "__objclass__", None)
    if not (name.startswith("__") and (isinstance(owner, _NUMBERS) or owner in _NUMBERS)):
        return None
    reflected = name.startswith("__r") and hasattr(operator, "__" + name[3:])
    base = getattr(operator, "__" + name[3:] if reflected else name, None)
    if base is None or name in ("__repr__", "__str__", "__format__", "__hash__"):
        return None
    return (lambda a, b: base(b, a)) if reflected else base


_NOT_MADE = object()


def _construct(cls, args, kwargs):
    """`cls(*args)` of a user's class given dual numbers, as Python's `type.__call__` makes it: `__new__`, then its
    Python `__init__` transformed (`self.a = math.sin(a)` computes on the dual number); `_NOT_MADE` for a class with
    a metaclass, its own `__new__`, or an `__init__` without source (a dataclass's, which only stores its arguments:
    it runs as it is)."""
    init = cls.__dict__.get("__init__") if "__init__" in cls.__dict__ else getattr(cls, "__init__", None)
    if type(cls) is not type or cls.__new__ is not object.__new__ or type(init) is not types.FunctionType \
            or library(init):
        return _NOT_MADE
    try:
        forward_version(init)
    except SourceUnavailable:
        return _NOT_MADE
    obj = object.__new__(cls)
    call(init, obj, *args, **kwargs)
    return obj


class _Read:
    """`obj.name` in transformed code, as `_Read(obj).name`: a property of a user's class runs its getter transformed
    (the object's fields may hold dual numbers, which `math.sin(self.a)` in the getter would otherwise meet in C)."""
    __slots__ = ("__read",)  # (a private name: every other name, `x.obj` too, is the object's)

    def __init__(self, obj):
        self.__read = obj

    def __getattr__(self, name):
        obj = self.__read
        found = getattr(type(obj), name, None)
        if type(found) is property and type(found.fget) is types.FunctionType and not library(found.fget):
            return call(found.fget, obj)
        return getattr(obj, name)


def class_patterns(subject, where):
    """The subject of a `match` with class patterns, refused where it carries a derivative (see `visit_Match`)."""
    if has_dual((subject,), {}):
        raise ForwardModeError(f"{where}: a match statement's class pattern (case float(): ...) cannot test a "
                               f"value that carries a forward-mode derivative; test it with isinstance(...) in an if")
    return subject


def _library(fn, args, kwargs, named=None):
    """A library's Python function (the standard library's as it is, an installed package's transformed): where a
    dual number flows in and it fails on it (`a.flags` of an array it expected), a MissingTangentRule naming it, which
    hessian answers by reverse-over-reverse, not the library's own error from deep inside it."""
    try:
        return fn(*args, **kwargs)
    except MissingTangentRule:
        raise
    except (TypeError, AttributeError) as e:
        if not has_dual(args, kwargs):
            raise
        raise MissingTangentRule(named or fn, f"it raised {type(e).__name__}: {e}") from e


def own_errors():
    """Called first in a transformed `except` handler: an error of zygotepy's own is raised again, never handled."""
    exc = sys.exc_info()[1]
    if isinstance(exc, ZygoteError):
        raise exc


call.own_errors, call.class_patterns = own_errors, class_patterns
call.class_of = class_of  # (`x.__class__` of a dual number: its value's)
_CALL_CELL, _ATTR_CELL = types.CellType(call), types.CellType(_Read)


def as_written(fn, /, *args, **kwargs):
    """`fn(*args, **kwargs)`: reverse mode's generated code calls a Python function no gradient flows through this way
    (ast_adjoint/inactive.py). Where a dual number flows in (hessian's forward-over-reverse runs the reverse program on
    duals: the value is not used, but it is computed), `fn` runs in forward mode, which takes the `math` functions of
    duals that its own code would refuse."""
    for a in args:
        t = type(a)
        if t is not float and t is not int and t is not np.ndarray and has_dual((a,)):
            return call(fn, *args, **kwargs)
    if kwargs and has_dual((), kwargs) or getattr(fn, "__closure__", None) is not None and _captures_dual(fn):
        return call(fn, *args, **kwargs)
    return fn(*args, **kwargs)


def _captures_dual(fn):
    """Does a closure cell of `fn` hold a dual number?"""
    values = []
    for cell in getattr(fn, "__closure__", None) or ():
        try:
            values.append(cell.cell_contents)
        except ValueError:  # (an empty cell: a name its scope has not bound yet)
            pass
    return has_dual(values)


@registry.keyword_rule
@registry.adjoint(as_written)
def _as_written_rule(fn, *args, **kwargs):  # (an outer level of nesting differentiates the call itself)
    return J_kw(fn, *args, **kwargs) if kwargs else J(fn, *args)
