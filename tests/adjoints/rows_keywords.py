"""Rows whose keyword arguments are differentiated: a `Kind` (a random float) or `Shaped` (a random array) given as a
keyword's value is perturbed like a positional argument, and the rule must give its cotangent (`registry.keyword_rule`).
These are the values that reached a rule by keyword and lost their gradient before rules could return keyword
cotangents: clip's bounds, reductions' `initial=`, average's `weights=`, diff's `prepend=`/`append=`, pad's fill,
nan_to_num's replacements, interp's end values, max/min's `default=`, sum's `start=`; and the `order=` of reshapes."""
import builtins

import numpy as np
from table_base import ANY, HIGH, LOW, NZ, POS, Kind, Seq, Shaped, row

ABOVE, BELOW = Kind("above", 2.5, 3.0), Kind("below", -3.0, -2.5)  # beyond every entry of ANY: the initial wins/loses
WHERE = np.array([[True, False, True], [True, True, False]])
SPECIAL = np.array([np.nan, 1.5, np.inf, -np.inf, np.nan, -0.5])  # nan_to_num replaces all but the finite entries
TABLE = np.array([-2.0, -0.5, 0.5, 2.0])
WIDE = Kind("wide", -3.0, 3.0)  # interp's x, inside and outside the table


def _initial(op, kind=ANY):
    """`initial=` of a reduction: whole array, along an axis (some outputs take it, some not), and beyond the data."""
    name = getattr(op, "__qualname__", op.__name__)
    return [
        row(op, kind, shapes=[((2, 3),)], kw={"initial": kind}, label=f"{name}[initial=]"),
        row(op, kind, shapes=[((2, 3),)], kw={"axis": 0, "initial": kind}, label=f"{name}[axis, initial=]"),
    ]


KEYWORD_ROWS = [
    # numpy/select.py, reductions.py, reshaping.py, methods.py
    row(np.clip, ANY, shapes=[((3, 4),)], kw={"a_min": LOW, "a_max": HIGH}, label="np.clip[a_min=, a_max=]"),
    row(np.clip, ANY, shapes=[((3, 4),)], kw={"a_min": Shaped(LOW, (4,)), "a_max": HIGH},
        label="np.clip[array a_min=]"),
    row(np.clip, ANY, LOW, shapes=[((3, 4), ())], kw={"a_max": HIGH}, label="np.clip[lo, a_max=]"),
    row(np.clip, ANY, shapes=[((3, 4),)], kw={"min": LOW, "max": HIGH}, label="np.clip[min=, max=]"),
    row(np.ndarray.clip, ANY, shapes=[((3, 4),)], kw={"min": LOW, "max": HIGH}, label="ndarray.clip[min=, max=]"),
    row(np.ndarray.clip, ANY, shapes=[((3, 4),)], kw={"max": HIGH}, label="ndarray.clip[max=]"),
    *_initial(np.sum), *_initial(np.ndarray.sum), *_initial(np.max), *_initial(np.min), *_initial(np.amax),
    *_initial(np.ndarray.max), *_initial(np.ndarray.min),
    row(np.max, ANY, shapes=[((2, 3),)], kw={"initial": ABOVE}, label="np.max[initial= above all]"),
    row(np.max, ANY, shapes=[((2, 3),)], kw={"initial": BELOW}, label="np.max[initial= below all]"),
    row(np.min, ANY, shapes=[((2, 3),)], kw={"initial": BELOW}, label="np.min[initial= below all]"),
    row(np.max, ANY, shapes=[((2, 3),)], kw={"axis": 1, "initial": ANY, "where": WHERE},
        label="np.max[initial=, where]"),
    row(np.sum, ANY, shapes=[((2, 3),)], kw={"axis": 1, "initial": ANY, "where": WHERE},
        label="np.sum[initial=, where]"),
    row(np.reshape, ANY, (3, 2), shapes=[((2, 3),)], kw={"order": "F"}, none=(1,), label="np.reshape[order=F]"),
    row(np.reshape, ANY, (4, 6), "F", shapes=[((2, 3, 4),)], none=(1, 2), label="np.reshape[positional F]"),
    row(np.reshape, ANY, (3, 2), shapes=[((2, 3),)], kw={"order": "A"}, none=(1,), label="np.reshape[order=A]"),
    row(np.ndarray.reshape, ANY, 3, 2, shapes=[((2, 3),)], kw={"order": "F"}, none=(1, 2),
        label="ndarray.reshape[order=F]"),
    row(np.ravel, ANY, shapes=[((2, 3),), ((2, 3, 4),)], kw={"order": "F"}, label="np.ravel[order=F]"),
    row(np.ravel, ANY, "F", shapes=[((2, 3),)], none=(1,), label="np.ravel[positional F]"),
    row(np.ravel, ANY, shapes=[((2, 3),)], kw={"order": "K"}, label="np.ravel[order=K]"),
    row(np.ndarray.ravel, ANY, "F", shapes=[((2, 3),)], none=(1,), label="ndarray.ravel[F]"),
    row(np.ndarray.flatten, ANY, "F", shapes=[((2, 3),)], none=(1,), label="ndarray.flatten[F]"),
    row(np.ndarray.flatten, ANY, shapes=[((2, 3, 4),)], kw={"order": "F"}, label="ndarray.flatten[order=F]"),
    # builtins.py
    row(builtins.sum, Seq(ANY), shapes=[((None,) * 3,), (((2,), (2,)),)], kw={"start": ANY},
        label="builtins.sum[start=]"),
    row(builtins.max, Seq(ANY), shapes=[((),)], kw={"default": ANY}, label="builtins.max[empty, default=]"),
    row(builtins.max, Seq(ANY), shapes=[((None,) * 3,)], kw={"default": ANY}, label="builtins.max[default= unused]"),
    row(builtins.min, Seq(ANY), shapes=[((),)], kw={"default": ANY}, label="builtins.min[empty, default=]"),
    # numpy/reductions.py, statistics.py, scans.py
    *_initial(np.prod, NZ), *_initial(np.ndarray.prod, NZ), *_initial(np.nanmax), *_initial(np.nanmin),
    *_initial(np.nansum),
    row(np.nansum, ANY, shapes=[((2, 3),)], kw={"axis": 1, "initial": ANY, "where": WHERE},
        label="np.nansum[initial=, where]"),
    row(np.prod, NZ, shapes=[((2, 3),)], kw={"axis": 1, "initial": NZ, "where": WHERE},
        label="np.prod[initial=, where]"),
    row(np.average, ANY, shapes=[((2, 3),)], kw={"weights": Shaped(POS, (2, 3))}, label="np.average[weights= full]"),
    row(np.average, ANY, shapes=[((2, 3),)], kw={"axis": 0, "weights": Shaped(POS, (2,))},
        label="np.average[axis, weights=]"),
    row(np.average, ANY, 1, shapes=[((2, 3),)], kw={"weights": Shaped(POS, (3,)), "keepdims": True}, none=(1,),
        label="np.average[weights=, keepdims]"),
    row(np.diff, ANY, shapes=[((4,),)], kw={"prepend": ANY, "append": Shaped(ANY, (2,))},
        label="np.diff[prepend=, append= differentiated]"),
    row(np.diff, ANY, shapes=[((3, 4),)], kw={"n": 2, "axis": 0, "prepend": Shaped(ANY, (1, 4))},
        label="np.diff[n=2, axis=0, prepend=]"),
    row(np.diff, ANY, shapes=[((2, 4),)], kw={"append": ANY}, label="np.diff[scalar append=]"),
    # numpy/gathering.py
    row(np.pad, ANY, 1, shapes=[((3,),), ((2, 3),)], kw={"constant_values": ANY}, none=(1,),
        label="np.pad[constant_values= differentiated]"),
    row(np.pad, ANY, ((1, 2), (0, 1)), shapes=[((2, 3),)], kw={"constant_values": Shaped(ANY, (2, 2))}, none=(1,),
        label="np.pad[per-axis constant_values=]"),
    row(np.pad, ANY, 2, "constant", shapes=[((2, 2),)], kw={"constant_values": Shaped(ANY, (2,))}, none=(1, 2),
        label="np.pad[before/after constant_values=]"),
    # numpy/elementwise.py, interp.py
    row(np.nan_to_num, SPECIAL, shapes=[()], kw={"nan": ANY, "posinf": ANY, "neginf": ANY},
        label="np.nan_to_num[nan=, posinf=, neginf=]"),
    row(np.nan_to_num, SPECIAL, True, ANY, ANY, ANY, shapes=[(None, None, None)], none=(1,),
        label="np.nan_to_num[positional nan, posinf, neginf]"),
    row(np.nan_to_num, SPECIAL[:3], True, ANY, shapes=[(None,)], kw={"posinf": ANY}, none=(1,),
        label="np.nan_to_num[positional nan, posinf=]"),
    row(np.nan_to_num, ANY, shapes=[((2, 3),)], kw={"nan": ANY}, label="np.nan_to_num[finite, nan=]"),
    row(np.interp, WIDE, TABLE, ANY, shapes=[((2, 6), (4,))], kw={"left": ANY, "right": ANY},
        label="np.interp[left=, right=]"),
    row(np.interp, WIDE, TABLE, ANY, ANY, ANY, shapes=[((2, 6), (4,), None, None)],
        label="np.interp[positional left, right]"),
    row(np.interp, WIDE, TABLE, ANY, shapes=[((7,), (4,))], kw={"right": ANY}, label="np.interp[right= only]"),
]

PERIODIC = np.array([-170.0, -90.0, 10.0, 100.0, 200.0])  # not sorted modulo 360: the rule sorts it as NumPy does
KEYWORD_ROWS += [
    row(np.interp, Kind("angle", -400.0, 400.0), PERIODIC, ANY, shapes=[((7,), (5,))],
        kw={"period": Kind("period", 350.0, 370.0)}, label="np.interp[period=]"),
    row(np.interp, Kind("angle", -400.0, 400.0), Kind("nodes", -20.0, 20.0), ANY, shapes=[((7,), (5,), (5,))],
        kw={"period": 360.0}, label="np.interp[period=, table xp]"),
    row(np.interp, Kind("angle", -400.0, 400.0), PERIODIC, ANY, None, None, -360.0, shapes=[((7,), (5,))],
        none=(3, 4), label="np.interp[positional negative period]"),
]
