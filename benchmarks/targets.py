"""Issue 20's targets: zygotepy's gradient against hand-written NumPy gradients, and the per-operation overhead.

    python benchmarks/targets.py [--quick] [--json PATH]

1. On workloads nobody tuned to (workloads_untuned.py, and the 100-element `logsumexp` of workloads.py), the
   hand-written gradient, the primal and `zygotepy.gradient` are timed interleaved (one batch of each per round, the
   order reversed every other round), one thread; the table gives the medians and zygotepy / hand-written against
   the targets: MLP <= 1.3, RNN <= 1.5, logsumexp <= 2 (`attention` and `soft_kmeans` have none).
2. The per-operation overhead: `opchain`, 110 elementwise and reduction operations on (2, 4) float64 arrays, timed
   the same way with every optimisation on and with every one off (a fresh copy of the function compiled in each
   state); (zygotepy - hand-written) / 110 in µs, and (zygotepy - 2 x primal) / 110 for the issue's "today about
   5 µs over twice the primal".

Every gradient is checked against the hand-written one (itself checked against central finite differences) before
it is timed; a mismatch is reported as WRONG and not timed.
"""
import os

for _var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS", "VECLIB_MAXIMUM_THREADS",
             "NUMEXPR_NUM_THREADS"):
    os.environ[_var] = "1"  # one thread: set before NumPy is first imported

import argparse
import contextlib
import json
import math
import platform
import statistics
import subprocess
import sys
import time
from dataclasses import asdict, dataclass

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path[:0] = [os.path.dirname(_HERE), _HERE]  # this checkout's zygotepy, then the workload modules

import numpy as np
from contenders import as_list
from report import fmt_time
from run import ATOL_REL, RTOL, _call_time
from workloads import WORKLOADS, check_hand_grads, fresh_copy
from workloads_untuned import OPCHAIN, OPCHAIN_OPS, UNTUNED_WORKLOADS

import zygotepy

TARGETS = {"mlp_xent": 1.3, "rnn_vec": 1.5, "logsumexp": 2.0, "attention": None, "soft_kmeans": None}  # zygotepy / hand-written


@dataclass(frozen=True)
class Mode:
    rounds: int        # interleaved rounds: one batch of every thunk per round
    min_batch: float   # seconds per batch, at least


QUICK = Mode(rounds=7, min_batch=0.003)
DEFAULT = Mode(rounds=61, min_batch=0.02)


@contextlib.contextmanager
def _optimisations(on):
    """Every zygotepy optimisation on (or off) inside the block (`zygotepy.optimizations`, which rebuilds compiled
    code under the new switches). Compiled functions are cached on the function: differentiate a fresh copy inside
    the block so it is compiled in this state."""
    import zygotepy
    if hasattr(zygotepy, "optimizations"):
        with zygotepy.optimizations(on):
            yield
        return
    from zygotepy.adjoints import registry  # (the code before the Options object: its module-level switches)
    from zygotepy.fuzz.runner import restore_optimisations, set_optimisations
    old = set_optimisations(on)
    registry.generation[0] += 1
    try:
        yield
    finally:
        restore_optimisations(old)
        registry.generation[0] += 1


def interleaved(thunks, mode):
    """`{name: median seconds per call}`: calls batched to >= min_batch, one batch of each thunk per round."""
    number = {}
    for name, thunk in thunks.items():
        thunk()  # warm
        number[name] = max(1, math.ceil(mode.min_batch / min(_call_time(thunk) for _ in range(3))))
    samples = {name: [] for name in thunks}
    order = list(thunks)
    for k in range(mode.rounds):
        for name in order if k % 2 == 0 else reversed(order):
            samples[name].append(_call_time(thunks[name], number[name]))
    return {name: statistics.median(s) for name, s in samples.items()}


def disagreement(w, f):
    """None if zygotepy's gradient of `f` (a copy of `w.fn`) matches the hand-written one, else what differs."""
    got = as_list(zygotepy.gradient(f, *w.args[:w.n_wrt], **w.const_kwargs))
    want = as_list(w.hand_grad(*w.args))
    for i, (g, h) in enumerate(zip(got, want)):
        scale = float(np.max(np.abs(h)))
        if g.shape != h.shape or not np.allclose(g, h, rtol=RTOL, atol=ATOL_REL * scale):
            return f"gradient {i}: shape {g.shape} vs {h.shape}, off by up to {float(np.max(np.abs(g - h))):.3g}"
    return None if len(got) == len(want) else f"{len(got)} gradients, expected {len(want)}"


def measure(w, mode):
    """Primal, hand-written and zygotepy medians of one workload in the current optimisation state (a row dict)."""
    f = fresh_copy(w.fn)
    row = {"workload": w.name}
    t0 = time.perf_counter()
    try:
        wrong = disagreement(w, f)
    except Exception as e:  # noqa: BLE001 - reported in the row
        wrong = f"ERROR: {type(e).__name__}: {e}"
    row["first_call"] = time.perf_counter() - t0
    if wrong:
        row["status"] = wrong if wrong.startswith("ERROR") else f"WRONG: {wrong}"
        return row
    consts = w.const_kwargs
    row.update(status="ok", **interleaved({
        "primal": lambda: w.fn(*w.args),
        "hand": lambda: w.hand_grad(*w.args),
        "zygotepy": lambda: zygotepy.gradient(f, *w.args[:w.n_wrt], **consts)}, mode))
    row["ratio"] = row["zygotepy"] / row["hand"]
    return row


def target_rows(mode):
    workloads = {w.name: w for w in [*WORKLOADS, *UNTUNED_WORKLOADS]}
    rows = []
    for name, target in TARGETS.items():
        row = measure(workloads[name], mode)
        row["target"] = target
        if row["status"] == "ok" and target is not None:
            row["met"] = row["ratio"] <= target
        rows.append(row)
    return rows


def overhead_rows(mode):
    rows = []
    for on in (True, False):
        with _optimisations(on):
            row = measure(OPCHAIN, mode)
        row.update(optimisations="on" if on else "off", ops=OPCHAIN_OPS)
        if row["status"] == "ok":
            row["per_op_over_hand"] = (row["zygotepy"] - row["hand"]) / OPCHAIN_OPS
            row["per_op_over_2x_primal"] = (row["zygotepy"] - 2 * row["primal"]) / OPCHAIN_OPS
        rows.append(row)
    return rows


def markdown(targets, overheads):
    lines = ["| workload | primal | hand-written | zygotepy | zygotepy / hand-written | target |",
             "| --- | --- | --- | --- | --- | --- |"]
    for r in targets:
        if r["status"] != "ok":
            lines.append(f"| {r['workload']} | {r['status']} |  |  |  |  |")
            continue
        target = "none" if r["target"] is None else f"≤ {r['target']}: {'met' if r['met'] else 'missed'}"
        lines.append(f"| {r['workload']} | {fmt_time(r['primal'])} | {fmt_time(r['hand'])} | "
                     f"{fmt_time(r['zygotepy'])} | {r['ratio']:.2f} | {target} |")
    lines += ["", f"Per-operation overhead: `opchain`, {OPCHAIN_OPS} operations on (2, 4) float64 arrays.", "",
              "| optimisations | primal | hand-written | zygotepy | zygotepy / hand-written "
              "| (zygotepy - hand-written) / op | (zygotepy - 2 x primal) / op |",
              "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in overheads:
        if r["status"] != "ok":
            lines.append(f"| {r['optimisations']} | {r['status']} |  |  |  |  |  |")
            continue
        lines.append(f"| {r['optimisations']} | {fmt_time(r['primal'])} | {fmt_time(r['hand'])} | "
                     f"{fmt_time(r['zygotepy'])} | {r['ratio']:.2f} | {r['per_op_over_hand'] * 1e6:.2f} µs | "
                     f"{r['per_op_over_2x_primal'] * 1e6:.2f} µs |")
    return lines


def machine():
    try:
        commit = subprocess.run(["git", "-C", _HERE, "rev-parse", "--short", "HEAD"], capture_output=True, text=True,
                                check=False).stdout.strip()
    except OSError:
        commit = "?"
    return {"platform": platform.platform(), "cpu_count": os.cpu_count(), "python": sys.version.split()[0],
            "numpy": np.__version__, "zygotepy": os.path.dirname(zygotepy.__file__), "commit": commit,
            "load_average": os.getloadavg(), "threads": os.environ["OMP_NUM_THREADS"]}


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few rounds of short batches (a few seconds)")
    parser.add_argument("--json", metavar="PATH", help="write the raw numbers here")
    opts = parser.parse_args(argv)
    mode = QUICK if opts.quick else DEFAULT
    start = time.perf_counter()
    check_hand_grads([w for w in [*WORKLOADS, *UNTUNED_WORKLOADS, OPCHAIN] if w.name in TARGETS or w is OPCHAIN])
    info = machine()
    targets = target_rows(mode)
    overheads = overhead_rows(mode)
    elapsed = time.perf_counter() - start
    print("# zygotepy: issue 20 targets" + (" (--quick)" if opts.quick else ""))
    print()
    print(", ".join(f"{k}: {v}" for k, v in info.items()))
    print(f"medians of {mode.rounds} interleaved rounds of >= {mode.min_batch * 1e3:g} ms batches; hand-written "
          "gradients verified against central finite differences")
    print()
    print("\n".join(markdown(targets, overheads)))
    print()
    print(f"total run time {elapsed:.1f} s")
    if opts.json:
        with open(opts.json, "w") as fh:
            json.dump({"machine": info, "mode": asdict(mode), "elapsed": elapsed, "targets": targets,
                       "per_op_overhead": overheads}, fh, indent=1)


if __name__ == "__main__":
    main()
