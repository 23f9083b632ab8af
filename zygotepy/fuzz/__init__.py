"""Random-program fuzzing of zygotepy's gradients: `python -m zygotepy.fuzz --seed S --count N [--no-opt] [--jobs J]`.

`generate.generate(seed, index)` writes a random valid program (with a record of the constructs it uses),
`check.check_program(prog)` compares its gradients with finite differences and sorts the outcome (pass, clear error,
skipped as not smooth, or a bug: wrong, structure, crash, changed_argument, false_refusal, hang), and
`shrink.shrink(prog, result)` cuts a failing program down to a small reproducer. NumPy and the standard library only.
"""
from .check import BUGS, OUTCOMES, check_program
from .generate import CONSTRUCTS, Program, generate
from .runner import restore_optimisations, run, set_optimisations
from .shrink import shrink, snippet

__all__ = ["generate", "check_program", "shrink", "snippet", "run", "set_optimisations", "restore_optimisations",
           "Program", "CONSTRUCTS", "OUTCOMES", "BUGS"]
