"""Tracebacks that end at the user's own lines.

An exception raised while differentiating passes through generated code (`<zygotepy: f at file.py:4>`, whose lines
are the gradient's, not the user's) and through a dozen frames of zygotepy's dispatch and rules. When it leaves the
outermost entry point, its traceback is rewritten: a frame of generated code becomes a frame at the user's file and
line it came from (a stand-in frame, made by raising from code compiled under the user's file name with the line
number padded, as Jinja2 does for templates), and zygotepy's own frames are dropped, as JAX drops its internals. The
innermost frame stays when the error is not a zygotepy error (a rule's own bug, or NumPy refusing a shape inside a
rule): where it was raised is what a report needs.

`ZYGOTEPY_TRACEBACK=full` in the environment leaves tracebacks as Python made them. Before that, the entry points add
to the exception a note with the user's file and line of each generated frame (`with_user_lines`), and make a
RecursionError of generated code a `RecursionTooDeep` naming the user's function (`too_deep`).
"""
import linecache
import os
import re
import sys
import types
from collections import Counter

from .ast_adjoint.compile import LINE_MAPS, user_line
from .errors import RecursionTooDeep, ZygoteError, where_in_words

ENV = "ZYGOTEPY_TRACEBACK"
_PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__)) + os.sep
_DEF = re.compile(r"^(\s*)(?:async\s+)?def\s+(\w+)")
_STAND_INS = {}  # (file, line, function) -> a code object raising at that line


class _StandIn(Exception):
    pass


def filtering():
    return os.environ.get(ENV, "").strip().lower() not in ("full", "off", "0", "no")


def _internal(filename):
    return filename.startswith(_PACKAGE_DIR)


def _enclosing_def(filename, line, default):
    """The name of the innermost `def` around `line` of `filename` (an inlined helper's frame has no name of its own)."""
    lines = linecache.getlines(filename)
    if not 0 < line <= len(lines):
        return default
    text = lines[line - 1]
    indent = len(text) - len(text.lstrip())
    for above in reversed(lines[:line - 1]):
        found = _DEF.match(above)
        if found and len(found.group(1)) < indent:
            return found.group(2)
    return default


def _user_frames(filename, lineno):
    """The user's (file, line, function) a line of generated code ran, outermost first: an inlined helper's line
    comes after the line of each call it was inlined into. None for a file that is not generated code, [] where the
    line maps to none of the user's."""
    if filename not in LINE_MAPS:
        return None
    line, name, calls, function = lineno, filename, (), None
    while name in LINE_MAPS:  # generated code of generated code (nesting) of the user's
        user_file, line_map = LINE_MAPS[name]
        function = name[len("<zygotepy: "):].rpartition(" at ")[0]
        hit = line_map.get(line)
        line, *calls = hit if isinstance(hit, tuple) else (hit,)
        if not line:
            return []
        name = user_file
    lines = [*reversed(calls), line]
    return [(user_file, at, function if k == 0 else _enclosing_def(user_file, at, function))
            for k, at in enumerate(lines)]


def _stand_in(filename, line, function):
    """A real frame whose code is the user's file at `line`, named `function`: its traceback entry reads
    `File "file.py", line 12, in f` and shows that line. The raise spans the line's whole text, so that Python marks
    no part of it with carets (the user's expression did not raise at those columns)."""
    key = (filename, line, function)
    code = _STAND_INS.get(key)
    if code is None:
        text = linecache.getline(filename, line).rstrip()
        indent = len(text) - len(text.lstrip())
        statement = "raise(E" + " " * max(0, len(text) - indent - 8) + ")"
        code = compile("\n" * (line - 1) + " " * indent + statement if indent == 0 else
                       "\n" * (line - 2) + "if 1:\n" + " " * indent + statement if line > 1 else statement,
                       filename, "exec")
        names = {"co_name": function}
        if sys.version_info >= (3, 11):
            names["co_qualname"] = function
        code = _STAND_INS[key] = code.replace(**names)
    try:
        exec(code, {"E": _StandIn, "__name__": function})
    except _StandIn:
        tb = sys.exc_info()[2].tb_next
        return tb.tb_frame, tb.tb_lasti, tb.tb_lineno
    raise AssertionError("unreachable")


def simplify(exc):
    """Rewrite `exc.__traceback__` in place (see the module's docstring); a note says how many frames were hidden."""
    if not filtering() or exc.__traceback__ is None:
        return
    entries, tb = [], exc.__traceback__
    while tb is not None:
        entries.append(tb)
        tb = tb.tb_next
    kept, hidden = [], 0
    for k, entry in enumerate(entries):
        filename = entry.tb_frame.f_code.co_filename
        mapped = _user_frames(filename, entry.tb_lineno)
        if mapped and not _internal(mapped[0][0]):
            kept += [_stand_in(*at) for at in mapped]
        elif (mapped is not None or _internal(filename)) \
                and not (k == len(entries) - 1 and not isinstance(exc, ZygoteError)):
            hidden += 1
        else:
            kept.append((entry.tb_frame, entry.tb_lasti, entry.tb_lineno))
    if not hidden and len(kept) == len(entries) and all(e.tb_frame is f for e, (f, _, _) in zip(entries, kept)):
        return
    new = None
    for frame, lasti, line in reversed(kept):
        new = types.TracebackType(new, frame, lasti, line)
    exc.__traceback__ = new
    if hidden:
        note = (f"zygotepy: {hidden} frames of zygotepy's own code are hidden from this traceback, and generated "
                f"code is shown at the lines it came from; set {ENV}=full to see every frame")
        notes = getattr(exc, "__notes__", None)
        ours = [k for k, n in enumerate(notes or ()) if isinstance(n, str) and n.startswith("zygotepy: raised")]
        if ours:  # one note of zygotepy's per error
            notes[ours[-1]] += "\n" + note
        elif hasattr(exc, "add_note"):
            exc.add_note(note)
        else:  # Python 3.10: PEP 678's attribute
            exc.__notes__ = [*getattr(exc, "__notes__", []), note]


def with_user_lines(exc):
    """Add to an exception raised inside generated code the user's file and line of each generated frame."""
    notes, tb = [], exc.__traceback__
    while tb is not None:
        frame_file = tb.tb_frame.f_code.co_filename
        if frame_file in LINE_MAPS:
            user_file, line_map = LINE_MAPS[frame_file]
            line = line_map.get(tb.tb_lineno)
            while line and user_file in LINE_MAPS:  # nesting: generated code of generated code of the user's
                user_file, line_map = LINE_MAPS[user_file]
                line = line_map.get(line)
            if line:
                line, *calls = line if isinstance(line, tuple) else (line,)
                via = "".join(f", inlined into {user_file}, line {c}" for c in calls)
                notes.append(f"  in generated code for {tb.tb_frame.f_code.co_name} ({frame_file}, line "
                             f"{tb.tb_lineno}), from {where_in_words(user_file, line)}{via}")
        tb = tb.tb_next
    if notes:
        note = "zygotepy: raised while differentiating:\n" + "\n".join(_collapsed(notes))
        if isinstance(exc, RecursionError):
            note += (f"\nzygotepy: each level of a recursion under differentiation takes about two Python frames "
                     f"(one when run plainly), so the limit of {sys.getrecursionlimit()} allows about half of "
                     f"the depth: raise it with sys.setrecursionlimit for deeper recursion")
        if note in getattr(exc, "__notes__", ()):  # an entry point inside a nested one added it already
            return
        if hasattr(exc, "add_note"):
            exc.add_note(note)
        else:  # Python 3.10: PEP 678's attribute, which add_note fills on 3.11+
            exc.__notes__ = [*getattr(exc, "__notes__", []), note]


def too_deep(exc):
    """A RecursionError raised in generated code, as a `RecursionTooDeep` naming the user's function and line (the one
    most of the generated frames ran: the recursion), with the original's notes; None when no generated code ran (a
    recursion error of the user's own, plain code) or it was converted already (by an inner entry point).

    Called by the entry points once the stack has unwound to them, so there is room to build the error; if there is
    not (an inner entry point, still deep in the stack), the original goes on up to the next one."""
    if type(exc) is not RecursionError:
        return None

    try:
        seen, tb = Counter(), exc.__traceback__
        while tb is not None:
            seen[tb.tb_frame.f_code.co_filename, tb.tb_lineno] += 1
            tb = tb.tb_next
        found = next((hit for hit in (user_line(*k) for k, _ in seen.most_common()) if hit is not None), None)
        if found is None:
            return None
        user_file, line, function = found
        err = RecursionTooDeep(function, user_file, line, sys.getrecursionlimit())
        err.__notes__ = list(getattr(exc, "__notes__", ()))
        return err
    except RecursionError:
        return None


def _collapsed(lines):
    """Runs of one repeated line (a recursion) as the line and a count, the way Python's tracebacks print them."""
    out, k = [], 0
    while k < len(lines):
        run = k
        while run + 1 < len(lines) and lines[run + 1] == lines[k]:
            run += 1
        out.append(lines[k])
        if run - k >= 3:
            out.append(f"  [previous line repeated {run - k} more times]")
        else:
            out.extend(lines[k + 1:run + 1])
        k = run + 1
    return out
