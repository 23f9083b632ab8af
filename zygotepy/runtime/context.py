"""The state of the differentiated calls running in this thread: one `Context` per thread, in a `ContextVar`.

A `gradient` call journals the updates its code makes in place (so that the backward can undo them and the entry
point redo them), notes which objects were updated (so that a callee's update of its caller's object is checked),
keeps the `with` blocks its generated code entered, the call sites that let a callee update their arguments, and so
on. None of it may be shared between threads: two threads' `gradient` calls must not see each other's journal. So
this state lives in a `Context` object reached through `current()`, not in module globals. The outermost entry point
of a thread makes sure the context it uses is its own (`entered`): a thread that inherits its parent's context
variables (free-threaded Python does) gets a new one.
"""
from contextvars import ContextVar
from threading import get_ident


class Context:
    """Per-thread state of the differentiated calls in flight (see the module docstring)."""
    __slots__ = ("thread", "entries", "log", "depth", "global_updates", "item_arrays", "passed_through", "contexts",
                 "slots", "finals", "read_keys", "lookup_keys", "dual_route", "transform_only", "dict_views", "inert_managers",
                 "eager_items", "dual_texts", "cuts", "link_mark", "update_writes",
                 "update_fresh", "hooks_run", "hook_site", "generator_managers")

    def __init__(self):
        self.thread = get_ident()
        self.entries = []          # every recorded update in place not yet claimed by an entry point, in order
        self.log = []              # id() of each object updated in place while an entry point runs, in order
        self.depth = 0             # how many entry points' forwards are running
        self.global_updates = {}   # id() of a module global container updated through a method -> (name, line)
        self.item_arrays = {}      # id() of each array a loop's item stores may update without a log entry each ->
                                   # its ast_adjoint.items.ItemRun (whose `indices` say how many stores were made)
        self.passed_through = {}   # id() of an argument a list/dict/set/array method was given -> log's length then
        self.contexts = []         # the managers of the `with` blocks generated code entered and not yet left
        self.slots = []            # per open call site that lets its callee update its arguments: a call_checks._Slot
        self.finals = []           # per open such call site's backward: id(argument) -> its cotangent after the call
        self.read_keys = {}        # id(key) -> (key, cotangent): keys read back out of a dict, not yet taken
        self.lookup_keys = {}      # id(key) -> (key, where): keys a defaultdict's lookup put in, no store since
        self.dual_route = 0        # > 0 while a nested gradient runs on dual numbers (adjoints/nesting/deep.py)
        self.transform_only = 0    # > 0 while hessian retries by reverse-over-reverse: no dual route (deep.py)
        self.dict_views = {}       # id(dict) -> (dict, {id(list): (list, method)}, [limit]): its views (dicts.py)
        self.inert_managers = {}   # id(manager) -> its fields after `__enter__`, where it held no gradient before
        self.eager_items = []      # (file, line) of each generator expression computing its items now (lower/lazy.py)
        self.dual_texts = {}       # text a dual number was formatted into -> its tag, until that level ends (forward)
        self.cuts = {}             # id() -> a tensor a call detached from the one it shares memory with (`.detach()`)
        self.link_mark = 0         # the log's length after the last link of an update (adjoints/mutation/links.py)
        self.update_writes = (0, 0)  # the log's slice an update wrote before its first link: its own writes
        self.update_fresh = set()  # the name of each variable the links of that update gave a new version
        self.hooks_run = 0         # backs of `hook` run in this thread, and the last one's call site (nesting/deep.py)
        self.hook_site = ""
        self.generator_managers = {}  # id(a @contextmanager's manager) -> (its function, args, kwargs), until left

    def clear_notes(self):
        """Forget what the outermost entry point's call noted (its forward and backward are over)."""
        self.log.clear()
        self.link_mark = 0
        self.passed_through.clear()
        self.item_arrays.clear()
        self.read_keys.clear()
        self.lookup_keys.clear()
        self.global_updates.clear()
        self.dict_views.clear()
        self.inert_managers.clear()
        self.eager_items.clear()
        self.cuts.clear()
        self.generator_managers.clear()


_CURRENT = ContextVar("zygotepy_context")
_get = _CURRENT.get


def current():
    """This thread's context (made at its first use)."""
    ctx = _get(None)
    if ctx is None:
        ctx = Context()
        _CURRENT.set(ctx)
    return ctx


def entered():
    """The context for an entry point's call: this thread's own, never one inherited from another thread."""
    ctx = _get(None)
    if ctx is None or ctx.thread != get_ident():
        ctx = Context()
        _CURRENT.set(ctx)
    return ctx
