"""The cotangent types below the rules: StructGrad, the gradient of an object, a closure or a partial (one entry per
field, readable as `g.W` and `g["W"]`); NoDerivative, the cotangent of an argument a rule has no derivative in."""
from .errors import ZygoteError


class StructGrad(dict):
    """A structural gradient: a dict of field cotangents that also reads as attributes (docs/api.md: `g.W` and
    `g["W"]`).

    >>> g = StructGrad(W=1.0)
    >>> g.W, g["W"]
    (1.0, 1.0)
    """
    __slots__ = ()

    def __getattr__(self, name):
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def __repr__(self):
        return f"StructGrad({dict.__repr__(self)})"


class NoDerivative:
    """The cotangent of an argument whose rule has no derivative in it (a Bessel function's order): not an error yet,
    since most such arguments are constants whose cotangent nobody reads (a closure's `nu`, whose cotangent the entry
    point drops). Sums and products with it are it (the derivative they would make is unknown too), and it raises
    where it is handed to the user as a gradient (the entry points' `_asked`)."""
    __slots__ = ("message",)
    __array_ufunc__ = None  # (NumPy defers to the methods below)

    def __init__(self, message):
        self.message = message

    def __repr__(self):
        return "NoDerivative()"

    def __add__(self, other):  # (the argument reaching the output other ways too: its whole derivative is unknown)
        return self

    __radd__ = __sub__ = __rsub__ = __mul__ = __rmul__ = __truediv__ = __rtruediv__ = __pow__ = __add__

    def __neg__(self):
        return self

    def error(self):
        return ZygoteError(self.message)
