"""Nested reverse mode: rules that let an outer `gradient` differentiate code that itself calls `gradient`.

How (Zygote's way, in Python): an inner `gradient(f, x)` runs two pieces of ordinary Python, the generated forward of
`f` and its generated backward. Both have source (registered in `linecache`), so the outer level can transform them like
any user function: differentiating them gives the outer level the derivative of the inner gradient. Only two kinds of
code on the inner path are not plain transformable Python:

- the entry points (`gradient`, `value_and_gradient`, `pullback`: `try` blocks for error notes, projections), and
- the dispatcher `J` and its variants (caches, compilation, `type` tests), which generated code calls.

Each gets a rule here that says "differentiate my twin": a short Python function computing the same value from
transformable parts. `_plan` (non-differentiable) decides, as `J` would, which code handles a call: the generated
forward/backward pair of a Python function, a registered rule (whose own source is then transformed, so rules nest
too), a bound method, a callable object, or a constant call. The twin for that kind (`_TWINS`: one small function per
kind, so that an outer level transforms only the kinds the calls use, each straight-line code) then calls that forward
and returns a closure over its tape as the pullback; the outer level differentiates the forward call and, later, the
closure. Each level transforms the generated code of the level below. Status: any depth in principle;
tests/adjoints/nesting/ checks third derivatives (closed forms, loops, closures), array `x ** k` at second order, fourth
derivatives, and (when ZYGOTEPY_SLOW_NESTING=1) fifth derivatives of x^5, sin, exp and loops against closed forms. What
makes deeper levels work: generated code that builds a closure passes the cells' contents to `runtime.make_closure` (its
rule below gives them the closure's cotangent), and the helpers that generated code and built-in rules use are
themselves transformable or have rules (`scatter`, `splat`, `unpack_starred`, `StructGrad`). Code an outer level
transforms must not update anything in place: the mutation rules (item stores, `append`, list `+=`) are not in the
transformable subset, and a call of one inside a rule's `back` fails two levels further up. So the backs on this path
build their results by concatenation or comprehension (`_splat_back`, `_concat_back`, `_repeat_back`,
`closure_cotangent`'s and `dict_put`'s rules, `StructGrad`'s), `_plan` sends `x += y` on a number to the plain operator,
and the scalar fast path of an operation takes no constant operand that is not a number (`(None,) * k` in `_drop_rule`'s
back: a fifth level failed on these). A sixth level also needed twins of functions called without their optional or
keyword-only parameters (`back(dy)` for `back(dy, need=None, *into)`, `zip_(*seqs, strict=False)`) and of method calls
on data (`tag.endswith(...)`, a constant).

Cost: a warm call is fast (milliseconds up to the fourth level, ~0.3 s at the fifth); a first call transforms each
level's generated code, forward and backward (twice the functions per level, each several times longer). For d^k of
x^5 the generated code was 18 thousand lines at k = 3, 224 thousand at 4 and 2.5 million at 5 (a cold fifth derivative:
~3 min); it is now 7, 48 and 360 thousand (~3 s for a fourth derivative, ~30 s for a fifth, on one quiet core). What
shrinks it: the twins per kind above (one `twin_J` with an early return per kind, transformed whole at every level, was
most of a fourth level's cost), `gradient`'s and `value_and_gradient`'s twins calling the planned twin directly, and code
written small for an outer level (`OPTIONS.nested_size`: ast_adjoint/adjoint.py, compile.py): generated code's helpers read as
constants, no versioned loop copies or inlined callees, no guard an enclosing guard already proved, joins nothing reads
dropped, literal arithmetic folded. A sixth level gives x^6, sin, exp and x^6 by a loop right (a slow test, with the
limit raised; the loop gave 696 instead of 720, exactly 29/30 of the true value, until the nesting changes of
2026-11-27, which fixed it without the cause being isolated). A twin deeper than MAX_LEVELS (five: the nestlevel
example is not yet checked at six; a fifth derivative through a loop runs in every test run) raises NestingTooDeep,
counting the enclosing levels with a `nestlevel`-style rule (`_depth`): the outermost `gradient` then takes the levels
above by forward-over-reverse (deep.py: a sixth derivative in seconds), and so any depth works.

Invariants:
- A level's user rules see the level's own semantics: calls of rules for `J`, the entry points and `call_rule` are
  routed through the outer level's `J` even when no gradient flows into them (`__zygote_always__`), so the rule of
  `nestlevel() = 0` returns 1 under one `gradient`, 2 under two.
- Without nesting nothing here runs: these rules apply only when a transformed function calls `gradient` or `J`.
- Calls with keywords go through `twin_J_kw`: a Python function's generated code (its cotangents regrouped by the
  call plan, `_by_parameters`), a rule (keyword-aware or not, with `DroppedKeyword`s as J gives them), a constructor's
  structural rule (namedtuples, dataclasses, SimpleNamespace, `dict(a=x)`: the "class" twins, with or without
  keywords).
- What the twins do not cover (`functools.partial`, operators of user classes, an `__init__` that does more than set
  attributes, `__post_init__`, updates in place) raises a ZygoteError naming the callee, never a wrong gradient; an
  inner `gradient` or `value_and_gradient` whose twins raise one is then taken by forward-over-reverse
  (deep.py), so these work there; inside `pullback` and the J variants the error stands.
- The registered rule of `gradient` and `value_and_gradient` is the one the outermost level runs plainly
  (`deep.outermost`, which picks the route); an outer level transforms the twin rule (`_nested_rule`).

The modules:
- plan.py: `_plan`, how the inner level's J handles a call (the kind of twin), and `_always`.
- twins.py: the twins by kind (`twin_J`, `twin_J_args`, `twin_J_kw`), and `call_rule`.
- cotangents.py: the tuple surgery between a kind's back and J's cotangents, each with its rule.
- entries.py: the twins of `gradient`, `value_and_gradient` and `pullback`, MAX_LEVELS, and the rules that register
  the twins for J and the entry points (`_register`).
- helper_rules.py: rules for the helpers generated code calls (`acc`, `sole`, `make_closure`, `StructGrad`, ...).
- constructors.py: a plain class's `__init__` read as a function returning its fields.
- deep.py: forward-over-reverse for the levels beyond MAX_LEVELS, and for what the twins refuse.
"""
from . import constructors, deep, plan, cotangents, twins, entries, helper_rules  # noqa: F401  (registers their rules)
