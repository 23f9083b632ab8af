"""The package's layers, bottom first, and a check of every import in it (those inside functions included).

A module imports only from its own layer's group or from lower layers; the rule tables (`adjoints/*`, forward mode's
tangent rules) and the compiler (`ast_adjoint/*`) are siblings that never import each other. docs/architecture.md
explains the table. The imports that break it today are listed in KNOWN: the consolidation removes them one by one,
and this test fails on a new one, and on an entry of KNOWN that no longer exists (so the list only shrinks).
"""
import ast
import pathlib

import zygotepy

ROOT = pathlib.Path(zygotepy.__file__).parent

# the per-call runtime (the journal of updates in place, the generated code's helpers, the per-call context): below
# the registry; J dispatch finds rules in the registry, so it sits above it, below the rules and the compiler that call
# it (it gets the compiler's `derive` injected, ast_adjoint/compile.py)
RUNTIME = {"zygotepy.ast_adjoint.runtime", "zygotepy.ast_adjoint.accumulate", "zygotepy.ast_adjoint.guards_runtime",
           "zygotepy.ast_adjoint.lazy_watch", "zygotepy.ast_adjoint.mutate"}
# J dispatch and its parts
DISPATCH = {"zygotepy.ast_adjoint.dispatch", "zygotepy.ast_adjoint.derived", "zygotepy.ast_adjoint.pullbacks",
            "zygotepy.ast_adjoint.keywords", "zygotepy.ast_adjoint.call_checks", "zygotepy.ast_adjoint.class_lookup",
            "zygotepy.ast_adjoint.array_operands", "zygotepy.ast_adjoint.assumed_globals"}

FORWARD_RULES = {"zygotepy.forward.rules", "zygotepy.forward.linalg_rules", "zygotepy.forward.numpy_rules",
                 "zygotepy.forward.scipy_rules"}


def layer(module):
    """(rank, group) of a module of the package."""
    if module in ("zygotepy.errors", "zygotepy.structgrad", "zygotepy.options"):
        return 1, "base"
    if module.startswith("zygotepy.backends"):
        return 2, "backends"
    if module in RUNTIME or module.startswith("zygotepy.runtime") \
            or module in ("zygotepy.forward.dual", "zygotepy.forward.operators", "zygotepy.forward.levels",
                          "zygotepy.forward.texts", "zygotepy.forward.in_place"):
        return 3, "runtime"
    if module in ("zygotepy.adjoints.registry", "zygotepy.adjoints.in_place", "zygotepy.adjoints.foreign_names",
                  "zygotepy.adjoints.user_rules"):
        return 4, "registry"
    if module in DISPATCH:
        return 5, "dispatch"
    if module.startswith("zygotepy.adjoints.nesting"):
        return 8, "nesting"
    if module.startswith("zygotepy.adjoints") or module in FORWARD_RULES:
        return 6, "rules"
    if module.startswith("zygotepy.ast_adjoint") or module == "zygotepy.forward.transform":
        return 6, "compiler"
    if module == "zygotepy":
        return 9, "package"
    if module.startswith("zygotepy.fuzz"):
        return 10, "tools"
    return 7, "entry points"  # api, api_modes, api_blocks, inspection, transforms, trees, testing, tracebacks, forward


KNOWN = set()


def _modules():
    out = {}
    for path in ROOT.rglob("*.py"):
        parts = path.relative_to(ROOT.parent).with_suffix("").parts
        name = ".".join(parts[:-1] if parts[-1] == "__init__" else parts)
        out[name] = path
    return out


def _imported(module, node, modules):
    """The package's modules an import statement of `module` names (`from . import x` names x when it is one)."""
    package = module if modules[module].name == "__init__.py" else module.rpartition(".")[0]
    if isinstance(node, ast.ImportFrom):
        base = node.module or ""
        if node.level:
            up = package
            for _ in range(node.level - 1):
                up = up.rpartition(".")[0]
            base = f"{up}.{base}" if base else up
        if not base.startswith("zygotepy"):
            return []
        return [f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names]
    return [a.name for a in node.names if a.name.startswith("zygotepy")]


def _imports():
    """Every (importer, imported, line) in the package, imports inside functions included."""
    modules = _modules()
    found = []
    for module, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for target in _imported(module, node, modules):
                    while target not in modules and "." in target:  # `import zygotepy.x.y` of a name, not a module
                        target = target.rpartition(".")[0]
                    if target != module and target in modules:
                        found.append((module, target, node.lineno))
    return found


def _breaks(importer, imported):
    (low, group), (high, other) = layer(importer), layer(imported)
    return high > low or (low == high == 6 and group != other)


def test_the_scan_reads_imports_inside_functions():
    found = {(a, b) for a, b, _ in _imports()}
    assert ("zygotepy.backends.composed", "zygotepy.backends") in found  # inside _is_complex
    assert len(found) > 300


# The package's own modules imported inside functions, each for its reason. Every other import of the package is at
# module level, where the order the modules load (and register their rules) in is plain to see.
INSIDE_FUNCTIONS = {
    ("zygotepy.adjoints.contexts", "zygotepy.adjoints.mutation.calls"):
        "the mutation table loads after the plain tables: its rules take theirs (`x += y` takes `+`'s) as it loads",
    ("zygotepy.backends.composed", "zygotepy.backends"): "backends/__init__ imports composed: is_complex at call",
    ("zygotepy.fuzz.runner", "zygotepy"): "a worker process imports the package before its alarm starts",
}


def _imports_inside_functions():
    modules = _modules()
    found = set()
    for module, path in modules.items():
        for fn in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for node in ast.walk(fn):
                    if isinstance(node, (ast.Import, ast.ImportFrom)):
                        for target in _imported(module, node, modules):
                            while target not in modules and "." in target:
                                target = target.rpartition(".")[0]
                            if target in modules:
                                found.add((module, target))
    return found


def test_the_package_is_imported_inside_functions_only_where_listed():
    assert _imports_inside_functions() == set(INSIDE_FUNCTIONS)


def test_imports_point_down_the_layers():
    new = sorted({(a, b, line) for a, b, line in _imports() if _breaks(a, b) and (a, b) not in KNOWN})
    assert not new, "imports that break the layer table (tests/test_layers.py, docs/architecture.md):\n" + "\n".join(
        f"  {a} (line {line}) imports {b}: layer {layer(a)} above {layer(b)}" for a, b, line in new)


def test_known_breaks_still_exist():
    breaks = {(a, b) for a, b, _ in _imports() if _breaks(a, b)}
    gone = KNOWN - breaks
    assert not gone, f"fixed: remove them from KNOWN so that they cannot come back: {sorted(gone)}"
