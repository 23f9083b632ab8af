"""Data-parallel training over several devices: the digits MLP, its batches sharded, with JAX's sharding and jax.jit.

zygotepy has no distribution layer of its own, and needs none: its gradient code calls `jax.numpy` on whatever arrays
it is given, so `jax.jit` traces the forward and the pullback into one XLA computation, and XLA partitions it over
the devices the arrays live on. Here each batch is split over a one-axis mesh of the devices (`PartitionSpec("data")`)
and the parameters are replicated (`PartitionSpec()`); each device computes the gradient of its share of the batch,
and XLA adds an all-reduce that sums them, so every device ends the step with the same, full gradient and the same
SGD update. The network and the loss are those of digits_mlp.py, written with `jax.numpy`.

Without a GPU or TPU, the script asks XLA for 4 simulated CPU devices (XLA_FLAGS, set below before JAX is imported,
unless you set a device count yourself). They share the machine's cores: this shows how the computation is split and
that the gradients are right, not a speed-up.

    python examples/data_parallel.py            # 60 epochs, about 97 % test accuracy
    python examples/data_parallel.py --quick    # 2 epochs, for CI

It checks the sharded, jitted gradient against the unsharded one on one batch, prints where the gradients live, the
training time and the final test accuracy.
"""
import os

if "xla_force_host_platform_device_count" not in os.environ.get("XLA_FLAGS", ""):  # before JAX is first imported
    os.environ["XLA_FLAGS"] = (os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=4").strip()

import argparse  # noqa: E402 (the flag above must come first)
import re  # noqa: E402
import time  # noqa: E402

import numpy as np  # noqa: E402

from zygotepy import gradient  # noqa: E402


def init_params(rng, n_in=64, n_hidden=64, n_out=10):
    return {
        "W1": rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in),
        "b1": np.zeros(n_hidden),
        "W2": rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden),
        "b2": np.zeros(n_out),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 epochs, for CI")
    args = parser.parse_args()
    try:
        import jax
        import jax.numpy as jnp
        from jax.sharding import Mesh, NamedSharding
        from jax.sharding import PartitionSpec as P
    except ImportError:
        print("JAX is not installed: this example needs it (pip install jax)")
        return
    from sklearn.datasets import load_digits
    from sklearn.model_selection import train_test_split

    def predict(params, X):
        """Logits of the two-layer network: 64 pixels -> 64 tanh units -> 10 classes."""
        h = jnp.tanh(X @ params["W1"] + params["b1"])
        return h @ params["W2"] + params["b2"]

    def loss(params, X, y):
        """Mean softmax cross-entropy; y holds integer class labels."""
        logits = predict(params, X)
        m = jnp.max(logits, axis=1, keepdims=True)  # subtract the row maximum so that exp cannot overflow
        logsumexp = m[:, 0] + jnp.log(jnp.sum(jnp.exp(logits - m), axis=1))
        return jnp.mean(logsumexp - logits[jnp.arange(X.shape[0]), y])

    epochs = 2 if args.quick else 60
    learning_rate = 0.1

    devices = jax.devices()
    mesh = Mesh(np.array(devices), ("data",))
    batch_sharding = NamedSharding(mesh, P("data"))  # rows split over the devices
    replicated = NamedSharding(mesh, P())  # a full copy on every device
    batch_size = 8 * len(devices)  # 8 samples per device: the batch must split evenly
    print(f"{len(devices)} devices ({devices[0].platform}), batches of {batch_size} split {batch_size // len(devices)} "
          f"per device, parameters replicated")

    digits = load_digits()
    X = (digits.data / 16.0).astype(np.float32)  # pixels are 0..16
    X_train, X_test, y_train, y_test = train_test_split(X, digits.target, test_size=0.25, random_state=0)
    rng = np.random.default_rng(0)
    params = jax.device_put({k: jnp.asarray(v, dtype=jnp.float32) for k, v in init_params(rng).items()}, replicated)

    @jax.jit
    def sgd_step(params, X, y):
        """One step: zygotepy's gradient traced by jax.jit; XLA runs it sharded, as the arrays are."""
        grads = gradient(loss, params, X, y)[0]
        return {k: params[k] - learning_rate * grads[k] for k in params}

    # the gradient on one batch: sharded and jitted, against unsharded and eager on one device
    Xb = jax.device_put(X_train[:batch_size], batch_sharding)
    yb = jax.device_put(y_train[:batch_size], batch_sharding)
    sharded = jax.jit(lambda p, X, y: gradient(loss, p, X, y)[0])(params, Xb, yb)
    plain = gradient(loss, jax.device_put(params, devices[0]), jnp.asarray(X_train[:batch_size], device=devices[0]),
                     jnp.asarray(y_train[:batch_size], device=devices[0]))[0]
    difference = max(float(np.max(np.abs(np.asarray(sharded[k]) - np.asarray(plain[k]))) / np.max(np.abs(plain[k])))
                     for k in plain)
    print(f"gradient check (one batch): max relative difference, sharded under jax.jit vs unsharded: {difference:.1e} "
          f"(float32)")
    assert difference < 1e-5, difference
    rows = "/".join(str(n) for n in sorted({shard.data.shape[0] for shard in Xb.addressable_shards}))
    print(f"  the batch's {len(Xb.addressable_shards)} shards hold {rows} rows each; gradients:")
    for k in sorted(sharded):
        s = sharded[k].sharding
        print(f"    {k}: {s.spec}, on {len(s.device_set)} devices, "
              f"{'replicated' if s.is_fully_replicated else 'sharded'}")

    compiled = sgd_step.lower(params, Xb, yb).compile().as_text()
    all_reduces = len(re.findall(r"\ball-reduce(?:-start)?\(", compiled))
    print(f"XLA's compiled step sums the devices' gradients with {all_reduces} all-reduce operations")

    n_batches = len(X_train) // batch_size  # the few samples left over each epoch are skipped
    history = []
    start = time.perf_counter()
    for epoch in range(1, epochs + 1):
        order = rng.permutation(len(X_train))[:n_batches * batch_size].reshape(n_batches, batch_size)
        for batch in order:
            params = sgd_step(params, jax.device_put(X_train[batch], batch_sharding),
                              jax.device_put(y_train[batch], batch_sharding))
        train_loss = float(loss(params, X_train, y_train))
        test_accuracy = float(jnp.mean(jnp.argmax(predict(params, X_test), axis=1) == y_test))
        history.append((train_loss, test_accuracy))
        if epoch == 1 or epoch % 10 == 0 or epoch == epochs:
            print(f"epoch {epoch:3d}: training loss {train_loss:.4f}, test accuracy {test_accuracy:.4f}")
    seconds = time.perf_counter() - start
    simulated = devices[0].platform == "cpu"
    print(f"training: {epochs * n_batches} steps in {seconds:.1f} s, first step's tracing and compiling included"
          + (" (simulated CPU devices share this machine's cores: the time cannot show a speed-up from splitting the "
             "batch)" if simulated else ""))
    print(f"test accuracy: {history[-1][1]:.4f}")


if __name__ == "__main__":
    main()
