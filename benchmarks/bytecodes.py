"""The per-operation overhead counted in Python bytecodes and calls, which no noise moves.

    python benchmarks/bytecodes.py

targets.py times `opchain` (110 elementwise and reduction operations on (2, 4) float64 arrays) against its
hand-written gradient; on a shared machine those times move by a factor of two from one run to the next. This counts
instead what the Python interpreter executes for one gradient: bytecodes and Python calls (a `sys.settrace` opcode
trace), zygotepy's minus the hand-written gradient's, per operation, with every optimisation on and with every one
off; and which functions execute most of them. The NumPy work done in C is not counted: an operation's Python
bookkeeping is what the plain form adds, and what the optimisation passes remove. The same counts every run.
"""
import collections
import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]  # this checkout's zygotepy, then the workload modules

import zygotepy  # noqa: E402
from workloads import fresh_copy  # noqa: E402
from workloads_untuned import OPCHAIN, OPCHAIN_OPS  # noqa: E402


def count(run):
    """(bytecodes, Python calls, {function: bytecodes}) of one call of `run`."""
    per = collections.Counter()
    calls = [0]

    def tracer(frame, event, arg):
        if event == "call":
            calls[0] += 1
            frame.f_trace_opcodes = True
        elif event == "opcode":
            code = frame.f_code
            per[f"{code.co_name} ({os.path.basename(code.co_filename)}:{code.co_firstlineno})"] += 1
        return tracer

    sys.settrace(tracer)
    try:
        run()
    finally:
        sys.settrace(None)
    return sum(per.values()), calls[0], per


def main():
    args = OPCHAIN.args[:OPCHAIN.n_wrt]
    for _ in range(3):
        OPCHAIN.hand_grad(*OPCHAIN.args)
    hand, hand_calls, _ = count(lambda: OPCHAIN.hand_grad(*OPCHAIN.args))
    print(f"opchain, {OPCHAIN_OPS} operations: hand-written gradient {hand} bytecodes, {hand_calls} calls")
    for on in (True, False):
        with zygotepy.optimizations(on):
            f = fresh_copy(OPCHAIN.fn)
            for _ in range(3):
                zygotepy.gradient(f, *args)
            total, calls, per = count(lambda: zygotepy.gradient(f, *args))
        print(f"optimisations {'on ' if on else 'off'}: {total} bytecodes, {calls} calls; over hand-written, per "
              f"operation: {(total - hand) / OPCHAIN_OPS:.0f} bytecodes, {(calls - hand_calls) / OPCHAIN_OPS:.1f} calls")
        for name, n in per.most_common(6):
            print(f"    {n:7d}  {name}")


if __name__ == "__main__":
    main()
