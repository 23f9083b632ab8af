"""The functions of other array libraries' namespaces and the NumPy functions they mean (their "twins"): `jnp.tanh`,
`array_api_strict.sum`, `torch.tanh` have no rule of their own, and the registry (registry.find_rule) gives them their
twin's. The map is built lazily, per namespace module, once such a module has been imported; nothing of the foreign
library is patched. The methods of foreign array classes (`torch.Tensor.sum`) are indexed by the foreign rule tables
(adjoints/foreign/), which give this module their lookups when they are imported (`FOREIGN`).

Part of the registry's layer (tests/test_layers.py): it imports nothing of the registry, which passes it what it knows.
"""
import sys
import types

from ..ast_adjoint.runtime import differentiable
from ..errors import ZygoteError

# --- foreign namespaces: module name -> the NumPy module whose functions its names mean ------------------------------
FOREIGN_NAMESPACES = {
    "jax.numpy": "numpy", "jax.numpy.linalg": "numpy.linalg", "array_api_strict": "numpy",
    "array_api_strict.linalg": "numpy.linalg", "array_api_strict._linalg": "numpy.linalg", "torch": "numpy",
    "torch.linalg": "numpy.linalg", "cupy": "numpy",
    "cupy.linalg": "numpy.linalg", "dask.array": "numpy", "array_api_compat.torch": "numpy",
    "array_api_compat.torch.linalg": "numpy.linalg", "array_api_compat.cupy": "numpy",
    "array_api_compat.cupy.linalg": "numpy.linalg", "array_api_compat.dask.array": "numpy",
    "array_api_compat.numpy": "numpy", "array_api_compat.numpy.linalg": "numpy.linalg",
}
# array-API names whose NumPy function has another name (NumPy's own aliases, np.atan is np.arctan, need no entry)
_ARRAY_API_TWINS = {"permute_dims": "transpose", "concat": "concatenate"}
# torch's names of NumPy functions (torch.cat is np.concatenate; torch_function translates their keywords)
_TORCH_TWINS = {"cat": "concatenate", "permute": "transpose", "movedim": "moveaxis", "swapdims": "swapaxes",
                # torch's own names for linear algebra that NumPy keeps in np.linalg (torch.det is torch.linalg.det)
                "det": "linalg.det", "slogdet": "linalg.slogdet", "inverse": "linalg.inv", "pinverse": "linalg.pinv",
                "matrix_power": "linalg.matrix_power"}
_TORCH_NOT_TWINS = {"select"}  # torch.select(x, dim, i) is indexing, not np.select
_TWINS = {}  # foreign function object -> NumPy function object
_TORCH = set()  # the foreign functions of torch's namespaces (their keywords are dim/keepdim: foreign/torch_functions)
_TORCH_RULES = {}  # torch function -> its rule (its twin's, with torch's keywords translated)
_METHODS = {}  # method of a foreign array class (torch.Tensor.sum, ArrayImpl.sum) -> its rule (foreign/array_methods)
_METHOD_NONDIFF = set()  # methods of foreign array classes whose results carry no gradient (argmax, size, detach)
_CLASSES = set()  # the foreign array classes whose methods are indexed
_indexed = set()
_seen = [0]


def _index_namespaces(known):
    """Index the foreign namespace modules imported since the last call (cheap: a length check when none were);
    `known(twin)`: does the NumPy function have a rule, or carry no gradient?"""
    _seen[0] = len(sys.modules)
    for name, np_name in FOREIGN_NAMESPACES.items():
        mod, np_mod = sys.modules.get(name), sys.modules.get(np_name)
        if mod is None or np_mod is None or name in _indexed:
            continue
        _indexed.add(name)
        torch = name == "torch" or name == "torch.linalg"
        for attr in dir(mod):
            fn = getattr(mod, attr, None)
            twin = np_mod
            for part in ((torch and _TORCH_TWINS.get(attr)) or _ARRAY_API_TWINS.get(attr, attr)).split("."):
                twin = getattr(twin, part, None)
            if fn is None or twin is None or fn is twin or not callable(fn) or isinstance(fn, type) \
                    or "torch" in name and attr in _TORCH_NOT_TWINS:
                continue
            try:
                if known(twin):
                    _TWINS.setdefault(fn, twin)
                    if torch:
                        _TORCH.add(fn)
            except TypeError:
                continue
    FOREIGN.index_methods(_CLASSES, _METHODS, _METHOD_NONDIFF)  # the methods of the foreign array classes so far


def torch_rule(target, twin, rule):
    """A torch function's rule: its NumPy twin's, with torch's keywords translated (foreign/torch_functions.py)."""
    hit = _TORCH_RULES.get(target)
    if hit is None or hit[0] is not rule:
        hit = _TORCH_RULES[target] = (rule, FOREIGN.torch_function(target, twin.__name__, rule))
    return hit[1]


# What the foreign rule tables (adjoints/foreign/, above this module) give it when they are imported:
# `index_methods(classes, methods, nondiff)` indexes the methods of the foreign array classes imported so far, and
# `torch_function(fn, name, rule)` makes a torch function's rule from its NumPy twin's. Until then, nothing.
FOREIGN = types.SimpleNamespace(index_methods=lambda classes, methods, nondiff: None,
                                torch_function=lambda fn, name, rule: rule)


def forget():
    """A new registration may give a NumPy function its first rule: index the namespaces again on the next miss."""
    if _TWINS or _indexed:  # (the method tables stay: a method's rule finds its NumPy rule when called)
        _TWINS.clear()
        _indexed.clear()
        _TORCH.clear()
        _TORCH_RULES.clear()
    _seen[0] = -1


def twin_of(target, known):
    """The NumPy function that the foreign namespace function `target` means, or None (`known`: see
    `_index_namespaces`)."""
    if _seen[0] != len(sys.modules):
        _index_namespaces(known)
    try:
        return _TWINS.get(target)
    except TypeError:
        return None


_REFUSALS = {}


def numpy_only(twin, target, twin_rule):
    """A rule for a foreign function whose NumPy twin's rule (`twin_rule`) is written for NumPy arrays only: raises,
    naming both."""
    rule = _REFUSALS.get(target)
    foreign = getattr(twin_rule, "__zygote_foreign__", None)  # a NumPy rule that serves other libraries itself
    if rule is None and foreign is not None:
        rule = _REFUSALS[target] = foreign(target)
    if rule is None:
        module = getattr(target, "__module__", None) or type(target).__module__
        name = f"{module}.{getattr(target, '__name__', target)}"

        def rule(*args, **kwargs):
            if not any(differentiable(a) for a in (*args, *kwargs.values())):  # nothing to differentiate: a constant
                y = target(*args, **kwargs)
                return y, lambda dy: (None,) * len(args)
            raise ZygoteError(f"{name} resolves to the rule of np.{twin.__name__}, which is written for NumPy arrays "
                              f"only (it would convert the arrays of another library silently). Register a rule for it "
                              f"with @zygotepy.adjoint({name}), or call it on NumPy arrays.")
        rule.__qualname__ = f"numpy_only_{twin.__name__}"
        _REFUSALS[target] = rule
    return rule
