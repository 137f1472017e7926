"""A catalogue of published benchmark mechanisms with KNOWN privacy: the auditor's own audit targets.

Each :class:`CatalogueEntry` names a mechanism (``mechanism(dataset, rng, size)``, picklable), a
neighbouring pair chosen where the mechanism leaks most (or where its bug shows), the claim it is
audited against, and its true eps with the source. ``private`` entries meet their claim (the true
eps is an upper bound proved in the source, equal to the claim or below it), so an audit above the
true eps would be unsound; the others break it (true eps above the claim, often no finite eps),
so an audit that does not fail them missed a violation. The selection follows the benchmark suites
of StatDP (Ding et al. 2018, CCS) and DP-Sniper (Bichsel et al. 2021, IEEE S&P): noisy max,
sparse-vector variants (Lyu, Su, Li 2017), histograms, RAPPOR, prefix sums, plus the classic slips.

Power (docs/auditing.md#verdicts-and-power): an entry's audit passes only with power against the
mechanism audited. Mechanisms whose observation is Laplace/Gaussian coordinates with known shifts (or
randomized response) declare a criterion from their exact privacy-loss distribution
(``power_criterion``); the others carry a ``leakier`` version (the same mechanism at twice its eps: noise
scale / 2, or eps x 2), which the audit simulates (``audit_mechanism(..., leakier=)``). The broken entries
carry none beyond what their class declares: they must fail, and an audit that does not is inconclusive.

``benchmarks/bench_audit_catalogue.py`` audits every entry at 1e6 trials per side;
``tests/audits/catalog/`` checks soundness and the mixed discrete/continuous catches at small scale.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from privacct.errors import PrivacctError

from ..reference_mechanisms import GaussianMechanism, LaplaceMechanism, NullMechanism, gaussian_true_epsilon
from .additive_and_local import (BinaryRandomizedResponse, BinaryTreePrefixSums, LaplaceVector, OneTimeRappor, PrefixSumLaplace,
                    RepeatedLaplace, TwoSidedGeometric, rappor_epsilon)
from .bugs import NoiselessBranch
from .selection import ExponentialMechanism, ReportNoisyMax
from .sparse_vector import (Concatenated, DworkRothSparseVector, FirstAboveThreshold, NumericalSparseVector,
                            SparseVector)

INF = math.inf


@dataclass(frozen=True)
class CatalogueEntry:
    """One audit target. ``true_epsilon``: the mechanism's eps on this pair's neighbouring relation
    (an upper bound from ``source`` for private entries; math.inf when no finite eps holds);
    ``mixed``: the output mixes discrete values (flags, indices, sentinels) with continuous ones;
    ``leakier``: the same mechanism at twice its eps, simulated for the audit's power when the mechanism
    declares no criterion of its own (module docstring)."""

    name: str
    mechanism: Any
    dataset: Any
    neighbour: Any
    claim_epsilon: float
    delta: float
    true_epsilon: float
    private: bool
    source: str
    mixed: bool = False
    leakier: Any = None

    def audit(self, **kwargs):
        from ..mechanism_audit import audit_mechanism
        if self.leakier is not None and "power" not in kwargs and "leakier" not in kwargs:
            kwargs["leakier"] = self.leakier
        return audit_mechanism(self.mechanism, self.dataset, self.neighbour, epsilon=self.claim_epsilon,
                               delta=self.delta, name=self.name, **kwargs)


ONES5, ONES10 = np.ones(5), np.ones(10)
ONE_UP_REST_DOWN5 = np.array([2.0, 0, 0, 0, 0])  # StatDP's "one above, rest below" (ALL_DIFFER)
ONE_UP_REST_DOWN10 = np.array([2.0] + [0.0] * 9)
LAST_UP_REST_DOWN10 = np.array([0.0] * 9 + [2.0])  # the nine 'below' answers before the released one all move
STREAM = np.ones(8)
STREAM_FIRST_UP = np.array([2.0] + [1.0] * 7)
STREAM_MIDDLE_UP = np.array([1.0, 1, 1, 2, 1, 1, 1, 1])  # (a first-element change moves every prefix sum alike)
GAUSS_EPS = gaussian_true_epsilon(1.0, 1e-5)  # Balle & Wang 2018, Thm 8: sigma = Delta = 1
RAPPOR_EPS = rappor_epsilon(0.5, 1)  # 2 ln 3
RAPPOR_F_2X = 2.0 / (1.0 + 9.0)  # f with rappor_epsilon(f, 1) = 2 x 2 ln 3: (1 - f/2) / (f/2) = 3^2 (f = 0.2)


def _entries() -> list[CatalogueEntry]:
    E = CatalogueEntry
    return [
        # ---------------------------------------------------------------- private (sound targets)
        E("laplace", LaplaceMechanism(1.0), 0.0, 1.0, 1.0, 0.0, 1.0, True,
          "Dwork & Roth 2014, Thm 3.6: Delta_1 / b"),
        E("laplace-vector", LaplaceVector(1.0), np.zeros(4), np.full(4, 0.25), 1.0, 0.0, 1.0, True,
          "Dwork & Roth 2014, Thm 3.6 (l1 shift 1 spread over 4 coordinates)"),
        E("laplace-repeated", RepeatedLaplace(20.0, 20), 0.0, 1.0, 1.0, 0.0, 1.0, True,
          "Dwork & Roth 2014, Thm 3.16 (20 releases of eps 1/20; DP-Sniper's LaplaceParallel)"),
        E("gaussian", GaussianMechanism(1.0), 0.0, 1.0, GAUSS_EPS, 1e-5, GAUSS_EPS, True,
          "Balle & Wang 2018, Thm 8 (exact eps(delta), Delta / sigma = 1)"),
        E("gaussian-vector", GaussianMechanism(1.0), np.zeros(4), np.full(4, 0.5), GAUSS_EPS, 1e-5, GAUSS_EPS, True,
          "Balle & Wang 2018, Thm 8 (l2 shift 1 over 4 coordinates)"),
        E("randomized-response", BinaryRandomizedResponse(1.0), 0, 1, 1.0, 0.0, 1.0, True,
          "Warner 1965; eps = ln(p / (1 - p))"),
        E("geometric", TwoSidedGeometric(1.0), 0, 1, 1.0, 0.0, 1.0, True,
          "Ghosh, Roughgarden, Sundararajan 2009 (two-sided geometric, alpha = e^-eps)", leakier=TwoSidedGeometric(2.0)),
        E("histogram", LaplaceVector(1.0), ONES5, np.array([2.0, 1, 1, 1, 1]), 1.0, 0.0, 1.0, True,
          "Dwork & Roth 2014, Sec. 3.3 (histogram queries, add/remove: l1 = 1; Ding et al. 2018 NoisyHist1)"),
        E("histogram-replace-one", LaplaceVector(2.0), ONES5, np.array([2.0, 0, 1, 1, 1]), 1.0, 0.0, 1.0, True,
          "Dwork & Roth 2014, Sec. 3.3 with replace-one neighbours: two bins move, l1 = 2, b = 2"),
        E("noisy-max-laplace", ReportNoisyMax(2.0, "laplace"), ONES5, ONE_UP_REST_DOWN5, 1.0, 0.0, 1.0, True,
          "Dwork & Roth 2014, Claim 3.9 (Lap(2/eps) for arbitrary sensitivity-1 queries; Ding et al. 2018 Alg. 5)",
          leakier=ReportNoisyMax(1.0, "laplace")),
        E("noisy-max-exponential", ReportNoisyMax(2.0, "exponential"), ONES5, ONE_UP_REST_DOWN5, 1.0, 0.0, 1.0, True,
          "McKenna & Sheldon 2020 (permute-and-flip), identical to report-noisy-max with Exp(2/eps) noise "
          "(Ding et al. 2021, arXiv 2105.07260)", leakier=ReportNoisyMax(1.0, "exponential")),
        E("exponential-mechanism", ExponentialMechanism(1.0), ONES5, ONE_UP_REST_DOWN5, 1.0, 0.0, 1.0, True,
          "McSherry & Talwar 2007; Dwork & Roth 2014, Thm 3.10", leakier=ExponentialMechanism(2.0)),
        E("svt-alg1", SparseVector(1, 1.0, 1, 0.5), ONES10, ONE_UP_REST_DOWN10, 1.0, 0.0, 1.0, True,
          "Lyu, Su, Li 2017, Alg. 1 and Table 1: eps1 + eps2", leakier=SparseVector(1, 2.0, 1, 0.5)),
        E("svt-alg2", DworkRothSparseVector(1.0, 1, 1.0), ONES10, ONE_UP_REST_DOWN10, 1.0, 0.0, 1.0, True,
          "Lyu, Su, Li 2017, Alg. 2 (Dwork & Roth 2014) and Table 1", leakier=DworkRothSparseVector(2.0, 1, 1.0)),
        E("numerical-svt", NumericalSparseVector(1.0, 1, 1.0), ONES10, ONE_UP_REST_DOWN10, 1.0, 0.0, 1.0, True,
          "Dwork & Roth 2014, Alg. 3 (NumericSparse); Wang et al. 2019 (PLDI) version, as in DP-Sniper", mixed=True,
          leakier=NumericalSparseVector(2.0, 1, 1.0)),
        E("rappor", OneTimeRappor(0.5, 8, 1), 0, 1, RAPPOR_EPS, 0.0, RAPPOR_EPS, True,
          "Erlingsson, Pihur, Korolova 2014, Thm 1: eps = 2h ln((1 - f/2) / (f/2)), h = 1, f = 0.5",
          leakier=OneTimeRappor(RAPPOR_F_2X, 8, 1)),
        E("prefix-sum", PrefixSumLaplace(1.0), STREAM, STREAM_FIRST_UP, 1.0, 0.0, 1.0, True,
          "Chan, Shi, Song 2011 (simple counter: Laplace per element, post-processed; Wang et al. 2019 PrefixSum)"),
        E("binary-tree", BinaryTreePrefixSums(4.0), STREAM, STREAM_FIRST_UP, 1.0, 0.0, 1.0, True,
          "Chan, Shi, Song 2011, Binary Mechanism: log2 T + 1 = 4 nodes per element, b = 4 / eps",
          leakier=BinaryTreePrefixSums(2.0)),
        E("null", NullMechanism(), 0.0, 1.0, 1.0, 0.0, 0.0, True, "ignores its input"),
        # ---------------------------------------------------------------- not private (must fail)
        E("histogram-scale-eps", LaplaceVector(0.5), ONES5, np.array([2.0, 1, 1, 1, 1]), 0.5, 0.0, 2.0, False,
          "Ding et al. 2018 (NoisyHist2): noise scale eps instead of 1/eps; true 1/eps = 2"),
        E("histogram-replace-one-unscaled", LaplaceVector(1.0), ONES5, np.array([2.0, 0, 1, 1, 1]), 1.0, 0.0, 2.0,
          False, "Dwork & Roth 2014, Sec. 3.3: replace-one moves two bins (l1 = 2) but b = 1 / eps"),
        E("laplace-sensitivity-2", LaplaceMechanism(1.0), 0.0, 2.0, 1.0, 0.0, 2.0, False,
          "Dwork & Roth 2014, Thm 3.6: noise not scaled to the sensitivity (2)"),
        E("randomized-response-2x", BinaryRandomizedResponse(2.0), 0, 1, 1.0, 0.0, 2.0, False,
          "Warner 1965: keep probability of eps = 2 under a claim of 1"),
        E("gaussian-delta-slip", GaussianMechanism(1.0), 0.0, 1.0, 1.0, 1e-5, GAUSS_EPS, False,
          "Balle & Wang 2018, Thm 8: sigma = 1 gives eps(1e-5) = 4.38, not 1"),
        E("noisy-max-value", ReportNoisyMax(2.0, "laplace", "value"), ONES5, 2 * ONES5, 1.0, 0.0, 2.5, False,
          "Ding et al. 2018 (iReportNoisyMax, DP-Sniper RNM3): the noisy maximum of 5 Lap(2) shifted by 1 "
          "has loss m / b = 2.5 on its lower tail (density m f F^(m-1) ~ e^(m x / b))"),
        E("noisy-max-exp-value", ReportNoisyMax(2.0, "exponential", "value"), ONES5, 2 * ONES5, 1.0, 0.0, INF, False,
          "Ding et al. 2018 (DP-Sniper RNM4): outputs below max q' have probability 0 under D'"),
        E("noisy-max-index-and-value", ReportNoisyMax(2.0, "laplace", "both"), ONES5, 2 * ONES5, 1.0, 0.0, 2.5, False,
          "as noisy-max-value (the index has the same law on both sides)", mixed=True),
        E("svt-alg3", SparseVector(3, 1.0, 1, 1.0), ONES10, LAST_UP_REST_DOWN10, 1.0, 0.0, 4.5, False,
          "Lyu, Su, Li 2017, Alg. 3 (Roth 2011; releases q_i + nu_i) and Table 1: infinity-DP (unbounded in the number "
          "of queries m); at m = 10 and this pair the sup of the privacy loss is 4.5 = 9 / b_nu (numerical integration "
          "of p(k, v) = f_nu(v - q_k) int_{rho <= v - T} f_rho(rho) prod_{j<k} F_nu(T + rho - q_j))", mixed=True),
        E("svt-alg4", SparseVector(4, 1.0, 1, 1.0), ONES10, ONE_UP_REST_DOWN10, 1.0, 0.0, 1.75, False,
          "Lyu, Su, Li 2017, Alg. 4 (Lee & Clifton 2014) and Table 1: ((1 + 6c) / 4) eps, not eps-DP"),
        E("svt-alg5", SparseVector(5, 1.0, 1, 1.0), ONES10, ONE_UP_REST_DOWN10, 1.0, 0.0, INF, False,
          "Lyu, Su, Li 2017, Alg. 5 (Stoddard et al. 2014; no query noise) and Table 1: infinity-DP"),
        E("svt-alg6", SparseVector(6, 1.0, 1, 1.0), ONES10, ONE_UP_REST_DOWN10, 1.0, 0.0, INF, False,
          "Lyu, Su, Li 2017, Alg. 6 (Chen et al. 2015; no cutoff) and Table 1: infinity-DP"),
        E("svt-first-above-index-value", FirstAboveThreshold(1.0, 1.0), ONES10, LAST_UP_REST_DOWN10, 1.0, 0.0, 4.5, False,
          "Lyu, Su, Li 2017, Alg. 3 with c = 1 as (index, noisy answer) (StatDP iSVT4); same law as svt-alg3: 4.5",
          mixed=True),
        E("svt-alg3-alg4-parallel", Concatenated(SparseVector(3, 1.0, 1, 1.0), SparseVector(4, 1.0, 1, 1.0)),
          ONES10, LAST_UP_REST_DOWN10, 1.0, 0.0, 4.5, False,
          "DP-Sniper's SVT34Parallel: Algs 3 and 4 of Lyu et al. 2017 side by side, each claiming eps (>= 4.5, as svt-alg3)",
          mixed=True),
        E("numerical-svt-reused-noise", NumericalSparseVector(1.0, 1, 1.0, reuse=True), ONES10, LAST_UP_REST_DOWN10,
          1.0, 0.0, 1.5, False,
          "numerical SVT releasing the comparison's own noisy answer (the flaw of Lyu et al. 2017 Alg. 3): sup of the "
          "privacy loss 1.5 = 9 / b_nu at this pair (numerical integration as svt-alg3); the events above e^1 have "
          "probability ~1e-3 (a hard case)", mixed=True),
        E("noiseless-branch", NoiselessBranch(4.0, 0.1), 1.0, 0.0, 1.0, 0.0, INF, False,
          "noise on one branch only (DP-Finder issue #1, SmartSum variant): an atom at f(D) of mass 0.1", mixed=True),
        E("noiseless-branch-flagged", NoiselessBranch(4.0, 0.1, flag=True), 1.0, 0.0, 1.0, 0.0, INF, False,
          "as noiseless-branch, releasing (branch bit, value)", mixed=True),
        E("prefix-sum-shared-noise", PrefixSumLaplace(1.0, shared=True), STREAM, STREAM_MIDDLE_UP, 1.0, 0.0, INF, False,
          "one noise value for every prefix sum: differences of consecutive outputs are exact"),
        E("binary-tree-ln-depth", BinaryTreePrefixSums(math.log(8.0)), STREAM, STREAM_FIRST_UP, 1.0, 0.0,
          4.0 / math.log(8.0), False,
          "Chan, Shi, Song 2011 printed Lap(log T / eps) read as ln T: 4 nodes at b = ln 8 give 4 / ln 8 = 1.92"),
        E("rappor-two-hashes", OneTimeRappor(0.5, 8, 2), 0, 2, RAPPOR_EPS, 0.0, rappor_epsilon(0.5, 2), False,
          "Erlingsson et al. 2014, Thm 1 with h = 2 (values 0 and 2 set bits {0, 1} and {2, 3}: four bits differ, "
          "4 ln 3) under the h = 1 claim (2 ln 3)"),
    ]


_CATALOGUE: dict[str, CatalogueEntry] | None = None


def catalogue() -> dict[str, CatalogueEntry]:
    """Every entry by name (private ones first)."""
    global _CATALOGUE
    if _CATALOGUE is None:
        _CATALOGUE = {e.name: e for e in _entries()}
    return _CATALOGUE


def get(name: str) -> CatalogueEntry:
    cat = catalogue()
    if name not in cat:
        raise PrivacctError(f"catalogue entry must be one of {', '.join(cat)}, got {name!r}")
    return cat[name]
