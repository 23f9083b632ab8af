"""Names in generated code: the user's names first, fresh names that never shadow them, readable names for constants.

Every name that appears in the user's function is reserved before any fresh name is handed out, so a generated name can
never capture a user variable or global. Fresh names get `_2`, `_3`, ... suffixes, deterministically. A fresh name is
never a keyword: names are built from the user's (`d` + `ef` is `def`, `d` + `el` is `del`), and a keyword as a name is
a syntax error in the generated code.
"""
import builtins
import keyword
import operator

_LITERALS = (int, float, complex, str, bytes, bool, type(None), type(Ellipsis))


class Namer:
    """Hands out unique Python identifiers, avoiding every reserved name."""

    def __init__(self, reserved=()):
        self.taken = set(reserved)
        self.next = {}  # hint -> the next suffix to try: fresh() stays O(1), not O(uses of the hint)

    def reserve(self, name):
        self.taken.add(name)
        return name

    def fresh(self, hint):
        hint = hint if hint.isidentifier() else "_t"
        if hint not in self.taken and usable(hint):
            self.taken.add(hint)
            return hint
        k = self.next.get(hint, 2)
        name = f"{hint}_{k}"  # (never a keyword: none ends in `_` and a digit)
        while name in self.taken:
            k += 1
            name = f"{hint}_{k}"
        self.next[hint] = k + 1
        self.taken.add(name)
        return name


def usable(name):
    """Whether `name` may be bound in generated code: not a keyword (`def`, `del`, `None`), nor `__debug__`, which
    Python refuses to assign. (Soft keywords, `match`, `case`, `type`, `_`, are names wherever a name may stand.)"""
    return not keyword.iskeyword(name) and name != "__debug__"


def is_literal(value):
    if isinstance(value, (tuple, frozenset)):
        return all(is_literal(v) for v in value)
    if isinstance(value, slice):
        return all(is_literal(v) for v in (value.start, value.stop, value.step))
    return isinstance(value, _LITERALS)


def const_name(value):
    """The text of a constant in generated code: a literal's repr, or a helper name such as `_mul` for a callable."""
    if is_literal(value):
        if isinstance(value, slice):
            return f"slice({value.start!r}, {value.stop!r}, {value.step!r})"
        return repr(value)
    if getattr(builtins, getattr(value, "__name__", ""), None) is value:
        return "_" + value.__name__
    if getattr(operator, getattr(value, "__name__", ""), None) is value:
        return "_" + value.__name__.strip("_")
    name = getattr(value, "__name__", None) or type(value).__name__
    return "_" + name.strip("_<>").replace(".", "_")
