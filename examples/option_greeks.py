"""Monte Carlo Greeks: delta and vega of a European call by differentiating the pricing code itself.

The price of a European call under geometric Brownian motion is estimated by Monte Carlo with a fixed set of normal
draws, written as plain NumPy (simulate S_T, take max(S_T - K, 0), discount, average). zygotepy's gradient of that
function with respect to S0 and sigma gives the pathwise estimators of delta and vega, with no formula derived by
hand; they are compared with the Black-Scholes closed forms

    delta = N(d1),    vega = S0 phi(d1) sqrt(T),    d1 = (log(S0 / K) + (r + sigma^2 / 2) T) / (sigma sqrt(T)),

and must agree within a few Monte Carlo standard errors (estimated from independent batches of paths).

Run it with

    python examples/option_greeks.py            # 200 000 paths, delta curve on 41 spot prices
    python examples/option_greeks.py --quick    # 20 000 paths, 9 spot prices, for CI

It writes a plot of delta and vega against the spot price (Monte Carlo through zygotepy against the closed form) to
examples/output/option_greeks.png.
"""
import argparse
import math
import pathlib

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt
import numpy as np

from zygotepy import gradient

OUTPUT = pathlib.Path(__file__).resolve().parent / "output"


def mc_call_price(S0, sigma, K, r, T, Z):
    """Monte Carlo price of a European call; Z holds one standard normal draw per path."""
    S_T = S0 * np.exp((r - 0.5 * sigma**2) * T + sigma * np.sqrt(T) * Z)
    payoff = np.maximum(S_T - K, 0.0)
    return np.exp(-r * T) * np.mean(payoff)


def mc_delta_vega(S0, sigma, K, r, T, Z):
    """Pathwise delta and vega: the derivatives of the Monte Carlo price with respect to S0 and sigma."""
    delta, vega, *_ = gradient(mc_call_price, S0, sigma, K, r, T, Z)
    return delta, vega


def norm_cdf(x):
    return 0.5 * (1.0 + math.erf(x / math.sqrt(2.0)))


def norm_pdf(x):
    return math.exp(-0.5 * x * x) / math.sqrt(2.0 * math.pi)


def black_scholes(S0, sigma, K, r, T):
    """Closed-form price, delta and vega of a European call."""
    d1 = (math.log(S0 / K) + (r + 0.5 * sigma**2) * T) / (sigma * math.sqrt(T))
    d2 = d1 - sigma * math.sqrt(T)
    price = S0 * norm_cdf(d1) - K * math.exp(-r * T) * norm_cdf(d2)
    return price, norm_cdf(d1), S0 * norm_pdf(d1) * math.sqrt(T)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="20 000 paths and 9 spot prices, for CI")
    args = parser.parse_args()
    n_paths, n_spots = (20_000, 9) if args.quick else (200_000, 41)

    S0, sigma, K, r, T = 100.0, 0.2, 100.0, 0.03, 1.0
    Z = np.random.default_rng(42).standard_normal(n_paths)

    price = mc_call_price(S0, sigma, K, r, T, Z)
    delta, vega = mc_delta_vega(S0, sigma, K, r, T, Z)
    bs_price, bs_delta, bs_vega = black_scholes(S0, sigma, K, r, T)

    # Monte Carlo standard errors, from the spread of the same estimators over 20 independent batches of paths.
    batches = np.array([(mc_call_price(S0, sigma, K, r, T, z), *mc_delta_vega(S0, sigma, K, r, T, z))
                        for z in np.array_split(Z, 20)])
    std_err = batches.std(axis=0, ddof=1) / np.sqrt(len(batches))

    print(f"European call, S0={S0}, K={K}, sigma={sigma}, r={r}, T={T}, {n_paths} paths")
    print(f"{'':6} {'Monte Carlo':>12} {'closed form':>12} {'difference':>11} {'std. error':>11}")
    for name, mc, exact, se in zip(("price", "delta", "vega"), (price, delta, vega), (bs_price, bs_delta, bs_vega),
                                   std_err):
        print(f"{name:6} {mc:12.6f} {exact:12.6f} {mc - exact:11.2e} {se:11.2e}")
        assert abs(mc - exact) < 4 * se, f"{name}: Monte Carlo {mc} and closed form {exact} differ by more than 4 s.e."
    if not args.quick:
        assert abs(delta / bs_delta - 1) < 1e-2 and abs(vega / bs_vega - 1) < 1e-2
    print("delta and vega agree with Black-Scholes within Monte Carlo error")

    spots = np.linspace(60.0, 140.0, n_spots)
    mc_greeks = np.array([mc_delta_vega(s, sigma, K, r, T, Z) for s in spots])
    exact_greeks = np.array([black_scholes(s, sigma, K, r, T)[1:] for s in spots])
    print(f"over S0 in [60, 140]: max |delta difference| {np.max(np.abs(mc_greeks[:, 0] - exact_greeks[:, 0])):.1e}, "
          f"max |vega difference| {np.max(np.abs(mc_greeks[:, 1] - exact_greeks[:, 1])):.1e}")

    OUTPUT.mkdir(exist_ok=True)
    fig, axes = plt.subplots(1, 2, figsize=(11, 4))
    for ax, k, name in zip(axes, (0, 1), ("delta", "vega")):
        ax.plot(spots, exact_greeks[:, k], "-", color="black", label="Black-Scholes closed form")
        ax.plot(spots, mc_greeks[:, k], "o", color="tab:orange", markersize=4, label="Monte Carlo, zygotepy gradient")
        ax.axvline(K, color="gray", lw=0.5, ls="--")
        ax.set(xlabel="spot price S0", ylabel=name, title=f"Call {name} (K={K:g}, sigma={sigma}, T={T:g})")
        ax.legend()
    fig.tight_layout()
    fig.savefig(OUTPUT / "option_greeks.png", dpi=120)
    print(f"wrote {OUTPUT / 'option_greeks.png'}")


if __name__ == "__main__":
    main()
