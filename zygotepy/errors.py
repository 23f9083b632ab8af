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
