"""Markdown output of run.py: one table per workload and the summary lines (with the numbers behind them, for JSON).

A result here is run.py's `Result`: `status`, `detail`, `median` and `first_call` in seconds, `peak_bytes`.
"""

__all__ = ["fmt_time", "summary", "table"]


def fmt_time(s):
    if s is None:
        return "-"
    sign, s = ("-" if s < 0 else ""), abs(s)
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{sign}{s / scale:.3g} {unit}"
    return f"{sign}{s / 1e-9:.3g} ns"


def fmt_bytes(n):
    if n is None:
        return "n/a"
    for unit, scale in (("MB", 1 << 20), ("kB", 1 << 10)):
        if n >= scale:
            return f"{n / scale:.3g} {unit}"
    return f"{n} B"


def ratio(a, b):
    return a / b if a is not None and b else None


def fmt_ratio(r):
    if r is None:
        return "-"
    return f"{r:,.0f}×" if r >= 1000 else f"{r:.3g}×"


def table(w, results):
    primal = results["primal"].median
    hand = results["hand-written"].median
    lines = [f"### {w.name}: {w.title}", "",
             "| contender | median time | / primal | / hand-written | first call - steady | peak memory |",
             "| --- | --- | --- | --- | --- | --- |"]
    for name, r in results.items():
        if r.status == "ok" and r.median is None:  # one long first call, not repeated (--quick)
            cells = [f"{fmt_time(r.first_call)} (first call only)", "≤ " + fmt_ratio(ratio(r.first_call, primal)),
                     "≤ " + fmt_ratio(ratio(r.first_call, hand)), "not measured", "n/a"]
        elif r.status == "ok":
            cells = [fmt_time(r.median), fmt_ratio(ratio(r.median, primal)), fmt_ratio(ratio(r.median, hand)),
                     fmt_time(r.first_call - r.median), fmt_bytes(r.peak_bytes)]
        else:
            text = r.status if r.status == "not installed" else f"{r.status}: {r.detail}"
            cells = [text.replace("|", "\\|"), "", "", "", ""]
        lines.append(f"| {name} | " + " | ".join(cells) + " |")
    return "\n".join(lines)


def summary(results, physics):
    def median(w, c):
        r = results.get(w, {}).get(c)
        return r.median if r is not None and r.status == "ok" else None

    def why(w, c):
        r = results.get(w, {}).get(c)
        if r is None:
            return "n/a (not run)"
        return f"n/a ({r.detail if r.status == 'ok' else r.status})"

    out = {}
    lines = []
    r = ratio(median("pow", "zygotepy"), median("pow", "primal"))
    out["pow_gradient_over_primal"] = r
    lines.append(f"pow gradient/primal = {f'{r:.2f}' if r else why('pow', 'zygotepy')} (target <= 5)")
    r = ratio(median("mlp", "zygotepy"), median("mlp", "hand-written"))
    out["mlp_zygotepy_over_hand"] = r
    lines.append(f"MLP zygotepy/hand-written = {f'{r:.2f}' if r else why('mlp', 'zygotepy')} (target <= 1.3)")
    if physics.get("status") == "ok":
        ms = physics["first_call_extra"] * 1e3
        out["first_call_20_line_ms"] = ms
        lines.append(f"first call of 20-line function = {ms:.1f} ms (target <= 20 ms; steady call "
                     f"{fmt_time(physics['steady'])})")
    else:
        out["first_call_20_line_ms"] = None
        lines.append(f"first call of 20-line function = n/a ({physics.get('status')}: {physics.get('detail', '')})")
    for w in ("pow", "chain"):
        zy = median(w, "zygotepy")
        parts = []
        for other in ("autograd", "torch", "jax"):
            s = ratio(median(w, other), zy)
            out[f"{w}_speedup_vs_{other}"] = s
            parts.append(f"{s:.1f}× vs {other}" if s else f"vs {other} {why(w, other) if zy else 'n/a'}")
        lines.append(f"{w}: zygotepy speedup " + ", ".join(parts))
    parts = []
    for w in results:
        r = ratio(median(w, "zygotepy"), median(w, "hand-written"))
        out[f"{w}_zygotepy_over_hand"] = r
        parts.append(f"{w} {r:.2f}" if r else f"{w} {why(w, 'zygotepy')}")
    lines.append("zygotepy/hand-written: " + ", ".join(parts))
    for mine, theirs in (("zygotepy[jax]", "jax"), ("zygotepy[jax.jit]", "jax.jit")):
        parts = []
        for w in results:
            r = ratio(median(w, mine), median(w, theirs))
            out[f"{w}_{mine}_over_{theirs}"] = r
            if r:
                parts.append(f"{w} {r:.2f}")
        lines.append(f"{mine}/{theirs} (steady state, where both were timed): " + (", ".join(parts) or "none"))
    return lines, out
