"""Shrink a failing program to a small reproducer that fails the same way, and print it as a self-contained snippet.

Greedy passes until nothing more can go: delete a statement (a compound one with its whole block), unwrap a compound
statement (its body, dedented, in its place), drop terms of a sum, replace a call by its argument and an assigned
value by a constant. A candidate is kept when it compiles, runs plainly, and the checker gives the same outcome at the
same stage (for a crash, the same exception type).
"""
import dataclasses
import re
import time

import numpy as np

from .check import check_program

_CALL = re.compile(r"(?:math|np)\.\w+\(")


def signature(result):
    """What a shrunk program must keep: outcome, stage and, for a crash, the exception's type."""
    kind = result["message"].split(":", 1)[0].strip() if result["outcome"] == "crash" else ""
    return result["outcome"], result.get("stage", ""), kind


def _indent(line):
    return len(line) - len(line.lstrip())


def _block_end(lines, i):
    """Index just past line i's statement (its indented block included)."""
    j = i + 1
    if lines[i].rstrip().endswith(":"):
        while j < len(lines) and (not lines[j].strip() or _indent(lines[j]) > _indent(lines[i])):
            j += 1
    return j


def _matching(text, open_at):
    depth = 0
    for k in range(open_at, len(text)):
        depth += {"(": 1, ")": -1}.get(text[k], 0)
        if depth == 0:
            return k
    return -1


def _top_level_split(text, sep):
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(text):
        depth += {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}.get(ch, 0)
        if depth == 0 and text.startswith(sep, k):
            parts.append(text[start:k])
            start = k + len(sep)
    return parts + [text[start:]]


def _line_variants(line):
    """Simpler versions of one line, simplest first."""
    out = []
    stripped, pad = line.strip(), line[:_indent(line)]
    m = re.match(r"(\w+(?:\[[^\]]*\])?\s*[-+*]?=\s*)(.+)$", stripped)
    if m and not stripped.startswith(("def ", "if ", "elif ", "while ", "for ")):
        out.append(pad + m.group(1) + "0.5")
    m = re.match(r"return (.+)$", stripped)
    if m:
        terms = _top_level_split(m.group(1), " + ")
        if len(terms) > 1:
            out += [pad + "return " + " + ".join(terms[:k] + terms[k + 1:]) for k in range(len(terms))]
    for call in _CALL.finditer(line):
        close = _matching(line, call.end() - 1)
        inner = line[call.end():close]
        if close > 0 and len(_top_level_split(inner, ",")) == 1:
            out.append(line[:call.start()] + "(" + inner + ")" + line[close + 1:])
    return out


def undefined_names(src):
    """Names `program` reads that nothing binds (a deleted definition left in an untaken branch still runs plainly,
    but makes a confusing reproducer)."""
    import ast
    import builtins
    tree = ast.parse(src)
    bound = set(dir(builtins))
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.add(node.id)
        elif isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            bound.add(node.name)
        elif isinstance(node, ast.arg):
            bound.add(node.arg)
        elif isinstance(node, ast.alias):
            bound.add((node.asname or node.name).split(".")[0])
    return {n.id for n in ast.walk(tree) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)} - bound


def shrink(prog, result, check=check_program, budget_s=60.0, max_checks=400):
    """(smaller Program that fails the same way, its result, checks made)."""
    want = signature(result)
    best, best_result = prog, result
    checks, t0 = 0, time.monotonic()

    def fails_alike(lines):
        nonlocal checks, best, best_result
        if checks >= max_checks or time.monotonic() - t0 > budget_s:
            return False
        src = "\n".join(lines) + "\n"
        try:
            compile(src, "<shrink>", "exec")
        except SyntaxError:
            return False
        if undefined_names(src):
            return False
        checks += 1
        cand = dataclasses.replace(prog, src=src)
        res = check(cand)
        if signature(res) == want:
            best, best_result = cand, res
            return True
        return False

    lines = prog.src.splitlines()
    changed = True
    while changed and checks < max_checks and time.monotonic() - t0 < budget_s:
        changed = False
        i = len(lines) - 1
        while i >= 0:  # delete statements, last first (later code reads earlier values)
            if lines[i].strip() and not lines[i].startswith("def program") and i < len(lines):
                cand = lines[:i] + lines[_block_end(lines, i):]
                if fails_alike(cand):
                    lines, changed = cand, True
            i = min(i - 1, len(lines) - 1)
        i = 0
        while i < len(lines):  # unwrap compound statements
            if lines[i].rstrip().endswith(":") and _indent(lines[i]) > 0:
                end = _block_end(lines, i)
                body = [ln[4:] if ln.strip() else ln for ln in lines[i + 1:end]]
                cand = lines[:i] + body + lines[end:]
                if fails_alike(cand):
                    lines, changed = cand, True
                    continue
            i += 1
        for i in range(len(lines)):  # simplify expressions
            for variant in _line_variants(lines[i]) if i < len(lines) else ():
                cand = lines[:i] + [variant] + lines[i + 1:]
                if fails_alike(cand):
                    lines, changed = cand, True
                    break
    return best, best_result, checks


def _arg_repr(kind, v):
    if kind == "array":
        return "np.array([" + ", ".join(repr(float(e)) for e in np.asarray(v).ravel()) + "])"
    return repr(v)


def snippet(prog, result):
    """The program and the call that shows the failure, as one Python file."""
    args = ", ".join(_arg_repr(kind, v) for _, kind, v in prog.args)
    stage = result.get("stage", "")
    lines = [f"# zygotepy fuzz: {result['outcome']} at stage '{stage}' (seed {prog.seed}, program {prog.index}, "
             f"{prog.flavour})"]
    lines += ["# " + ln for ln in result["message"].strip().splitlines()[:6]]
    lines += [prog.src.rstrip(), "", "", 'if __name__ == "__main__":',
              "    from zygotepy import gradient, pullback, hessian", "    import copy",
              f"    args = ({args}{',' if len(prog.args) == 1 else ''})"]
    if stage.startswith("pullback"):
        lines += ["    y, back = pullback(program, *copy.deepcopy(args))", "    print(y, program(*copy.deepcopy(args)))",
                  "    print(back(1.0))", "    print(back(1.0))"]
    elif stage == "hessian":
        lines += ["    print(hessian(lambda t: program(t, *args[1:]), args[0]))"]
    elif stage.startswith("nested") or stage.startswith("second"):
        lines += ["    print(gradient(lambda t: gradient(program, t, *args[1:])[0], args[0]))"]
    elif stage.startswith("foreign"):
        lib = stage.split()[-1]
        conv = {"jax": "import jax; jax.config.update('jax_enable_x64', True); import jax.numpy as L",
                "torch": "import torch as L", "array_api_strict": "import array_api_strict as L"}[lib]
        lines += [f"    {conv}", "    fargs = tuple(L.asarray(a) if isinstance(a, np.ndarray) else a for a in args)",
                  "    print(gradient(program, *fargs))"]
    else:
        lines += ["    mine = copy.deepcopy(args)", "    print(gradient(program, *mine))"]
        if result["outcome"] == "changed_argument":
            lines += ["    plain = copy.deepcopy(args)", "    program(*plain)", "    print(mine, plain)"]
    return "\n".join(lines) + "\n"
