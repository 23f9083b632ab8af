"""Rows for `zygotepy/adjoints/numpy/fills.py`: filled and evenly spaced arrays, reparameterized random draws (each
call of the target gets a fresh copy of the generator, so finite differences see the same draws)."""
import random

import numpy as np
from table_base import ANY, POS, Kind, row

HIGH = Kind("above", 2.5, 3.5)  # uniform's high, above any ANY low
SCALE = [(None, None), ((3,), None), ((2, 3), (3,))]


def draws(cls, seed):
    """The location-scale draws of a Generator or RandomState, positional parameters then a size."""
    gen = np.random.default_rng(seed) if cls is np.random.Generator else np.random.RandomState(seed)
    name = "Generator" if cls is np.random.Generator else "RandomState"
    rows = [row(getattr(cls, "uniform"), gen, ANY, HIGH, (2, 3), shapes=SCALE, label=f"{name}.uniform")]
    for method in ("normal", "laplace", "logistic", "gumbel", "lognormal"):
        rows.append(row(getattr(cls, method), gen, ANY, POS, (2, 3), shapes=SCALE, label=f"{name}.{method}"))
    # an int shape: a float one's cotangent is a NoDerivative, refused where asked (see test_numpy_functions)
    rows.append(row(cls.gamma, gen, 3, POS, (2, 3), shapes=[(None,), ((3,),)], label=f"{name}.gamma[scale]"))
    for method in ("exponential", "rayleigh"):
        rows.append(row(getattr(cls, method), gen, POS, (2, 3), shapes=[(None,), ((3,),)], label=f"{name}.{method}"))
    rows.append(row(cls.normal, gen, ANY, shapes=[(None,), ((4,),)], label=f"{name}.normal[loc only]"))
    rows += [row(cls.choice, gen, ANY, 6, shapes=[((4,),)], label=f"{name}.choice"),
             row(cls.choice, gen, ANY, (2, 2), False, shapes=[((5,),)], label=f"{name}.choice[no replacement]"),
             row(cls.choice, gen, ANY, 3, shapes=[((4,),)], kw={"p": np.array([0.1, 0.2, 0.3, 0.4])},
                 label=f"{name}.choice[p=]"),  # (a positional p that carries a gradient raises: test_numpy_functions)
             row(cls.permutation, gen, ANY, shapes=[((5,),), ((3, 2),)], label=f"{name}.permutation"),
             row(cls.permutation, gen, 5, shapes=[()], label=f"{name}.permutation[int]")]
    if cls is np.random.Generator:
        rows.append(row(cls.choice, gen, ANY, 2, shapes=[((3, 4),)], kw={"axis": 1}, label=f"{name}.choice[axis=1]"))
    return rows


FILL_ROWS = [
    row(random.Random.gauss, random.Random(3), ANY, POS, shapes=[(None, None)], label="random.Random.gauss"),
    row(np.full, (2, 3), ANY, shapes=[(None,), ((),), ((3,),), ((1, 3),)]),
    row(np.full, 4, ANY, shapes=[(None,)], label="np.full[int shape]"),
    row(np.full_like, ANY, ANY, shapes=[((2, 3), None), ((2, 3), (3,))], none=(0,)),
    row(np.linspace, ANY, ANY, shapes=[(None, None), ((3,), (3,)), ((2, 1), (3,))]),
    row(np.linspace, ANY, ANY, 4, shapes=[(None, None), ((3,), None)], label="np.linspace[num]"),
    row(np.linspace, ANY, ANY, 1, shapes=[(None, None)], label="np.linspace[num=1]"),
    row(np.linspace, ANY, ANY, 5, False, shapes=[(None, None), ((2,), (2,))], label="np.linspace[endpoint=False]"),
    row(np.linspace, ANY, ANY, 5, True, True, shapes=[(None, None), ((2,), (2,))], label="np.linspace[retstep]"),
    row(np.linspace, ANY, ANY, 3, True, False, None, 1, shapes=[((2,), (2,)), ((2, 2), (2, 2))],
        label="np.linspace[axis=1]"),
    row(np.arange, ANY, 3.0, POS, shapes=[(None, None)], label="np.arange[start, stop, step]"),
    row(np.arange, ANY, 3.0, shapes=[(None,)], label="np.arange[start, stop]"),
    row(np.arange, 0.0, 3.0, 0.25, shapes=[()], label="np.arange[constants]"),
    *draws(np.random.Generator, 7), *draws(np.random.RandomState, 8),
]
