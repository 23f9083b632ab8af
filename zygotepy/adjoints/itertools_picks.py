"""The itertools that pick, pair or cut the items of a sequence (`pairwise`, `islice`, `combinations`,
`permutations`, `compress`, `zip_longest`, `takewhile`, `dropwhile`, `repeat`, `tee`), differentiated as the Python
they mean, as functional.py does the folds.

Which items go where depends on positions and on predicates, never on the items' gradients, so the rule runs
itertools itself on the positions (`range(n)`) and a twin picks the items by them: each item's cotangent is the sum
of the cotangents of the places it went to. A result is a list where itertools returns an iterator (an iterator has no
place for a cotangent to go back through), as for `chain`. An iterator given to one that would use up only part of it
(`islice(it, 2)`, then `next(it)`) is refused: the twin takes all of its items.
"""
import itertools

from ..errors import ZygoteError
from .functional import _through
from .registry import adjoint, keyword_cotangents, keyword_rule, nondifferentiable

nondifferentiable(list.index, list.count, tuple.index, tuple.count)  # positions and counts: integers


def pick_twin(seq, rows):
    items = list(seq)
    return [tuple(items[i] for i in row) for row in rows]


def take_twin(seq, positions):
    items = list(seq)
    return [items[i] for i in positions]


def zip_longest_twin(fill, rows, *seqs):
    lists = [list(s) for s in seqs]
    return [tuple(lists[k][i] if i < len(lists[k]) else fill for k in range(len(lists))) for i in rows]


def repeat_twin(obj, times):
    return [obj for _ in range(times)]


def tee_twin(seq, n):
    items = list(seq)
    return tuple(iter(list(items)) for _ in range(n))


def _length(seq, name):
    """How many items `seq` has, without using up an iterator (which is refused: see the module docstring)."""
    if hasattr(seq, "__next__"):
        raise ZygoteError(f"zygotepy differentiates itertools.{name} of a list, tuple or array, not of an iterator "
                          f"(it would take all of the iterator's items where Python takes some); pass list(...) of "
                          f"it, or index a list")
    return len(seq) if hasattr(seq, "__len__") else len(list(seq))


def _taken(seq, positions):
    """`take_twin` of `seq` at `positions`, with its back giving `seq`'s cotangent."""
    y, back = _through(take_twin, seq, list(positions))
    return y, lambda dy: back(dy)[0]


def _picked(seq, rows):
    """`pick_twin` of `seq` by `rows` (tuples of positions), with its back giving `seq`'s cotangent."""
    y, back = _through(pick_twin, seq, [tuple(row) for row in rows])
    return y, lambda dy: (back(dy)[0],)


@adjoint(itertools.pairwise)
def pairwise(seq):
    return _picked(seq, itertools.pairwise(range(_length(seq, "pairwise"))))


@adjoint(itertools.combinations)
def combinations(seq, r):
    y, back = _picked(seq, itertools.combinations(range(_length(seq, "combinations")), r))
    return y, lambda dy: (*back(dy), None)


@adjoint(itertools.combinations_with_replacement)
def combinations_with_replacement(seq, r):
    name = "combinations_with_replacement"
    y, back = _picked(seq, itertools.combinations_with_replacement(range(_length(seq, name)), r))
    return y, lambda dy: (*back(dy), None)


@adjoint(itertools.permutations)
def permutations(seq, *r):
    y, back = _picked(seq, itertools.permutations(range(_length(seq, "permutations")), *r))
    return y, lambda dy: (*back(dy), *(None for _ in r))


@adjoint(itertools.islice)
def islice(seq, *bounds):
    """`islice(seq, stop)` / `islice(seq, start, stop[, step])`: Python checks the bounds (on the positions)."""
    y, back = _taken(seq, itertools.islice(range(_length(seq, "islice")), *bounds))
    return y, lambda dy: (back(dy), *(None for _ in bounds))


@adjoint(itertools.compress)
def compress(seq, selectors):
    y, back = _taken(seq, itertools.compress(range(_length(seq, "compress")), selectors))
    return y, lambda dy: (back(dy), None)


@keyword_rule
@adjoint(itertools.zip_longest)
def zip_longest(*seqs, fillvalue=None):
    """`fillvalue=` fills every missing place: its cotangent is the sum of theirs."""
    rows = range(max((_length(s, "zip_longest") for s in seqs), default=0))
    y, back = _through(zip_longest_twin, fillvalue, rows, *seqs)
    given = {} if fillvalue is None else {"fillvalue": fillvalue}

    def zip_longest_back(dy):
        dfill, _, *dseqs = back(dy)
        return keyword_cotangents(dseqs, given, fillvalue=dfill)
    return y, zip_longest_back


@adjoint(itertools.takewhile)
def takewhile(predicate, seq):
    """The items before the first one `predicate` rejects (the predicate sees the items: a comparison of them)."""
    n, items = _length(seq, "takewhile"), list(seq)
    y, back = _taken(seq, itertools.takewhile(lambda k: predicate(items[k]), range(n)))
    return y, lambda dy: (None, back(dy))


@adjoint(itertools.dropwhile)
def dropwhile(predicate, seq):
    n, items = _length(seq, "dropwhile"), list(seq)
    y, back = _taken(seq, itertools.dropwhile(lambda k: predicate(items[k]), range(n)))
    return y, lambda dy: (None, back(dy))


@adjoint(itertools.repeat)
def repeat(obj, *times):
    """`repeat(v, n)`: `n` places holding `v`, whose cotangents add up. Without `n` it never ends, which a list
    cannot hold: refused (`zip(xs, repeat(c))` is `[(x, c) for x in xs]`)."""
    if not times:
        raise ZygoteError("zygotepy differentiates itertools.repeat(value, times), not an endless repeat; write "
                          "`[(x, c) for x in xs]` for `zip(xs, repeat(c))`")
    y, back = _through(repeat_twin, obj, times[0])
    return y, lambda dy: (back(dy)[0], None)


@adjoint(itertools.tee)
def tee(seq, *n):
    """`n` iterators over copies of the items (an iterator `tee` is given is used up, as Python's docs require), each
    taken from by `next` or walked as Python's are."""
    y, back = _through(tee_twin, seq, n[0] if n else 2)
    return y, lambda dy: (back(dy)[0], *(None for _ in n))
