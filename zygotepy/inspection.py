"""Looking inside: the generated code of a function (`show_adjoint`) and the switches of the optimisations that
rewrite it (`optimizations`)."""
import functools
import html
import textwrap
import types
from typing import Any, Callable

from .adjoints import registry
from .ast_adjoint.compile import artefact, plain_artefact
from .errors import ZygoteError
from .options import OPTIONS

__all__ = ["show_adjoint", "optimizations", "AdjointSource"]


class AdjointSource(str):
    """Generated source text: a `str` (print it, search it) that shows as the plain Python it holds where a value is
    echoed (a terminal, IPython: not an escaped one-line string), and as syntax-highlighted HTML in a notebook
    (pygments, when installed; else a plain <pre> block)."""

    def __repr__(self):
        return str(self)

    def _repr_pretty_(self, printer, cycle):
        printer.text(str(self))

    def _repr_html_(self):
        try:
            from pygments import highlight
            from pygments.formatters import HtmlFormatter
            from pygments.lexers import PythonLexer
        except ImportError:
            return f"<pre>{html.escape(str(self))}</pre>"
        formatter = HtmlFormatter(noclasses=True, nowrap=False)
        return highlight(str(self), PythonLexer(), formatter)


def show_adjoint(f: Callable[..., Any], optimized: bool = False) -> AdjointSource:
    """The forward and pullback Python source zygotepy generates for `f`, as text.

    By default the plain form the adjoint pass emits, with every optimisation off: each differentiated operation is
    `y, y_back = J(f, a, b)` in the forward and `ga, gb = y_back(dy)` in the pullback, which shows how the gradient
    is computed. `optimized=True` shows the code that actually runs (pasted-in derivatives behind type guards, loop
    copies, inlined callees), under the optimizations switched on now.

    >>> print(show_adjoint(lambda x: x * x))  # doctest: +ELLIPSIS
    def lambda_forward(x):
    ...
    """
    fn = _python_function(f)
    text = (artefact(fn) if optimized else plain_artefact(fn)).source
    body = text.split("\n", 1)[1]
    body = body.rsplit("    return ", 1)[0]
    return AdjointSource(textwrap.dedent(body).strip("\n") + "\n")


def _python_function(f):
    """The Python function whose generated code `show_adjoint` shows for `f`: a method's, a partial's, a callable
    object's `__call__`; anything else without Python code (a builtin, a ufunc, a class) is refused, saying why."""
    while isinstance(f, functools.partial):
        f = f.func
    f = getattr(f, "__func__", f)
    if isinstance(f, types.FunctionType):
        return f
    if isinstance(f, type):
        raise ZygoteError(f"show_adjoint takes a function; the class {f.__name__}'s objects are made by its "
                          f"__init__: show_adjoint({f.__name__}.__init__)")
    call = getattr(type(f), "__call__", None)
    if isinstance(call, types.FunctionType):
        return call
    raise ZygoteError(f"show_adjoint takes a Python function; {getattr(f, '__name__', type(f).__name__)} has no "
                      f"Python code: zygotepy differentiates it by its rule, which generates none")


class optimizations:
    """Switch zygotepy's optimisations, all (`optimizations(False)`) or by name (`optimizations(inline=False)`); as a
    `with` block, the previous switches come back at its end. Every optimisation must leave gradients unchanged, so
    this is a debugging aid: if a gradient changes with them off, that is a zygotepy bug worth reporting. The names
    are the fields of `zygotepy.options.Options`. Compiled code is rebuilt under the new switches.

    >>> from zygotepy import gradient, optimizations
    >>> with optimizations(False):
    ...     gradient(lambda x: x * x, 3.0)
    (6.0,)
    """

    def __init__(self, enabled: Any = None, **flags: bool):
        if enabled is not None:
            flags = {**dict.fromkeys(OPTIONS.names(), bool(enabled)), **flags}
        self.previous = OPTIONS.set(**flags)
        registry.generation[0] += 1  # every compiled adjoint is rebuilt under the new switches

    def __enter__(self):
        return OPTIONS

    def __call__(self, fn):
        """As a decorator (`@optimizations(False)`): the switches hold during each call of `fn`, not from the
        decoration on (the switch the constructor made is undone here)."""
        flags = OPTIONS.set(**self.previous)
        registry.generation[0] += 1

        @functools.wraps(fn)
        def switched(*args, **kwargs):
            with optimizations(**flags):
                return fn(*args, **kwargs)
        return switched

    def __exit__(self, *exc):
        OPTIONS.set(**self.previous)
        registry.generation[0] += 1
        return False
