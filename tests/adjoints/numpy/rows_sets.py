"""Rows for `zygotepy/adjoints/numpy/sets.py`: unique and its NumPy 2 forms, bincount's weights, histogram."""
import numpy as np
from table_base import ANY, Kind, row

DISTINCT = Kind("distinct", -2.0, 2.0)  # random draws are distinct almost surely: unique is then a sort
UNIQUE_ROWS = [
    row(np.unique, DISTINCT, shapes=[((5,),), ((2, 3),), ((),)]),
    row(np.unique, DISTINCT, True, True, True, shapes=[((5,),), ((2, 3),)], none=(1, 2, 3),
        label="np.unique[index, inverse, counts]"),
    row(np.unique, DISTINCT, shapes=[((3, 2),)], kw={"axis": 0}, label="np.unique[axis=0]"),
    row(np.unique, DISTINCT, shapes=[((2, 3),)], kw={"axis": 1, "return_counts": True},
        label="np.unique[axis=1, counts]"),
    *(row(getattr(np, name), DISTINCT, shapes=[((5,),), ((2, 3),)])
      for name in ("unique_values", "unique_counts", "unique_inverse", "unique_all") if hasattr(np, name)),
    row(np.bincount, np.array([0, 2, 2, 1, 4]), ANY, shapes=[((5,),)]),
    row(np.bincount, np.array([0, 2, 2]), ANY, 6, shapes=[((3,),)], label="np.bincount[minlength]"),
    row(np.histogram, ANY, shapes=[((6,),)], kw={"range": (-3.0, 3.0)}, label="np.histogram[range]"),
    row(np.histogram, ANY, np.array([-3.0, 0.0, 1.0, 3.0]), shapes=[((6,),)], label="np.histogram[edges]"),
]
