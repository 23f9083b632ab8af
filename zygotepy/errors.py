"""The library's errors. Every error derives from ZygoteError, so `except ZygoteError` catches them all."""
import sys


def where(filename, lineno):
    """`file:line` of the user's code, as an error names it; a notebook cell's code also by its cell, as IPython's own
    tracebacks do (`Cell In[3], line 2`), since the cell's file name (`/tmp/ipykernel_81/2154.py`) means nothing to
    the user."""
    cell = _cell(filename)
    return f"{filename}:{lineno}" if cell is None else f"Cell {cell}, line {lineno} ({filename}:{lineno})"


def where_in_words(filename, lineno):
    """`file, line N` (as Python's tracebacks say it), a notebook cell's as `Cell In[3], line N (file)`."""
    cell = _cell(filename)
    return f"{filename}, line {lineno}" if cell is None else f"Cell {cell}, line {lineno} ({filename})"


def _cell(filename):
    ipython = sys.modules.get("IPython")
    try:
        shell = ipython.get_ipython() if ipython is not None else None
        count = shell.compile._filename_map.get(filename) if shell is not None else None
    except Exception:  # noqa: BLE001 - an IPython without the map: the file name alone
        return None
    return None if count is None else f"In[{count}]"


class ZygoteError(Exception):
    """Base class of every error zygotepy raises."""


class UnsupportedSyntax(ZygoteError):
    """A Python construct the transform does not handle, reported before anything runs."""

    def __init__(self, construct, filename, lineno, hint=""):
        self.construct, self.filename, self.lineno = construct, filename, lineno
        msg = f"{where(filename, lineno)}: zygotepy cannot differentiate {construct}"
        super().__init__(msg + (f" ({hint})" if hint else ""))


class MissingAdjoint(ZygoteError):
    """A differentiable value flows into a callable that has neither a rule nor Python source."""

    def __init__(self, callee, reason="", where=""):
        self.callee = callee
        name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None)
        module = getattr(callee, "__module__", None)
        full = f"{module}.{name}" if module and module != "builtins" and name else name or repr(callee)
        lines = [f"{where + ': ' if where else ''}no adjoint rule for {full}" + (f" ({reason})" if reason else "")]
        spelled = name if module == "__main__" and name else full  # (a script's function: named without __main__)
        if not all(part.isidentifier() for part in spelled.split(".")):
            # a lambda, a function made inside another (`make.<locals>.f`), an object's repr: no expression names it
            lines.append(f"(`fn` below stands for the object itself, {full}, bound to a name you can write)")
            spelled = "fn"
        lines += [
            "A differentiable value flows into it, and zygotepy has no rule and cannot read its Python source.",
            "Add a rule with @adjoint, for example:",
            "",
            "    from zygotepy import adjoint",
            f"    @adjoint({spelled})",
            "    def _(*args):",
            f"        y = {spelled}(*args)",
            "        def back(dy):",
            "            return (...,)  # one cotangent per positional argument, None for none",
            "        return y, back",
        ]
        super().__init__("\n".join(lines))


class SourceUnavailable(MissingAdjoint):
    """A callable has no Python source zygotepy can read (builtin, exec'd code, dataclass ``__init__``, a function
    typed at the interactive prompt or read from stdin, ...).

    A `MissingAdjoint`: raised where a value that may carry a gradient flows into such a function (an int counts:
    arithmetic on it is differentiated as on a real number), so `except MissingAdjoint` sees it. Its message says how
    to go on (a file or notebook cell, `register_source`, a rule), not MissingAdjoint's `@adjoint` skeleton, which
    cannot name a function that lives in ``__main__`` of a prompt or is a lambda."""

    def __init__(self, fn, reason="", where=""):
        self.fn, self.callee, self.reason = fn, fn, reason
        name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
        short = getattr(fn, "__name__", "fn")
        short = short if short.isidentifier() else "fn"
        ZygoteError.__init__(
            self,
            f"{where + ': ' if where else ''}no Python source for {name}"
            + (f" ({reason})" if reason else "")
            + ": zygotepy differentiates a Python function by reading its source, and a function typed at the "
            "interactive prompt, read from stdin (`python -`, `python -c`) or made by exec has none. Define it in a "
            f"file (a module or script) or a notebook cell, or hand its text over with "
            f"zygotepy.register_source({short}, source_text); or give it a rule with @adjoint"
        )


class RecursionTooDeep(ZygoteError, RecursionError):
    """Differentiating a recursion ran past Python's recursion limit. Each level of a differentiated recursion takes
    about two Python frames where the plain call takes one, so the limit that lets the function itself run may not let
    its gradient run. Raised by the entry point, once the stack has unwound, naming the user's function and line; still
    a RecursionError, for code that catches that."""

    def __init__(self, function, filename, lineno, limit):
        self.function, self.filename, self.lineno = function, filename, lineno
        super().__init__(
            f"{filename}:{lineno}: differentiating {function} recursed deeper than Python's recursion limit ({limit}) "
            f"allows: each level of a recursion under differentiation takes about two Python frames (one when run "
            f"plainly), so a gradient reaches about half the depth the function itself does; raise the limit with "
            f"sys.setrecursionlimit (for example sys.setrecursionlimit({4 * limit})) for deeper recursion")


class ForwardModeError(ZygoteError):
    """Forward mode cannot carry a derivative through an operation (a dual number reached code that only takes plain
    floats or arrays, or perturbations of different nesting levels were mixed in a way that has no meaning)."""


class NoForwardAttribute(ForwardModeError, AttributeError):
    """An ndarray attribute a dual number lacks (`.fill`, `.view`, `.base`, `.flat`): zygotepy's error, which `hasattr`
    and `getattr(x, name, default)` still read as a missing attribute."""


class MissingTangentRule(ForwardModeError):
    """A dual number flows into a callable that has no forward (tangent) rule and no Python source to transform."""

    def __init__(self, callee, reason=""):
        self.callee = callee
        name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None) or repr(callee)
        module = getattr(callee, "__module__", None)
        full = f"{module}.{name}" if module and module != "builtins" else name
        super().__init__(
            f"no forward-mode (tangent) rule for {full}" + (f" ({reason})" if reason else "") + "\n"
            "A dual number (a value carrying a forward-mode derivative) flows into it, and it would drop the "
            "derivative. Add a tangent rule:\n\n"
            "    from zygotepy.forward import tangent_rule\n"
            f"    @tangent_rule({full})\n"
            "    def _(fn, primals, tangents, kwargs):\n"
            "        y = fn(*primals, **kwargs)\n"
            "        return y, ...  # the output tangent; tangents[i] is None for an argument without one")


STORE_INTO_PLAIN_ARRAY = (
    "forward mode (hessian, pushforward, derivative, jacobian) cannot store a value carrying a derivative into a plain "
    "array made from constants (np.zeros(n), np.empty(...)): the array cannot hold its tangent; make it from the "
    "perturbed input (np.zeros_like(x)) or build it from the values (np.stack, np.array([...]), np.where)")
