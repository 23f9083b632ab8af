"""Small structural helpers of the twins, each with its own rule: the tuple surgery that turns one kind of back's
cotangents into J's (`(dfn, *dargs)`), which an outer level would otherwise have to transform: trimming, padding,
spreading `*args`, regrouping by parameters (`_by_parameters`) and keywords (`_keyword_grads`), projecting onto the
arguments, and the cotangent of a generated function given to the function whose cells it reads (`_cells_of`)."""
from ...api import _project
from ...ast_adjoint import dispatch
from ...ast_adjoint import runtime as rt
from ...structgrad import StructGrad
from ..registry import adjoint, nondifferentiable


# --- small structural helpers with their own rules (tuple surgery the transform would otherwise have to see) ---------

def _with_dself(grads, n):
    """`(None, *grads[:n])`: a rule's cotangents as J's, trimmed to the arguments given."""
    return (None, *grads[:n])


@adjoint(_with_dself)
def _with_dself_rule(grads, n):
    def back(dy):
        if dy is None:
            return (None, None)
        return ((*dy[1:], *(None,) * (len(grads) - n)), None)
    return _with_dself(grads, n), back


def _drop(grads, k):
    """`grads[k:]`."""
    return tuple(grads[k:])


@adjoint(_drop)
def _drop_rule(grads, k):
    def back(dy):
        return (None if dy is None else (*(None,) * k, *dy), None)
    return _drop(grads, k), back


def _take(grads, k):
    """`grads[:k]`."""
    return tuple(grads[:k])


@adjoint(_take)
def _take_rule(grads, k):
    def back(dy):
        return (None if dy is None else (*dy, *(None,) * (len(grads) - k)), None)
    return _take(grads, k), back


def _pad(grads, k):
    """`(None,) * k + grads`: cotangents for k leading constant arguments, then `grads`."""
    return (None,) * k + tuple(grads)


@adjoint(_pad)
def _pad_rule(grads, k):
    def back(dy):
        return (None if dy is None else _drop(dy, k), None)
    return _pad(grads, k), back


def _module_grads(grads):
    """A module function's `(dfunc, *dargs)` as callmethod's `(None, None, None, *dargs)`."""
    return (None, None, None, *grads[1:])


@adjoint(_module_grads)
def _module_grads_rule(grads):
    def back(dy):
        return (None if dy is None else (None, *dy[3:]),)
    return _module_grads(grads), back


def _project_all(args, grads):
    """The entry points' projection of each gradient onto its argument (real for real, None for data)."""
    return tuple(_project(a, g) for a, g in zip(args, grads, strict=True))


@adjoint(_project_all)
def _project_all_rule(args, grads):
    def back(dy):  # a projection onto the argument's space: its adjoint embeds dy back, unchanged
        return (None, dy)
    return _project_all(args, grads), back


def _spread(grads, npos, nextra):
    """A *args function's `(dself, *dparams, d*args)` as one cotangent per positional argument of the call (`nextra`
    of them in *args; a None d*args stands for None each)."""
    return (*grads[:npos + 1], *(grads[npos + 1] or (None,) * nextra))


@adjoint(_spread)
def _spread_rule(grads, npos, nextra):
    def back(dy):
        if dy is None:
            return (None, None, None)
        return ((*dy[:npos + 1], tuple(dy[npos + 1:]), *(None,) * (len(grads) - npos - 2)), None, None)
    return _spread(grads, npos, nextra), back


def _cells_of(fn, generated):
    """`generated` (fn's generated forward or backward), whose cotangent belongs to `fn`: the generated code reads fn's
    captured variables through cells named `<name>_cell`, so a gradient reaching them is the gradient of fn's."""
    return generated


def _unwrap(v):
    """A cell's cotangent as its content's: generated code reads `x_cell.cell_contents`."""
    return v.get("cell_contents", v) if isinstance(v, StructGrad) else v


@adjoint(_cells_of)
def _cells_of_rule(fn, generated):
    def back(dg):
        if not dg:
            return (None, None)
        fields = {k[:-5]: _unwrap(v) for k, v in dg.items() if k.endswith("_cell") and v is not None}
        return (StructGrad(fields) if fields else None, None)
    # the forward calls `_cells_of` itself (not `return generated`): an outer level transforming this rule then applies
    # this rule again, sending a cotangent of the generated function to `fn` (`generated` comes from `_plan`, which is
    # non-differentiable: the cotangent would be dropped there)
    return _cells_of(fn, generated), back


def _defaults_of(fn, nargs):
    """The default values of fn's positional parameters after the first `nargs`, which a call with `nargs` arguments
    leaves to them."""
    code = fn.__code__
    return fn.__defaults__[nargs - (code.co_argcount - len(fn.__defaults__)):]


@adjoint(_defaults_of)
def _defaults_of_rule(fn, nargs):
    code = fn.__code__
    names = code.co_varnames[nargs:code.co_argcount]

    def back(dy):  # the function's cotangent: a default's under "name=" (adjoint.py's stmt_Def passes it to its source)
        fields = {} if dy is None else {n + "=": d for n, d in zip(names, dy, strict=True) if d is not None}
        return (StructGrad(fields) if fields else None, None)
    return _defaults_of(fn, nargs), back


def _join_defaults(grads, n, names):
    """A generated backward's `(dself, *dparams)`, for a call that passed `n` arguments and left the parameters
    `names` after them to their defaults, as the call's `(dfn, *dargs)`: the defaults' cotangents join the function's
    own under "name=" (as dispatch's MappedPullback joins them)."""
    given = {p + "=": d for p, d in zip(names, grads[n + 1:]) if d is not None}
    dself = grads[0] if not given else StructGrad(given) if grads[0] is None else rt.acc(grads[0], StructGrad(given))
    return (dself, *grads[1:n + 1])


@adjoint(_join_defaults)
def _join_defaults_rule(grads, n, names):
    def back(dy):
        if dy is None:
            return (None, None, None)
        dself = dy[0]
        ddefaults = tuple(None if dself is None else dself.get(p + "=") for p in names)
        return ((dself, *dy[1:], *ddefaults, *(None,) * (len(grads) - n - 1 - len(names))), None, None)
    return _join_defaults(grads, n, names), back


def _callmethod_grads(grads):
    """A method's `(dfunc, dobj, *dargs)` as callmethod's `(None, dobj, None, *dargs)`."""
    return (None, grads[1], None, *grads[2:])


@adjoint(_callmethod_grads)
def _callmethod_grads_rule(grads):
    def back(dy):
        return (None if dy is None else (None, dy[1], *dy[3:]),)
    return _callmethod_grads(grads), back


def _by_parameters(grads, plan):
    """A derived function's `(dself, *dparams)` as its call's `(dfn, *dargs, dkw)` (`plan`: dispatch._call_plan; as
    dispatch.MappedPullback, written for an outer level: its rule below is the adjoint of this regrouping)."""
    positional, keywords = plan
    out = [grads[0]]
    for kind, i in positional:
        if kind == "param":
            out.append(grads[i + 1])
        else:  # an extra positional argument, collected by *args: (index of *args, offset)
            out.append(None if grads[i[0] + 1] is None else grads[i[0] + 1][i[1]])
    dkw = {k: grads[i + 1] if kind == "param" else (grads[i + 1] or {}).get(k) for k, (kind, i) in keywords.items()}
    return (*out, dkw)


@adjoint(_by_parameters)
def _by_parameters_rule(grads, plan):
    positional, keywords = plan

    def back(dy):  # each argument binds one parameter, or one entry of *args or **kwargs: its cotangent goes there
        if dy is None:
            return (None, None)
        dkw = dy[len(positional) + 1] or {}
        sources = [(kind, i, d) for (kind, i), d in zip(positional, dy[1:len(positional) + 1], strict=True)] + \
                  [(kind, i, dkw.get(k)) for k, (kind, i) in keywords.items()]
        by_param = {i: d for kind, i, d in sources if kind == "param"}
        extra = {i[1]: d for kind, i, d in sources if kind == "vararg"}
        named = {k: dkw.get(k) for k, (kind, _) in keywords.items() if kind == "varkw"}
        star = next((i[0] for kind, i, _ in sources if kind == "vararg"), None)
        starstar = next((i for kind, i, _ in sources if kind == "varkw"), None)
        return ((dy[0], *(tuple(extra.get(n) for n in range(len(extra))) if j == star else named if j == starstar
                          else by_param.get(j) for j in range(len(grads) - 1))), None)
    return _by_parameters(grads, plan), back


def _keyword_grads(grads, n, aware, unstated):
    """A rule's back, from a call with keywords, as J_kw's `(dfn, *dargs, dkw)`: a keyword-aware rule's ends with the
    keywords' cotangents; a keyword it leaves out, or any keyword of another rule, gets `unstated`'s entry: None for a
    constant, a DroppedKeyword (an error where generated code reads it) for a value that could carry a gradient, as
    dispatch._WithKeywords gives."""
    stated = grads[n] if aware and len(grads) > n else None  # (a back given no cotangent may state no dict)
    return (None, *grads[:n], {**unstated, **(stated or {})} if aware else unstated)


@adjoint(_keyword_grads)
def _keyword_grads_rule(grads, n, aware, unstated):
    def back(dy):
        if dy is None:
            return (None, None, None, None)
        kept = (*dy[1:n + 1], dy[n + 1]) if aware else dy[1:n + 1]
        return ((*kept, *(None,) * (len(grads) - len(kept))), None, None, None)
    return _keyword_grads(grads, n, aware, unstated), back


def _unstated(rule, fn, kwargs):
    return dispatch._keyword_cotangents(rule, fn, kwargs, {})


nondifferentiable(_unstated)
