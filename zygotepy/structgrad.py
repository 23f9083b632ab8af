"""StructGrad: the gradient of an object, a closure or a partial: one entry per field, readable as `g.W` and `g["W"]`."""


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
