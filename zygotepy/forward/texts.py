"""Text a dual number was written into (`f"{x}"`, `format(x, ".17g")`, `str(x)`, `x.hex()`), noted until its level
ends (forward/levels.py `tangent_of`), so that a number read back out of it is refused, as reverse mode refuses it
before running (ast_adjoint/text_checks.py): text carries no derivative, and the number's would be lost (the jvp of
`float(repr(x)) * x` was 1.3 for 2.6). Logging the value (`f"{loss:.3f}"`) is not refused: only reading it back."""
import sys

from ..errors import ForwardModeError
from ..runtime.context import current


def noted(text, tag):
    """`text`, a dual number of level `tag` written out."""
    current().dual_texts[text] = tag
    return text


def refuse_read_back(args, depth=2):
    """Raise where a number-reading call's arguments (the text, or a list of texts) hold a noted text; the message
    names the caller `depth` frames up (the user's line)."""
    texts = current().dual_texts
    for a in args:
        for s in (a if isinstance(a, (list, tuple)) else (a,)):
            if isinstance(s, str) and any(t and t in s for t in texts):
                frame = sys._getframe(depth)
                raise ForwardModeError(f"{frame.f_code.co_filename}:{frame.f_lineno}: zygotepy cannot differentiate "
                                       "a number read back from text that a value carrying a derivative was written "
                                       "into (text carries no derivative: the number's would be lost); compute with "
                                       "the number itself (round(x, k) rounds it)")
