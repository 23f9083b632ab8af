"""`np.vectorize(pyfunc)(*arrays)`: the Python function called on each element of the broadcast arrays, as NumPy
calls it, through a twin that zygotepy differentiates (each call is derived as any function of the user's), so the
gradients reach the arrays' entries. NumPy's own `__call__` is library code that zygotepy does not transform.

A `pyfunc` that closes over values carrying a gradient (`np.vectorize(lambda t: t * w)`) would send their gradient
to the vectorize object, which holds no link to them: refused then, naming the way out (a comprehension)."""
import numpy as np

from ...ast_adjoint.dispatch import J
from ...errors import ZygoteError
from ..registry import adjoint, nondifferentiable

nondifferentiable(np.vectorize)  # (making one: NumPy's code, run as it is; its calls are differentiated below)


def vectorize_twin(pyfunc, otypes, *args):
    arrays = np.broadcast_arrays(*args)
    shape = arrays[0].shape
    flat = [a.reshape(-1) for a in arrays]
    out = []
    for i in range(flat[0].shape[0]):
        out.append(pyfunc(*[f[i] for f in flat]))
    return np.array(out, dtype=otypes).reshape(shape)


@adjoint(np.vectorize.__call__)
def vectorize_call(vectorized, *args, **kwargs):
    if kwargs or vectorized.signature is not None or vectorized.excluded or not args:
        raise ZygoteError("zygotepy differentiates np.vectorize(f)(*arrays) without keywords, signature= or "
                          "excluded=; write the loop (a list comprehension over the entries) for the others")
    otypes = vectorized.otypes[0] if vectorized.otypes else None
    y, pb = J(vectorize_twin, vectorized.pyfunc, otypes, *(np.asarray(a) if type(a) in (list, tuple) else a
                                                          for a in args))

    def back(dy):
        _, dfunc, _, *dargs = pb(dy)
        if dfunc is not None:
            raise ZygoteError("zygotepy cannot differentiate np.vectorize of a function that closes over values "
                              "carrying a gradient (the vectorize object holds no link to them): write the loop as a "
                              "list comprehension, `np.array([f(t) for t in x])`")
        return (None, *dargs)
    return y, back
