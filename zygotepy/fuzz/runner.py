"""Run the fuzzer: programs `seed:0 .. seed:count-1`, split over worker processes, then shrink one failure per
distinct cause and write the report (counts per outcome, the clear-error share by construct, the skipped share,
timing, and the shrunk reproducers)."""
import collections
import json
import multiprocessing
import re
import sys
import time

from ..adjoints import registry
from ..options import OPTIONS
from . import check
from .check import BUGS, OUTCOMES, check_program
from .generate import CONSTRUCTS, generate
from .shrink import shrink, snippet


def set_optimisations(on):
    """Switch every optimisation on or off (zygotepy.options); returns the previous switches (for
    `restore_optimisations`). Compiled code is rebuilt under the new switches."""
    old = OPTIONS.set(**dict.fromkeys(OPTIONS.names(), on))
    registry.generation[0] += 1
    return old


def restore_optimisations(old):
    OPTIONS.set(**old)
    registry.generation[0] += 1


def _work(job):
    """Worker: check programs seed:lo .. seed:hi-1; returns their summaries (failures with the program)."""
    seed, lo, hi, opt = job
    import zygotepy  # noqa: F401  (imported before the alarm starts counting)
    if not opt:
        set_optimisations(False)
    out = []
    for index in range(lo, hi):
        prog = generate(seed, index)
        res = check_program(prog)
        res.update(index=index, tags=sorted(prog.tags), flavour=prog.flavour)
        out.append(res)
    return out


def run(seed=0, count=100, jobs=1, opt=True, shrink_budget=60.0, max_shrink=20, log=None):
    """Check `count` programs; returns the report (a dict, JSON-ready)."""
    t0 = time.perf_counter()
    chunk = max(1, min(50, count // max(1, jobs * 4) or 1))
    tasks = [(seed, lo, min(count, lo + chunk), opt) for lo in range(0, count, chunk)]
    results = []
    if jobs > 1:
        ctx = multiprocessing.get_context("fork" if sys.platform != "win32" else "spawn")
        with ctx.Pool(jobs, maxtasksperchild=20) as pool:
            for part in pool.imap_unordered(_work, tasks):
                results += part
                if log:
                    log(f"\r{len(results)}/{count} programs checked")
    else:
        old = None if opt else set_optimisations(False)
        try:
            for task in tasks:
                results += _work((*task[:3], True))
                if log:
                    log(f"\r{len(results)}/{count} programs checked")
        finally:
            if old:
                restore_optimisations(old)
    if log:
        log("\n")
    checked = time.perf_counter() - t0
    results.sort(key=lambda r: r["index"])
    report = summarise(results, seed, count, jobs, opt, checked)
    t1 = time.perf_counter()
    old = None if opt else set_optimisations(False)
    try:
        report["failures"] = shrink_failures(results, seed, shrink_budget, max_shrink, log)
    finally:
        if old:
            restore_optimisations(old)
    report["timing"]["shrink_s"] = round(time.perf_counter() - t1, 2)
    return report


def cause(result):
    """A failure's cause, as best told from its outcome, stage and message (numbers and names taken out)."""
    msg = result["message"].strip().splitlines()[0] if result["message"].strip() else ""
    msg = re.sub(r"<fuzz program [\d:]+>(:\d+)?", "<file>", msg)
    msg = re.sub(r"'\w+'", "'_'", msg)
    msg = re.sub(r"-?\d+(\.\d+)?(e-?\d+)?", "N", msg)
    msg = re.sub(r"\[[^\]]*\]", "[..]", msg)
    msg = re.sub(r"argument \w+:", "argument:", msg)
    return f"{result['outcome']} | {result['stage']} | {msg[:160]}"


def summarise(results, seed, count, jobs, opt, seconds):
    counts = collections.Counter(r["outcome"] for r in results)
    by_tag = {}
    for tag in CONSTRUCTS:
        with_tag = [r for r in results if tag in r["tags"]]
        if with_tag:
            n_clear = sum(r["outcome"] == "clear_error" for r in with_tag)
            n_bug = sum(r["outcome"] in BUGS for r in with_tag)
            by_tag[tag] = {"programs": len(with_tag), "clear_error_share": round(n_clear / len(with_tag), 4),
                           "bug_share": round(n_bug / len(with_tag), 4)}
    times = sorted(r["time"] for r in results)
    clear_causes = collections.Counter(cause(r) for r in results if r["outcome"] == "clear_error")
    return {
        "seed": seed, "count": count, "jobs": jobs, "optimisations": "on" if opt else "off",
        "outcomes": {k: counts.get(k, 0) for k in OUTCOMES},
        "bugs": sum(counts.get(k, 0) for k in BUGS),
        "skipped_share": round(counts.get("skipped", 0) / max(1, len(results)), 4),
        "clear_error_share_by_construct": by_tag,
        "clear_error_causes": dict(clear_causes.most_common(15)),
        "timing": {"wall_s": round(seconds, 2), "per_program_ms_mean": round(1000 * sum(times) / max(1, len(times)), 1),
                   "per_program_ms_median": round(1000 * times[len(times) // 2], 1) if times else 0,
                   "per_program_ms_max": round(1000 * times[-1], 1) if times else 0},
    }


FEATURES = {"np.r_": r"np\.r_", "view": r"= \w+\[(::2|1:|1:4)\]", "alias": r"z\d+ = ", "h_rebind": "h_rebind",
            "h_inplace": "h_inplace", "h_none": "h_none", "h_setlist": "h_setlist", "h_rec": "h_rec",
            "h_apply": "h_apply", "lambda": "lambda", "nested def": r"def inner", "closure": r"def cl\d",
            "while": "while ", "for": "for ", "break": "break", "continue": "continue", "if": r"\bif ",
            "list": r"\bL\w* = \[", "dict": r"D\d+", "Box": "Box", "Pt": "Pt", "int m": r"\bm\b",
            "int n": r"\[n\]", "int k": r"\bk\b", "in-place array": r"\b[xyzu]\d*(\[[^\]]+\] [-+*]?=| [-+*]= )"}


def features(src):
    """The notable constructs left in a (shrunk) program: what tells apart two failures of the same message."""
    body = src.split("def program", 1)[-1]
    return tuple(sorted(k for k, pat in FEATURES.items() if re.search(pat, body)))


def shrink_failures(results, seed, budget, max_shrink, log=None):
    """One shrunk reproducer per distinct cause: failures grouped by outcome, stage and message; up to two of each
    group shrunk, and the shrunk ones grouped again by the constructs they keep (`features`)."""
    groups = collections.OrderedDict()
    for r in results:
        if r["outcome"] in BUGS:
            groups.setdefault(cause(r), []).append(r)
    out, seen, shrunk = [], set(), 0
    for why, rs in groups.items():
        for first in rs[:2]:
            prog = generate(seed, first["index"])
            entry = {"cause": why, "outcome": first["outcome"], "stage": first["stage"],
                     "programs": [r["index"] for r in rs], "message": first["message"], "original_src": prog.src}
            if shrunk < max_shrink and first["outcome"] != "hang":
                shrunk += 1
                if log:
                    log(f"shrinking {why}\n")
                small, res, checks = shrink(prog, first, budget_s=budget)
                entry.update(shrunk_src=small.src, shrink_checks=checks, snippet=snippet(small, res),
                             message=res["message"], features=features(small.src))
            else:
                entry.update(snippet=snippet(prog, first), features=None)
            key = (why, entry["features"])
            if key not in seen:
                seen.add(key)
                out.append(entry)
    return out


def format_report(report):
    lines = [f"zygotepy fuzz: seed {report['seed']}, {report['count']} programs, optimisations "
             f"{report['optimisations']}, {report['jobs']} job(s)"]
    lines.append("outcomes: " + ", ".join(f"{k} {v}" for k, v in report["outcomes"].items()))
    lines.append(f"bugs: {report['bugs']}   skipped share: {100 * report['skipped_share']:.2f}%")
    t = report["timing"]
    lines.append(f"time: {t['wall_s']} s wall, {t['per_program_ms_mean']} ms mean per program (median "
                 f"{t['per_program_ms_median']}, max {t['per_program_ms_max']}), shrinking {t.get('shrink_s', 0)} s")
    lines.append("clear-error (and bug) share by construct:")
    for tag, d in sorted(report["clear_error_share_by_construct"].items(), key=lambda kv: -kv[1]["clear_error_share"]):
        lines.append(f"  {tag:20s} {d['programs']:6d} programs  clear {100 * d['clear_error_share']:5.1f}%  "
                     f"bugs {100 * d['bug_share']:5.1f}%")
    if report.get("clear_error_causes"):
        lines.append("clear errors by cause:")
        lines += [f"  {v:5d}  {k}" for k, v in report["clear_error_causes"].items()]
    for k, f in enumerate(report.get("failures", [])):
        lines.append(f"\n=== failure {k + 1}: {f['cause']}  ({len(f['programs'])} programs: {f['programs'][:10]}); "
                     f"keeps {', '.join(f['features'] or ('?',))}")
        lines.append(f.get("snippet", ""))
    return "\n".join(lines)


def main(argv=None):
    import argparse
    ap = argparse.ArgumentParser(prog="python -m zygotepy.fuzz", description=__doc__)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--count", type=int, default=200)
    ap.add_argument("--jobs", type=int, default=1)
    ap.add_argument("--no-opt", action="store_true", help="switch every optimisation off (zygotepy.options)")
    ap.add_argument("--out", help="also write the report as JSON here")
    ap.add_argument("--shrink-budget", type=float, default=60.0, help="seconds of shrinking per failure")
    ap.add_argument("--max-shrink", type=int, default=20, help="shrink at most this many distinct failures")
    ap.add_argument("--timeout", type=int, default=10, help="seconds per program before it counts as a hang")
    ns = ap.parse_args(argv)
    check.TIMEOUT_S[0] = ns.timeout
    progress = (lambda s: (sys.stderr.write(s), sys.stderr.flush())) if sys.stderr.isatty() else None
    report = run(ns.seed, ns.count, ns.jobs, not ns.no_opt, ns.shrink_budget, ns.max_shrink, progress)
    print(format_report(report))
    if ns.out:
        with open(ns.out, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1, default=str)
    return 1 if report["bugs"] else 0


if __name__ == "__main__":
    sys.exit(main())
