"""The switches of zygotepy's optimisations, in one object.

Every optimisation is a rewrite that must change no gradient: with all of them off, the compiler emits the plain form
(`y, y_back = J(f, a, b)` forward, `ga, gb = y_back(dy)` backward) and every test still passes. Tests, the program
generator's `--no-opt` mode and `show_adjoint(f)` switch them off; users may too, to rule an optimisation out when a
gradient looks wrong (`zygotepy.optimizations(False)`).

This module sits at the bottom of the layers (it imports nothing of the package) because the switches are read by
every layer: the compiler's passes, the runtime's accumulation and the rules' buffer reuse. Switching is done by the
entry point `zygotepy.optimizations`, which also invalidates compiled code, since most switches act at transform time.

The environment variable `ZYGOTEPY_OPTIMIZATIONS=off` (or `0`, `false`) starts a process with every switch off, so
that a script, a notebook or the test suite can be run in the plain form without editing it.
"""
import os
from dataclasses import dataclass, fields


@dataclass
class Options:
    """One flag per optimisation; all on by default."""
    scalar_paths: bool = True      # Python-number operations paste their derivative in, behind a type guard
    loop_copies: bool = True       # a loop on Python numbers gets a guard-free second copy (optimize/loop_copies.py)
    direct_rules: bool = True      # a built-in rule is called directly, not through J, behind an identity guard
    array_paths: bool = True       # operations on real NumPy arrays paste their derivative in (optimize/)
    item_paths: bool = True        # items of 1-d float64 arrays read and stored in loops skip the rules (optimize/)
    inline: bool = True            # small callees are inlined behind a guard (speculate)
    nullness: bool = True          # the backward's None tests are dropped where a cotangent is known (nullness)
    accumulate: bool = True        # rules add to the running cotangents they are handed
    acc_in_place: bool = True      # generated code adds into an array cotangent only it holds (runtime.acc_var)
    reuse_buffers: bool = True     # rule backs compute into buffers only they hold (adjoints/handover)
    dead_joins: bool = True        # joins nothing reads are dropped (ir)
    fold_literals: bool = True     # literal arithmetic is computed at transform time (lower)
    known_containers: bool = True  # no `is_native` guard on the tuples, lists and dicts the lowering built
    nested_size: bool = True       # code an outer level transforms again is written small, not fast
    free_shifts: bool = True       # a shift softmax and logsumexp cancel carries no gradient (optimize/shifts.py)

    def set(self, **flags):
        """Set the named flags; returns the previous values of those flags (for a later `set(**old)`)."""
        names = {f.name for f in fields(self)}
        unknown = sorted(set(flags) - names)
        if unknown:
            raise TypeError(f"zygotepy has no optimization named {', '.join(map(repr, unknown))}; "
                            f"the optimizations are {', '.join(sorted(names))}")
        old = {name: getattr(self, name) for name in flags}
        for name, value in flags.items():
            setattr(self, name, bool(value))
        return old

    def names(self):
        return [f.name for f in fields(self)]


OPTIONS = Options()
if os.environ.get("ZYGOTEPY_OPTIMIZATIONS", "on").strip().lower() in ("off", "0", "false", "no"):
    OPTIONS.set(**dict.fromkeys(OPTIONS.names(), False))
