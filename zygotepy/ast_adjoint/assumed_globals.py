"""The test that a derived adjoint's assumptions about the user's globals still hold.

assumptions.py records the global callees a transform took for constants (`act = np.floor`); the caches of derived
code (compile.py `artefact`, derived.py's per-function cache) use an adjoint only while every recorded name still
gives the same object (`checker`: one identity test per recorded name, once per call of the function, not per call in
it), so that a notebook rebinding the name (`act = np.tanh`) gets the function derived again. Here, below the compiler,
because J's caches (derived.py) ask it on every call.
"""
import builtins
import keyword

_CHECKS = {}  # tuple of paths -> code of `_assumed(_k0=..., ...)`, shared by every function assuming those paths


def resolve_global(path, globals_):
    """The object a Global path names now (used to decide activity and speculation, and to test assumptions), or
    None."""
    head, *rest = path.split(".")
    obj = globals_.get(head, getattr(builtins, head, None)) if head in globals_ or hasattr(builtins, head) else None
    for attr in rest:
        obj = getattr(obj, attr, None)
    return obj


def still_hold(assumed, globals_):
    """Does every recorded global name the object it named (the artefact cache's test, once per derivation)?"""
    return all(resolve_global(path, globals_) is target for path, target in assumed)


def checker(assumed, globals_):
    """A function of no arguments, bound to `globals_`, that is true while every recorded global names the object it
    named: compiled, `act is _k0 and np.argmax is _k1`, so that a cached adjoint's test costs a few nanoseconds per
    name. A name deleted since (NameError) or an attribute gone is a change too."""
    paths = tuple(path for path, _ in assumed)
    if not all(_is_path(p) for p in paths):
        return lambda: still_hold(assumed, globals_)
    code = _CHECKS.get(paths)
    if code is None:
        params = ", ".join(f"_k{k}" for k in range(len(paths)))
        test = " and ".join(f"{p} is _k{k}" for k, p in enumerate(paths))
        text = f"def _assumed({params}):\n    try:\n        return {test}\n    except Exception:\n        return False\n"
        namespace = {}
        exec(compile(text, "<zygotepy: assumed globals>", "exec"), namespace)  # noqa: S102 - names checked above
        code = _CHECKS[paths] = namespace["_assumed"].__code__
    fn = type(checker)(code, globals_, "_assumed", tuple(target for _, target in assumed))
    fn.assumed = assumed
    return fn


def merged(old, new):
    """The recorded assumptions of two artefacts of one function (two call shapes), each path once."""
    seen = dict(old)
    seen.update(new)
    return tuple(seen.items())


def _is_path(path):
    return all(part.isidentifier() and not keyword.iskeyword(part) for part in path.split("."))
