"""Statements of the random programs on 2-d arrays: reductions along an axis (`keepdims` or not), the shifts softmax,
log-softmax and logsumexp subtract (`ast_adjoint/optimize/shifts.py` proves some of them free), and shifts whose
gradient is needed. The array flavour's values are vectors; these blocks make a matrix of one (a reshape or an outer
sum) and fold what they compute into a scalar.

They draw from a random stream of their own (`[seed, index, 8]`), and only the array flavour takes them, so a program
that has none is the one the generator made before they existed (the long runs' seeds keep their programs).
"""
import numpy as np

SHARE = 0.06  # of the statements of array programs


class AxesBlocks:
    """A mixin of the generator (generate._Gen): `axes_block()` returns the lines of one block."""

    def start_axes(self, seed, index):
        self.axes_rng = np.random.default_rng([seed, index, 8])

    def wants_axes_block(self):
        return self.flavour == "array" and bool(self.arrays) and self.axes_rng.random() < SHARE

    def _draw(self, seq):
        return seq[int(self.axes_rng.integers(len(seq)))]

    def axes_block(self):
        self.tags.update({"axes", "numpy"})
        name = self._draw(sorted(self.arrays))
        length = self.arrays[name][0]
        v, z, e, r = (self.fresh(p) for p in ("qv", "qz", "qe", "qr"))
        t = self._draw(self.scalars)
        if length % 2 == 0 and self.axes_rng.random() < 0.5:
            lines = [f"{v} = {name}.reshape(2, -1)"]
        else:
            lines = [f"{v} = np.sin({name})[:, None] * 0.5 + {name}[None, :]"]
        axis = self._draw([0, 1, -1])
        other = self._draw([a for a in (0, 1, -1) if a % 2 != axis % 2])
        kept = f"axis={axis}, keepdims=True"
        shift = self._draw([f"np.max({v}, {kept})", f"np.min({v}, {kept})", f"np.mean({v}, {kept})",
                            f"{v}.max({kept})", f"np.max({v})"])
        kind = self._draw(["log_softmax", "softmax", "logsumexp", "needed", "constant_factor", "dropped_axis",
                           "other_axis", "extremum", "both_axes"])
        if kind == "log_softmax":
            lines += [f"{z} = {v} - {shift}",
                      f"{r} = {z} - np.log(np.sum(np.exp({z}), {kept}))",
                      f"{t} = 0.5 * {t} + 0.3 * np.sum({r} * np.cos({v}))"]
        elif kind == "softmax":
            lines += [f"{e} = np.exp({self._draw(['0.5 * ', '', '-'])}({v} - {shift}))",
                      f"{t} = 0.5 * {t} + 0.4 * np.sum({e} / np.sum({e}, {kept}) * np.sin({v}))"]
        elif kind == "logsumexp":
            lines += [f"{z} = np.max({v})",
                      f"{t} = 0.5 * {t} + 0.2 * ({z} + np.log(np.sum(np.exp({v} - {z}))))"]
        elif kind == "needed":  # the result depends on the shift: its gradient flows
            lines += [f"{z} = {v} - {shift}",
                      f"{t} = 0.5 * {t} + 0.3 * np.sum(np.tanh({z}) * np.cos({v}))"]
        elif kind == "constant_factor":  # a kept-axes cotangent through `0.5 * v` and `v - 0.3`
            lines += [f"{r} = np.sum({self._draw(['0.5 * ', '-'])}{v}, {kept}) + np.mean({v} - 0.3, {kept})",
                      f"{t} = 0.5 * {t} + 0.3 * np.sum({r} * np.cos({v}))"]
        elif kind == "dropped_axis":
            lines += [f"{r} = np.mean({v} - 0.3, axis={axis}) * np.sum(np.tanh({v}), axis={axis})",
                      f"{t} = 0.5 * {t} + 0.3 * np.sum(np.sin({r}))"]
        elif kind == "extremum":  # the maxima's (or minima's) share, the reduced axis dropped or kept
            keep = self._draw(["", ", keepdims=True"])
            lines += [f"{r} = np.{self._draw(['max', 'min'])}(np.sin({v}) + {v}, axis={axis}{keep})",
                      f"{t} = 0.5 * {t} + 0.3 * np.sum({r} * np.cos({r}))"]
        elif kind == "both_axes":
            lines += [f"{r} = np.mean({v} * {v}, axis=(0, 1), keepdims=True) - np.sum({v}, axis=(-1, 0)) * 0.1",
                      f"{t} = 0.5 * {t} + 0.3 * np.sum(np.tanh({r} * {v}))"]
        else:  # summed along another axis than the shift's: not a softmax, the shift's gradient flows
            lines += [f"{e} = np.exp({v} - {shift})",
                      f"{t} = 0.5 * {t} + 0.2 * np.sum(np.log(np.sum({e}, axis={other}, keepdims=True)))"]
        return lines
