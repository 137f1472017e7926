"""Reference mechanisms for audits, tests and benchmarks (picklable, so they run on processes).

Each is ``mechanism(dataset, rng, size) -> array`` (:class:`privacct.audits.protocols.Mechanism`); the
dataset is a number (the query value f(D)) or, for vector mechanisms, a vector. These are *audit
targets*, not privacy primitives of the toolkit: learners add noise only through
:mod:`privacct.mechanisms`. Their true privacy is known in closed form, which is what the
soundness tests need:

* :class:`LaplaceMechanism`: f(D) + Lap(b); eps = Delta_1 / b (Dwork & Roth 2014, Thm 3.6).
* :class:`GaussianMechanism`: f(D) + N(0, sigma^2 I); mu = Delta_2 / sigma GDP, eps(delta) from the
  analytic Gaussian (Balle & Wang 2018, Thm 8).
* :class:`RandomizedResponse`: bit kept with prob. e^eps / (1 + e^eps) (Warner 1965), eps-DP.
* :class:`NullMechanism`: ignores its input (eps = 0).
* :class:`FloatLaplace`: textbook inverse-CDF Laplace on doubles, the Mironov (2012) LSB leak.

Each declares the power criterion of its audits (``power_criterion(dataset, neighbour)``,
:class:`privacct.audits.protocols.DeclaresPower`) from its exact privacy-loss distribution: the same
mechanism at twice the claim (:func:`privacct.audits.power.structure_power` for Laplace and Gaussian
coordinates, :func:`privacct.audits.power.rates_power` for randomized response), and a ``leakier()``
version (noise scale / 2, or eps x 2) for black-box style audits (``leakier=``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from scipy import special, stats


def laplace_loss(mean_d, mean_d2, scale: float):
    """:class:`privacct.audits.oracle.LossStructure` of f + Lap(scale) per coordinate, f = ``mean_d`` on D and
    ``mean_d2`` on D': a_j = |f_j(D) - f_j(D')| / b for every differing coordinate (Dwork & Roth 2014,
    Thm 3.6); None when no coordinate differs."""
    from .oracle import LossStructure

    a = np.abs(np.asarray(mean_d, dtype=float) - np.asarray(mean_d2, dtype=float)).ravel() / float(scale)
    a = a[a > 0]
    return LossStructure(tuple(float(v) for v in a), 0.0) if a.size else None


def gaussian_loss(mean_d, mean_d2, sigma: float):
    """:class:`privacct.audits.oracle.LossStructure` of f + N(0, sigma^2 I): mu = ||f(D) - f(D')||_2 / sigma
    (exactly mu-GDP; Dong, Roth, Su 2019, Cor. 2.13); None when f(D) = f(D')."""
    from .oracle import LossStructure

    mu = float(np.linalg.norm(np.asarray(mean_d, dtype=float) - np.asarray(mean_d2, dtype=float))) / float(sigma)
    return LossStructure((), mu) if mu > 0 else None


def structure_criterion(structure, label: str):
    """:func:`privacct.audits.power.structure_power` of ``structure`` (None stays None)."""
    from .power import structure_power

    return None if structure is None else structure_power(structure, label=label)


@dataclass(frozen=True)
class LaplaceMechanism:
    """Output f(D) + Lap(scale) per coordinate; ``dataset`` is f(D) (scalar or vector)."""

    scale: float = 1.0
    #: how the power criterion names it (a class attribute, not a field)
    label = "Laplace mechanism"

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        v = np.asarray(dataset, dtype=float)
        return v + rng.laplace(0.0, self.scale, size=(size,) + v.shape)

    def loss_structure(self, dataset, neighbour):
        return laplace_loss(dataset, neighbour, self.scale)

    def power_criterion(self, dataset, neighbour):
        return structure_criterion(self.loss_structure(dataset, neighbour), f"{self.label} (scale {self.scale:g})")

    def leakier(self, factor: float = 2.0) -> "LaplaceMechanism":
        """The same mechanism with its noise scale / ``factor`` (eps x ``factor``)."""
        return type(self)(self.scale / factor)

    def density(self, dataset):
        v = np.asarray(dataset, dtype=float)

        def pdf(x, v=v, b=self.scale):
            x = np.asarray(x, dtype=float).reshape(len(x), -1)
            return np.exp(-np.abs(x - v.reshape(1, -1)).sum(axis=1) / b) / (2 * b) ** x.shape[1]
        return pdf


@dataclass(frozen=True)
class GaussianMechanism:
    """Output f(D) + N(0, sigma^2) per coordinate; ``dataset`` is f(D)."""

    sigma: float = 1.0

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        v = np.asarray(dataset, dtype=float)
        return v + rng.normal(0.0, self.sigma, size=(size,) + v.shape)

    def loss_structure(self, dataset, neighbour):
        return gaussian_loss(dataset, neighbour, self.sigma)

    def power_criterion(self, dataset, neighbour):
        return structure_criterion(self.loss_structure(dataset, neighbour), f"Gaussian mechanism (sigma {self.sigma:g})")

    def leakier(self, factor: float = 2.0) -> "GaussianMechanism":
        """The same mechanism with sigma / ``factor`` (mu x ``factor``)."""
        return GaussianMechanism(self.sigma / factor)

    def density(self, dataset):
        v = np.asarray(dataset, dtype=float)

        def pdf(x, v=v, s=self.sigma):
            x = np.asarray(x, dtype=float).reshape(len(x), -1)
            return np.exp(stats.norm.logpdf(x, v.reshape(1, -1), s).sum(axis=1))
        return pdf


@dataclass(frozen=True)
class RandomizedResponse:
    """Binary randomized response: report ``dataset`` (0 or 1) with prob. e^eps / (1 + e^eps) (Warner 1965)."""

    epsilon: float = 1.0
    label = "randomized response"

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        keep = rng.random(size) < special.expit(self.epsilon)
        bit = int(dataset)
        return np.where(keep, bit, 1 - bit).astype(np.int64)

    def power_criterion(self, dataset, neighbour):
        return None if int(dataset) == int(neighbour) else randomized_response_power(self.label)

    def leakier(self, factor: float = 2.0) -> "RandomizedResponse":
        return type(self)(self.epsilon * factor)


@dataclass(frozen=True)
class NullMechanism:
    """Ignores ``dataset``: standard normal outputs (eps = 0)."""

    shape: tuple = ()

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        return rng.normal(size=(size,) + tuple(self.shape))

    def power_criterion(self, dataset, neighbour):
        """No loss and no noise knob to scale: the canonical scalar reference (Laplace or Gaussian at 2 x the
        claim on a real-valued output, :func:`privacct.audits.power.canonical_power`) is the natural one for
        a mechanism that ignores its input."""
        from .power import canonical_power

        return canonical_power


@dataclass(frozen=True)
class FloatLaplace:
    """Textbook float Laplace: f(D) - b sgn(u) ln(1 - 2|u|), u ~ U(-1/2, 1/2) on a 2^-53 grid.

    Mironov (2012, CCS): the set of doubles reachable from f(D) differs from that reachable from
    f(D'), so an output's low-order bits reveal the input. The "reachable" test statistic is in
    :func:`float_laplace_statistic`. ``quantum`` coarsens u (2^-53 in real samplers) so that the
    effect shows with few samples.
    """

    scale: float = 10.0
    quantum: float = 2.0 ** -20

    def __call__(self, dataset, rng: np.random.Generator, size: int) -> np.ndarray:
        k = rng.integers(1, int(round(1 / self.quantum)) // 2, size=size)
        u = (k * self.quantum) * np.where(rng.random(size) < 0.5, -1.0, 1.0)
        return float(dataset) - self.scale * np.sign(u) * np.log(1.0 - 2.0 * np.abs(u))

    def power_criterion(self, dataset, neighbour):
        """The IDEALISED Laplace mechanism's (docs/auditing.md#floating-point-effects: the auditor's tests are
        about the analysis, not the floating-point implementation)."""
        return structure_criterion(laplace_loss(dataset, neighbour, self.scale), "idealised Laplace mechanism")

    def leakier(self, factor: float = 2.0) -> "FloatLaplace":
        return FloatLaplace(self.scale / factor, self.quantum)

    def reachable(self, dataset, tolerance: float = 1e-3):
        """Indicator "x is an output this sampler can produce from ``dataset``" (a 0/1 mass function).

        Inverts x = f(D) - b sgn(u) ln(1 - 2|u|) to |u| and checks that |u| / quantum is within
        ``tolerance`` of an integer. Passed as ``densities`` it gives the Mironov (2012) test.
        """
        v = float(dataset)

        def mass(x, v=v, b=self.scale, q=self.quantum, tol=tolerance):
            x = np.asarray(x, dtype=float).reshape(len(x))
            k = (-np.expm1(-np.abs(x - v) / b) / 2.0) / q
            return (np.abs(k - np.round(k)) < tol).astype(float)
        return mass


def randomized_response_power(label: str):
    """:func:`privacct.audits.power.rates_power` of binary randomized response: the reference keeps the bit
    with p = e^E / (1 + e^E), one Neyman-Pearson test (report == the bit of D) with TPR = p, FPR = 1 - p;
    E is the eps whose eps(delta) is the target: delta(eps) = (e^E - e^eps) / (1 + e^E) (the hockey-stick
    divergence of the two Bernoulli laws, Dwork & Roth 2014, Def. 2.4), so E = ln((e^target + delta) / (1 - delta))."""
    from .power import rates_power

    def rates(target: float, delta: float):
        e = math.log((math.exp(target) + delta) / (1.0 - delta))
        p = float(special.expit(e))
        return np.array([p]), np.array([1.0 - p])

    return rates_power(rates, label=label)


def gaussian_true_epsilon(mu: float, delta: float) -> float:
    """Exact eps(delta) of the Gaussian mechanism with Delta/sigma = mu (Balle & Wang 2018, Thm 8)."""
    from .bounds import epsilon_from_mu
    e = epsilon_from_mu(mu, delta)
    return math.inf if e is None else e
