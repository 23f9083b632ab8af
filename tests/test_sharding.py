"""Gradients of JAX arrays sharded over several devices (docs/sharding.md): zygotepy has no distribution layer of its
own. Its generated forward and pullback call `jax.numpy` on whatever arrays they are given, so on sharded arrays each
operation runs sharded (eager), and under `jax.jit` XLA partitions the traced computation and inserts the collectives
(the all-reduce that sums a replicated parameter's gradient over a sharded batch). These tests check that this holds:
the values match `jax.grad` and the unsharded zygotepy gradient in float64, and the gradients come back sharded, not
gathered onto one device.

The device count must be set (XLA_FLAGS=--xla_force_host_platform_device_count=4) before JAX is first imported, and
this test process may have imported JAX already, so the checks run in a fresh interpreter: this file run as a script
(`python tests/test_sharding.py` prints the findings as JSON, the last line of its output), once per module, and the
tests below assert on what it found.
"""
import importlib.util
import json
import math
import os
import re
import subprocess
import sys

import pytest

N_DEVICES = 4
REL_TOL = 1e-10  # float64; the sharded sums differ from the unsharded ones by rounding only (about 1e-16 observed)

# (function, layout): the MLP's data-parallel, model-parallel and 2-d (data x model) layouts, and the loop's two
MLP_LAYOUTS = ("data", "model", "data_model")
LOOP_LAYOUTS = ("data", "model")
CASES = [("mlp", layout) for layout in MLP_LAYOUTS] + [("loop", layout) for layout in LOOP_LAYOUTS]
MODES = ("eager", "jit")


# --- the checks, run in the subprocess ------------------------------------------------------------------------------------

def _checks():
    """Run every case eagerly and under jax.jit; return what was measured (errors and shardings), JSON-ready."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.sharding import Mesh, NamedSharding
    from jax.sharding import PartitionSpec as P

    import zygotepy

    jax.config.update("jax_enable_x64", True)

    def mlp_loss(params, X, y):
        """Mean softmax cross-entropy of a tanh network; y holds integer labels (the digits example's loss)."""
        h = jnp.tanh(X @ params["W1"] + params["b1"])
        logits = h @ params["W2"] + params["b2"]
        m = jnp.max(logits, axis=1, keepdims=True)
        logsumexp = m[:, 0] + jnp.log(jnp.sum(jnp.exp(logits - m), axis=1))
        return jnp.mean(logsumexp - logits[jnp.arange(X.shape[0]), y])

    def rollout(W, x):
        """Residual tanh steps in a Python loop, the per-step losses kept in a list and summed by the builtin."""
        losses = []
        for t in range(4):
            x = x + 0.1 * jnp.tanh(x @ W)
            losses.append(jnp.mean(x ** 2) / (t + 1))
        return sum(losses)

    rng = np.random.default_rng(0)
    n, d_in, d_hidden, d_out = 32, 8, 16, 8  # every sharded axis divisible by 4
    params = {"W1": rng.standard_normal((d_in, d_hidden)) / np.sqrt(d_in), "b1": 0.1 * rng.standard_normal(d_hidden),
              "W2": rng.standard_normal((d_hidden, d_out)) / np.sqrt(d_hidden), "b2": 0.1 * rng.standard_normal(d_out)}
    params = {k: jnp.asarray(v) for k, v in params.items()}
    X = jnp.asarray(rng.standard_normal((n, d_in)))
    y = jnp.asarray(rng.integers(0, d_out, n))
    W = jnp.asarray(rng.standard_normal((d_in, d_in)) / np.sqrt(d_in))

    devices = np.array(jax.devices())
    meshes = {"data": Mesh(devices, ("data",)), "model": Mesh(devices, ("model",)),
              "data_model": Mesh(devices.reshape(2, 2), ("data", "model"))}

    def specs(layout, function):
        """PartitionSpecs of the arguments: batch over "data", hidden units / output columns over "model"."""
        batch = P("data") if "data" in layout else P()
        if function == "loop":
            return (P(None, "model") if "model" in layout else P(), batch)
        if "model" in layout:
            return ({"W1": P(None, "model"), "b1": P("model"), "W2": P("model", None), "b2": P()}, batch, batch)
        return ({k: P() for k in params}, batch, batch)

    def rel_err(got, want):
        worst = 0.0
        for a, b in zip(jax.tree.leaves(got), jax.tree.leaves(want), strict=True):
            a, b = np.asarray(a), np.asarray(b)
            assert a.shape == b.shape, (a.shape, b.shape)
            worst = max(worst, float(np.max(np.abs(a - b)) / max(np.max(np.abs(b)), 1e-300)))
        return worst

    def describe(grad, arg):
        """What a gradient's sharding is, and whether it is the argument's (equivalent specs count as equal)."""
        s = grad.sharding
        return {"type": type(grad).__module__ + "." + type(grad).__name__, "spec": spec_entries(s),
                "arg_spec": spec_entries(arg.sharding), "n_devices": len(s.device_set),
                "fully_replicated": bool(s.is_fully_replicated),
                "shard_fraction": math.prod(s.shard_shape(grad.shape)) / math.prod(grad.shape),
                "same_as_arg": bool(s.is_equivalent_to(arg.sharding, grad.ndim))}

    def spec_entries(sharding):
        """A NamedSharding's PartitionSpec as a JSON list (its printed form differs between JAX versions)."""
        return [list(e) if isinstance(e, tuple) else e for e in sharding.spec]

    def leaves_with_paths(tree):
        return [(jax.tree_util.keystr(p), v) for p, v in jax.tree_util.tree_flatten_with_path(tree)[0]]

    found = {"n_devices": len(jax.devices()), "cases": {}}
    for function, layout in CASES:
        f = mlp_loss if function == "mlp" else rollout
        plain = (params, X, y) if function == "mlp" else (W, X)
        argnums = (0, 1)  # parameters and inputs; the integer labels have no gradient
        mesh = meshes[layout]
        sharded = jax.device_put(plain, jax.tree.map(lambda s: NamedSharding(mesh, s), specs(layout, function),
                                                     is_leaf=lambda s: isinstance(s, P)))
        reference = jax.grad(f, argnums=argnums)(*plain)
        unsharded = zygotepy.gradient(f, *plain)
        if function == "mlp":
            assert unsharded[2] is None  # integer labels
        unsharded = unsharded[:2]
        grad = lambda *args: zygotepy.gradient(f, *args)[:2]
        jitted = jax.jit(grad)
        for mode in MODES:
            got = jitted(*sharded) if mode == "jit" else grad(*sharded)
            got = jax.block_until_ready(got)
            paths = leaves_with_paths(got)
            args = dict(leaves_with_paths(sharded[:2]))
            found["cases"][f"{function}-{layout}-{mode}"] = {
                "vs_jax_grad": rel_err(got, reference), "vs_unsharded": rel_err(got, unsharded),
                "grads": {path: describe(g, args[path]) for path, g in paths}}
        if function == "mlp" and layout == "data":
            hlo = jitted.lower(*sharded).compile().as_text()
            found["data_parallel_all_reduces"] = len(re.findall(r"\ball-reduce(?:-start)?\(", hlo))
        if function == "loop" and layout == "model":
            # XLA chooses the gradients' shardings; out_shardings pins them to the arguments'
            pinned = jax.jit(grad, out_shardings=tuple(a.sharding for a in sharded))(*sharded)
            found["loop_model_pinned"] = {
                "vs_jax_grad": rel_err(pinned, reference),
                "same_as_arg": [bool(g.sharding.is_equivalent_to(a.sharding, g.ndim)) for g, a in zip(pinned, sharded)],
                "spec": [spec_entries(g.sharding) for g in pinned]}
            reference_jit = jax.jit(jax.grad(f, argnums=argnums))(*sharded)
            found["loop_model_jax_grad_specs"] = [spec_entries(g.sharding) for g in reference_jit]
    return found


def _device_flags(flags):
    """XLA_FLAGS with the host device count set to N_DEVICES (replacing any count already there)."""
    flags = re.sub(r"--xla_force_host_platform_device_count=\S+", "", flags or "")
    return f"{flags} --xla_force_host_platform_device_count={N_DEVICES}".strip()


if __name__ == "__main__":
    os.environ["XLA_FLAGS"] = _device_flags(os.environ.get("XLA_FLAGS"))
    print(json.dumps(_checks()))
    sys.exit(0)


# --- the tests ------------------------------------------------------------------------------------------------------------

pytestmark = pytest.mark.skipif(importlib.util.find_spec("jax") is None, reason="JAX is not installed")


@pytest.fixture(scope="module")
def found():
    """The subprocess's findings: JAX on the CPU (JAX_PLATFORMS=cpu, so that a GPU machine simulates 4 devices too)."""
    env = {**os.environ, "XLA_FLAGS": _device_flags(os.environ.get("XLA_FLAGS")), "JAX_PLATFORMS": "cpu"}
    done = subprocess.run([sys.executable, __file__], env=env, capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-5000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


def test_four_devices_were_simulated(found):
    assert found["n_devices"] == N_DEVICES


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("function, layout", CASES)
def test_gradient_values_match_jax_grad_and_the_unsharded_gradient(found, function, layout, mode):
    case = found["cases"][f"{function}-{layout}-{mode}"]
    assert case["vs_jax_grad"] < REL_TOL, case
    assert case["vs_unsharded"] < REL_TOL, case


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("function, layout", CASES)
def test_gradients_are_jax_arrays_that_stay_on_all_devices(found, function, layout, mode):
    """No gradient is converted to NumPy or gathered onto one device: each one lives on the whole mesh."""
    for path, grad in found["cases"][f"{function}-{layout}-{mode}"]["grads"].items():
        assert grad["type"].startswith("jax"), (path, grad)
        assert grad["n_devices"] == N_DEVICES, (path, grad)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("function", ["mlp", "loop"])
def test_data_parallel_gradients_replicated_params_and_batch_sharded_inputs(found, function, mode):
    """The gradient of a replicated parameter is replicated (the per-device partial sums are all-reduced), and the
    gradient of the batch stays sharded over the batch, as the batch was."""
    grads = found["cases"][f"{function}-data-{mode}"]["grads"]
    inputs = "[1]"
    for path, grad in grads.items():
        if path == inputs:
            assert grad["same_as_arg"] and grad["spec"] == ["data"], (path, grad)
            assert not grad["fully_replicated"] and grad["shard_fraction"] == 1 / N_DEVICES, (path, grad)
        else:
            assert grad["fully_replicated"] and grad["same_as_arg"], (path, grad)


def test_data_parallel_step_all_reduces_under_jit(found):
    """Under jax.jit the cross-device sum of the parameters' gradients is XLA's collective, not a gather."""
    assert found["data_parallel_all_reduces"] >= 1


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("layout", ["model", "data_model"])
def test_model_parallel_mlp_gradients_keep_each_weights_sharding(found, layout, mode):
    """W1 sharded over its output columns, b1 and W2's rows over the same hidden units: each gradient comes back with
    its parameter's sharding (W2's P('model', None) reads as the equivalent P('model',))."""
    grads = found["cases"][f"mlp-{layout}-{mode}"]["grads"]
    for name in ("W1", "b1", "W2", "b2"):
        grad = grads[f"[0]['{name}']"]
        assert grad["same_as_arg"], (name, grad)
    assert grads["[0]['W1']"]["shard_fraction"] == grads["[0]['b1']"]["shard_fraction"] == 1 / (2 if "data" in layout
                                                                                                else N_DEVICES)
    assert grads["[0]['b2']"]["fully_replicated"]


@pytest.mark.parametrize("mode", MODES)
def test_model_parallel_loop_gradient_stays_partitioned(found, mode):
    """In the residual loop the sharded W is applied to states that become sharded too; XLA's propagation picks the
    layout of W's gradient (P('model',), rows, where W is P(None, 'model'), observed with JAX 0.10): it may differ
    from W's, but it stays split four ways, never gathered."""
    grad = found["cases"][f"loop-model-{mode}"]["grads"]["[0]"]
    assert not grad["fully_replicated"] and grad["shard_fraction"] == 1 / N_DEVICES, grad


def test_out_shardings_pins_the_gradients_to_the_arguments_layout(found):
    pinned = found["loop_model_pinned"]
    assert pinned["vs_jax_grad"] < REL_TOL
    assert pinned["same_as_arg"] == [True, True], pinned
