"""torch's view functions keep their views: `d = torch.diagonal(z); d *= 3.0` updates `z`, as torch does.

A torch function or tensor method mapped to its NumPy twin's rule (`torch.diagonal`, `z.to(torch.float64)`,
`z.unsqueeze(0)`, `z.narrow(0, 1, 2)`) computed its value as that rule does, through torch's array-API namespace, which
may copy where torch returns a view of the argument (or the argument itself: `.to` of its own dtype). An update in place
through the result then left the argument as it was: the value and the gradient of a function written against torch's
semantics were silently others. The rule's value is torch's own result where that shares the argument's memory (the
update reaches it, and the update's links route the cotangents between the two by address); its back is the twin's.
"""
import functools

# the functions and methods torch documents as returning views (or the tensor itself), by name
VIEWS = frozenset(("adjoint", "as_strided", "chunk", "contiguous", "detach", "diagonal", "double", "expand",
                   "expand_as", "flatten", "float", "movedim", "moveaxis", "narrow", "permute", "ravel", "reshape",
                   "reshape_as", "select", "split", "squeeze", "swapaxes", "swapdims", "t", "tensor_split", "to",
                   "transpose", "unbind", "unflatten", "unfold", "unsqueeze", "view", "view_as", "view_as_real",
                   "half", "bfloat16", "type_as"))


def keeping_views(rule, op):
    """`rule` (a torch view function's or method's rule, `op` the function or unbound method itself) giving torch's
    own result where it shares its tensor argument's memory."""
    @functools.wraps(rule)
    def view_rule(*args, **kwargs):
        y, back = rule(*args, **kwargs)
        if not args or not hasattr(args[0], "untyped_storage"):
            return y, back
        real = op(*args, **kwargs)
        if real is args[0] or _shares(real, args[0]):
            return real, back
        if isinstance(real, (tuple, list)) and isinstance(y, (tuple, list)) and len(real) == len(y) and \
                all(_shares(r, args[0]) for r in real):
            return type(y)(real), back
        return y, back
    return view_rule


def _shares(a, b):
    try:
        return a.untyped_storage().data_ptr() == b.untyped_storage().data_ptr() and a.numel() > 0
    except (AttributeError, RuntimeError):
        return False
