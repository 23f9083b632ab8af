"""A name a loop binds to an item of what it walks (`last = r`, `prev = r` of `for r in rows`), updated in place after
the loop or in a later iteration (lower/control.py `loop`, lower/carried_links.py `carried_items`), or an object a
loop stores items of `rows` in (`first[g] = r`, `chain.append(r)`, `acc["k"] = r["f"]`), whose items are updated
later (`stored_items`, lineage.py `holds_items_of`): the update must reach the list holding the item. It was silently lost (gradients [1, 2, 3] for [7, 8, 6]: the update of `last` was
not linked to `rows` at all, so the statement was dead for the gradient). Checked against central differences in
float64, with every optimisation on and with every one off."""
from dataclasses import dataclass, replace

import numpy as np
import pytest

from plain_checks import central
from zygotepy import gradient


def records():
    return [{"x": 0.5}, {"x": 1.5}, {"x": -0.3}]


def weighted(rows):
    return sum(r["x"] * (i + 1) for i, r in enumerate(rows))


def last_item_updated_after(rows):
    last = None
    for r in rows:
        last = r
    last["x"] += 1.5 * rows[0]["x"]
    return weighted(rows)


def last_item_updated_in_a_second_loop(rows):
    last = None
    for r in rows:
        last = r
    for r in rows:
        last["x"] += r["x"]
    return weighted(rows)


def last_item_updated_by_index_loop(rows):
    last = None
    for r in rows:
        last = r
    for k in range(3):
        last["x"] += rows[k]["x"]
    return weighted(rows)


def previous_item_updated_in_the_next_iteration(rows):
    prev = None
    for r in rows:
        if prev is not None:
            prev["x"] += r["x"]
        prev = r
    return weighted(rows)


def item_of_nested_lists(rows):
    groups = [[rows[0], rows[1]], [rows[2]]]
    last = None
    for g in groups:
        for r in g:
            last = r
    last["x"] += rows[0]["x"]
    return weighted(rows)


def accumulator_bound_to_the_first_array(rows):
    acc = None
    for r in rows:
        if acc is None:
            acc = r  # (acc is rows[0]: `acc += r` updates it)
        else:
            acc += r
    return np.sum(rows[0] * 2.0) + np.sum(rows[1] * rows[2])


def array_accumulated_in_a_dict(rows):
    acc = {}
    for r in rows:
        if "k" in acc:
            acc["k"] += r  # (in place: the array of rows[0])
        else:
            acc["k"] = r
    return np.sum(rows[0] * 3.0) + np.sum(acc["k"] * rows[1])


def previous_row_of_a_matrix(M):
    prev = None
    for row in M:
        if prev is not None:
            prev += row  # (a view of M: M[i - 1] += M[i])
        prev = row
    return np.sum(M * np.arange(M.size).reshape(M.shape))


def list_item_appended_to(rows):
    acc = None
    for v in rows:
        if acc is None:
            acc = v  # (rows[0] grows)
        else:
            acc.append(v[0])
    return sum(rows[0]) * 2.0 + rows[1][1]


def merged_into_the_first_of_its_group(rows):
    first = {}
    for k, r in enumerate(rows):
        if k % 2 in first:
            first[k % 2]["x"] += r["x"]
        else:
            first[k % 2] = r
    return weighted(rows)


def last_of_a_chain_averaged(rows):
    chain = []
    for r in rows:
        if chain:
            chain[-1]["x"] = 0.5 * (chain[-1]["x"] + r["x"])
        chain.append(r)
    return weighted(rows)


def every_item_held_so_far_decays(rows):
    held = []
    for r in rows:
        for h in held:
            h["x"] *= 0.9
        held.append(r)
    return weighted(rows)


CASES = [last_item_updated_after, last_item_updated_in_a_second_loop, last_item_updated_by_index_loop,
         previous_item_updated_in_the_next_iteration, item_of_nested_lists, merged_into_the_first_of_its_group,
         last_of_a_chain_averaged, every_item_held_so_far_decays]


@pytest.mark.parametrize("f", CASES, ids=lambda f: f.__name__)
def test_an_item_kept_from_a_loop_and_updated(f, mode):
    (g,) = gradient(f, records())
    got = [d["x"] for d in g]
    for i in range(3):
        want = central(lambda x: f([{"x": x} if k == i else r for k, r in enumerate(records())]),
                       (records()[i]["x"],), 0)
        assert got[i] == pytest.approx(want, rel=1e-6, abs=1e-8), (i, got)


def test_an_accumulator_bound_to_an_array_of_the_list(mode):
    rng = np.random.default_rng(3)
    rows = [rng.standard_normal(2) for _ in range(3)]
    for f in (accumulator_bound_to_the_first_array, array_accumulated_in_a_dict):
        (g,) = gradient(f, [r.copy() for r in rows])
        for k in range(3):
            for j in range(2):
                def at(t, k=k, j=j, f=f):
                    moved = [r.copy() for r in rows]
                    moved[k][j] = t
                    return f(moved)
                assert g[k][j] == pytest.approx(central(at, (rows[k][j],), 0), rel=1e-6, abs=1e-8), (f, k, j)


def test_the_previous_row_of_a_matrix(mode):
    M = np.array([[0.5, -1.0], [1.5, 0.3], [0.2, 0.7]])
    (g,) = gradient(previous_row_of_a_matrix, M.copy())
    for idx in np.ndindex(M.shape):
        def at(t, idx=idx):
            moved = M.copy()
            moved[idx] = t
            return previous_row_of_a_matrix(moved)
        assert g[idx] == pytest.approx(central(at, (M[idx],), 0), rel=1e-6, abs=1e-8), idx


def test_a_list_item_appended_to_in_a_later_iteration(mode):
    (g,) = gradient(list_item_appended_to, [[0.5, -1.0], [1.5, 0.3]])  # (it raised ValueError from zip)
    assert g == [[2.0, 2.0], [2.0, 1.0]]


@dataclass
class Record:
    x: float
    y: float


def replaced_records(recs):
    new = [replace(r, y=r.y ** 2) for r in recs]  # (new records: fields the same float objects as r's)
    return sum(n.y * r.x for n, r in zip(new, recs))


def test_records_a_call_made_from_the_items_are_not_the_items(mode):
    """What a loop stores that a call made from an item (`replace(r, ...)`) is not linked to rows as one of its items:
    a search by identity took its fields for r's and counted x's cotangent twice."""
    recs = [Record(0.5, 1.2), Record(1.5, -0.7)]
    (g,) = gradient(replaced_records, recs)
    assert np.allclose([(d.x, d.y) for d in g], [(r.y ** 2, 2 * r.y * r.x) for r in recs], rtol=1e-12)
