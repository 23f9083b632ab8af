"""Deep learning in a few lines: a two-layer MLP on scikit-learn's handwritten digits.

The network, the softmax cross-entropy (with a hand-written, numerically stable logsumexp) and the training loop are
plain NumPy and Python. zygotepy differentiates the loss with respect to a dict of parameters and hands back a dict of
gradients of the same shape, so one SGD step is a dict comprehension. Before training, the gradient is checked against
central finite differences on a few random coordinates.

Run it with

    python examples/digits_mlp.py            # 60 epochs (a few seconds), about 97 % test accuracy
    python examples/digits_mlp.py --quick    # 2 epochs, for CI

It prints the final test accuracy and writes a plot of the training loss and test accuracy per epoch to
examples/output/digits_mlp.png.
"""
import argparse
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_digits
from sklearn.model_selection import train_test_split
from tqdm import tqdm

from zygotepy import gradient

OUTPUT = pathlib.Path(__file__).resolve().parent / "output"


def init_params(rng, n_in=64, n_hidden=64, n_out=10):
    return {
        "W1": rng.standard_normal((n_in, n_hidden)) / np.sqrt(n_in),
        "b1": np.zeros(n_hidden),
        "W2": rng.standard_normal((n_hidden, n_out)) / np.sqrt(n_hidden),
        "b2": np.zeros(n_out),
    }


def predict(params, X):
    """Logits of the two-layer network: 64 pixels -> 64 tanh units -> 10 classes."""
    h = np.tanh(X @ params["W1"] + params["b1"])
    return h @ params["W2"] + params["b2"]


def loss(params, X, y):
    """Mean softmax cross-entropy; y holds integer class labels."""
    logits = predict(params, X)
    m = np.max(logits, axis=1, keepdims=True)  # subtract the row maximum so that exp cannot overflow
    logsumexp = m[:, 0] + np.log(np.sum(np.exp(logits - m), axis=1))
    return np.mean(logsumexp - logits[np.arange(len(y)), y])


def accuracy(params, X, y):
    return np.mean(np.argmax(predict(params, X), axis=1) == y)


def gradient_check(params, X, y, n_coords=3, eps=1e-5, seed=1):
    """Compare zygotepy's gradient with central finite differences on a few random coordinates of each parameter.

    Central differences are themselves only accurate to about 1e-6 relative here (truncation and rounding), so an
    error of that order means the two agree.
    """
    rng = np.random.default_rng(seed)
    grads = gradient(loss, params, X, y)[0]
    worst = 0.0
    for name, value in params.items():
        for _ in range(n_coords):
            i = tuple(rng.integers(0, n) for n in value.shape)
            old = value[i]
            value[i] = old + eps
            up = loss(params, X, y)
            value[i] = old - eps
            down = loss(params, X, y)
            value[i] = old
            numeric = (up - down) / (2 * eps)
            worst = max(worst, abs(grads[name][i] - numeric) / max(abs(grads[name][i]), abs(numeric), 1e-12))
    return worst


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="2 epochs, for CI")
    args = parser.parse_args()
    epochs = 2 if args.quick else 60
    batch_size, learning_rate = 16, 0.05

    digits = load_digits()
    X = digits.data / 16.0  # pixels are 0..16
    X_train, X_test, y_train, y_test = train_test_split(X, digits.target, test_size=0.25, random_state=0)

    rng = np.random.default_rng(0)
    params = init_params(rng)

    error = gradient_check(params, X_train[:100], y_train[:100])
    print(f"gradient check: max relative error {error:.1e}")
    assert error < 1e-4, error

    history = {"loss": [], "accuracy": []}
    progress = tqdm(range(epochs), desc="training")
    for epoch in progress:
        order = rng.permutation(len(X_train))
        for start in range(0, len(order), batch_size):
            batch = order[start:start + batch_size]
            Xb, yb = X_train[batch], y_train[batch]
            grads = gradient(loss, params, Xb, yb)[0]
            params = {k: params[k] - learning_rate * grads[k] for k in params}
        history["loss"].append(loss(params, X_train, y_train))
        history["accuracy"].append(accuracy(params, X_test, y_test))
        progress.set_postfix(loss=f"{history['loss'][-1]:.4f}", test_acc=f"{history['accuracy'][-1]:.3f}")

    print(f"test accuracy: {history['accuracy'][-1]:.4f}")

    OUTPUT.mkdir(exist_ok=True)
    fig, (ax_loss, ax_acc) = plt.subplots(1, 2, figsize=(10, 4))
    epoch_numbers = np.arange(1, epochs + 1)
    ax_loss.plot(epoch_numbers, history["loss"], marker="o")
    ax_loss.set(xlabel="epoch", ylabel="training loss (cross-entropy)", yscale="log", title="Training loss")
    ax_acc.plot(epoch_numbers, history["accuracy"], marker="o", color="tab:green")
    ax_acc.set(xlabel="epoch", ylabel="test accuracy", title="Test accuracy")
    fig.suptitle("Two-layer MLP on sklearn digits, trained with zygotepy gradients")
    fig.tight_layout()
    fig.savefig(OUTPUT / "digits_mlp.png", dpi=120)
    print(f"wrote {OUTPUT / 'digits_mlp.png'}")


if __name__ == "__main__":
    main()
