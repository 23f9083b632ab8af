"""The scipy.stats methods zygotepy has no rule for (a discrete distribution's pmf, a continuous one's sf, ppf, rvs,
mean, ...), where a gradient flows into them: refused, naming the user's line and what has rules. Without a rule of
its own such a call would be derived from SciPy's Python code, whose argument parsing SciPy generates from strings at
import (`_parse_args`): a SourceUnavailable naming SciPy's file, and advice (`register_source`) that does not fit.
Where no argument carries a gradient the method runs as it is, a constant.
"""
from ..ast_adjoint.call_checks import call_site
from ..ast_adjoint.dispatch import differentiable
from ..errors import ZygoteError
from .registry import adjoint, keyword_cotangents, keyword_rule
from .scipy_stats import FAMILIES_BY_NAME, METHODS, st

_HAVE_RULES = (f"zygotepy has rules for the {', '.join(METHODS)} of the continuous distributions "
               f"{', '.join(FAMILIES_BY_NAME)} (and their frozen forms), and for multivariate_normal's logpdf and pdf")

# the public methods below the rules of scipy_stats.py: by class, the names each defines itself
_REFUSED = {
    "rv_continuous": ("sf", "logsf", "ppf", "isf"),
    "rv_discrete": ("rvs", "pmf", "logpmf", "cdf", "logcdf", "sf", "logsf", "ppf", "isf"),
    "rv_generic": ("rvs", "stats", "entropy", "moment", "median", "mean", "var", "std", "interval"),
    "rv_frozen": ("ppf", "isf", "rvs", "sf", "logsf", "stats", "median", "mean", "var", "std", "moment", "entropy",
                  "interval"),
    "rv_discrete_frozen": ("pmf", "logpmf"),
}


def _refusing_rule(method, name):
    """`dist.<name>(*args, **kwds)` as SciPy computes it, where nothing given carries a gradient (a frozen
    distribution's own arguments included); refused where something does."""
    def rule(self, *args, **kwds):
        held = (*getattr(self, "args", ()), *getattr(self, "kwds", {}).values())  # (a frozen distribution's)
        if any(differentiable(a) for a in (*args, *kwds.values(), *held)):
            dist = getattr(self, "dist", self)
            where = call_site()
            raise ZygoteError(f"{where + ': ' if where else ''}zygotepy cannot differentiate "
                              f"scipy.stats.{getattr(dist, 'name', type(dist).__name__)}.{name}: {_HAVE_RULES}; "
                              f"compute it outside the differentiated function, or register a rule with "
                              f"@zygotepy.adjoint")
        y = method(self, *args, **kwds)

        def back(dy):
            return keyword_cotangents((None,) * (len(args) + 1), kwds)
        return y, back
    rule.__qualname__ = f"{name}_refused"
    return keyword_rule(rule)


if st is not None:
    from scipy.stats import _distn_infrastructure as _infrastructure

    for _owner, _names in _REFUSED.items():
        _cls = getattr(_infrastructure, _owner)
        for _name in _names:
            _method = vars(_cls).get(_name)  # (one SciPy version may define a method on another class)
            if _method is not None:
                adjoint(_method)(_refusing_rule(_method, _name))
