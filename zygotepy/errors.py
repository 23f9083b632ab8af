"""The library's errors. Every error derives from ZygoteError, so `except ZygoteError` catches them all."""


class ZygoteError(Exception):
    """Base class of every error zygotepy raises."""


class UnsupportedSyntax(ZygoteError):
    """A Python construct the transform does not handle, reported before anything runs."""

    def __init__(self, construct, filename, lineno, hint=""):
        self.construct, self.filename, self.lineno = construct, filename, lineno
        msg = f"{filename}:{lineno}: zygotepy cannot differentiate {construct}"
        super().__init__(msg + (f" ({hint})" if hint else ""))


class MissingAdjoint(ZygoteError):
    """A differentiable value flows into a callable that has neither a rule nor Python source."""

    def __init__(self, callee, reason="", where=""):
        self.callee = callee
        name = getattr(callee, "__qualname__", None) or getattr(callee, "__name__", None) or repr(callee)
        module = getattr(callee, "__module__", None)
        full = f"{module}.{name}" if module and module != "builtins" else name
        lines = [f"{where + ': ' if where else ''}no adjoint rule for {full}" + (f" ({reason})" if reason else "")]
        lines += [
            "A differentiable value flows into it, and zygotepy has no rule and cannot read its Python source.",
            "Add a rule with @adjoint, for example:",
            "",
            "    from zygotepy import adjoint",
            f"    @adjoint({full})",
            "    def _(*args):",
            f"        y = {full}(*args)",
            "        def back(dy):",
            "            return (...,)  # one cotangent per positional argument, None for none",
            "        return y, back",
        ]
        super().__init__("\n".join(lines))


class ForwardModeError(ZygoteError):
    """Forward mode cannot carry a derivative through an operation (a dual number reached code that only takes plain
    floats or arrays, or perturbations of different nesting levels were mixed in a way that has no meaning)."""


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
