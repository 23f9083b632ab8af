"""The random number generators a run of a function may draw from, and their states: what `checkpoint` puts back
before recomputing its function, and what the passes of a forward-mode derivative put back before each pass after
the first, so that every run draws the numbers the first drew (a different draw per pass gave a Hessian of no single
realisation, and a recomputation another layer's dropout; found by a probe of random code).

The sources: the global states of `np.random` and `random` (`from random import random` draws from the latter), every
generator among the module globals of the function (and of the functions it holds), and those held, a few levels
deep, in its closure, its bound object, a partial's arguments and the call's arguments (a NumPy Generator, a legacy
RandomState, a bit generator a Generator is made from inside, a `random.Random`).
"""
import functools
import random
import types

import numpy as np

_KINDS = (np.random.Generator, np.random.RandomState, np.random.BitGenerator, random.Random)


def random_sources(f, args=()):
    """The generators a run of `f(*args)` may draw from (see the module docstring)."""
    found, seen, scanned = [np.random, random], set(), set()

    def walk(v, depth):
        if id(v) in seen or depth > 3 or isinstance(v, (str, bytes, int, float, complex, np.ndarray, type)):
            return
        seen.add(id(v))
        if isinstance(v, _KINDS):
            found.append(v)
        elif isinstance(v, (list, tuple, set, frozenset)):
            for x in v:
                walk(x, depth + 1)
        elif isinstance(v, dict):
            for x in v.values():
                walk(x, depth + 1)
        elif isinstance(v, functools.partial):
            walk(v.func, depth)
            walk((*v.args, *v.keywords.values()), depth + 1)
        elif isinstance(v, types.MethodType):
            walk(v.__self__, depth + 1)
            walk(v.__func__, depth)
        elif isinstance(v, types.FunctionType):
            for cell in v.__closure__ or ():
                try:
                    walk(cell.cell_contents, depth + 1)
                except ValueError:  # (an empty cell)
                    pass
            if id(v.__globals__) not in scanned:
                scanned.add(id(v.__globals__))
                found.extend(g for g in list(v.__globals__.values()) if isinstance(g, _KINDS))
        elif not isinstance(v, types.ModuleType) and type(getattr(v, "__dict__", None)) is dict:
            call = getattr(type(v), "__call__", None)
            if isinstance(call, types.FunctionType):
                walk(call, depth)
            for x in list(vars(v).values()):
                walk(x, depth + 1)

    walk(f, 0)
    walk(tuple(args), 0)
    unique = {id(r): r for r in found}
    return list(unique.values())


def state_of(source):
    if isinstance(source, np.random.Generator):
        return source.bit_generator.state
    if isinstance(source, np.random.BitGenerator):
        return source.state
    if source is np.random:
        return np.random.get_state()
    return source.getstate() if source is random or isinstance(source, random.Random) else source.get_state()


def set_state(source, state):
    if isinstance(source, np.random.Generator):
        source.bit_generator.state = state
    elif isinstance(source, np.random.BitGenerator):
        source.state = state
    elif source is np.random:
        np.random.set_state(state)
    elif source is random or isinstance(source, random.Random):
        source.setstate(state)
    else:
        source.set_state(state)


def states(sources):
    return [(r, state_of(r)) for r in sources]


def put_back(saved):
    for r, state in saved:
        set_state(r, state)
