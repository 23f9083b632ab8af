"""A dict's `values()` or `items()` view that left the function updating the dict.

The rules of `d.values()` and `d.items()` make lists (a list's items carry cotangents; Python's view holds none). In
the function that calls `values()`, a view kept in a name is made again after each update of the dict
(lower/mutation.py, `view_refreshed`). A view that a helper returned (`v = vals(d)`) or that sits in a list, a dict or
an object (`[d.values()]`, `self.v = d.values()`) is known there only as something that may hold the dict's values: the
update's links (`put_item`, `put_held`, `refresh_held`) find it at run time (`through_views`) and makes it show the dict as it is now, in place, as
Python's live view does (the rules note each list they make: structures/dicts.py `_noted`). Its cotangent from then on is the dict's (`views_back`), and its journal entry gives the
backward of what read it before the update the values that were read.
"""
from ...ast_adjoint import mutate as mt
from ...ast_adjoint import runtime as rt
from ...ast_adjoint.call_checks import stale_view
from ...runtime.context import current
from ..structures.dicts import view_cotangent
from .held import _split, _where_each


def refresh_views(holder, mapping):
    """Each view of `mapping` that `holder` is or holds and that no longer shows it, shown as `mapping` is now:
    [(where it sits in `holder`, its journal entry, the view, the method, the keys now)]. One walk of `holder`, as
    the link's own search makes, however many views of `mapping` were made (a loop's `sum(d.values())`)."""
    noted = current().dict_views.get(id(mapping))
    if noted is None or noted[0] is not mapping:
        return ()
    views = noted[1]
    found = []
    for key, plan in _where_each(holder, views, {}).items():
        view, method = views[key]
        if not stale_view(mapping, view, method):
            continue
        entry = mt.journal_whole(view)
        view[:] = getattr(mapping, method)()
        found.append((plan, entry, view, method, list(mapping)))
    return found


def views_back(found, holder, dy, where):
    """`holder`'s cotangent -> (the part not at its refreshed views, the dict's cotangent from those); each view's
    update is undone."""
    dmap = None
    for plan, entry, view, method, keys in reversed(found):
        entry.undo(lambda view=view: list(view))
        dy, dview = _split(plan, holder, dy, where)
        if dview is not None:
            dmap = rt.acc(dmap, view_cotangent(method, keys, dview) or None)
    return dy, dmap


def through_views(holder, mapping, back, to, where=None):
    """The `back` of a link rule between `holder` and the dict `mapping` (an argument of the link, at position `to`),
    made to route the cotangents of the views of `mapping` that `holder` holds, shown as `mapping` is now, to it."""
    views = refresh_views(holder, mapping)
    if not views:
        return back

    def routed(dy, *need):
        dy, dmap = views_back(views, holder, dy, where)
        grads = list(back(dy, *need))
        grads[to] = rt.acc(grads[to], dmap)
        return tuple(grads)
    return routed
