"""The interface every continual-counting strategy implements (docs/counters.md), and what the strategies share.

A strategy is one object, :class:`CounterStrategy`, in one file of this package, named in the registry
(:mod:`privacct.counters.registry`; ``register`` adds one at run time). The object carries everything that
depends on the strategy:

* the **declared factorization** A = L R of the K x K prefix-sum matrix A, explicitly at small K
  (:meth:`CounterStrategy.factorization`, the definition every other figure is tested against) and, for a
  Toeplitz R, its column coefficients r_0..r_(K-1) (:meth:`CounterStrategy.column_coefficients`);
* **what a user costs** under single participation: the releases per user as the accountants see them
  (:meth:`CounterStrategy.rows_per_user`) and the multiplier of one step's sensitivity in each
  (:meth:`CounterStrategy.release_multiplier`), from the largest column norm of R
  (:meth:`CounterStrategy.column_norm`, an upper bound; docs/counters.md#setting);
* **what a release carries**: the variance of one coordinate of the release after t steps, in node
  variances (:meth:`CounterStrategy.prefix_variances`, :meth:`CounterStrategy.worst_prefix_variance`), and the
  worst row l1 norm of L (:meth:`CounterStrategy.worst_prefix_l1`);
* the **runtime step** :class:`privacct.counters.counter.FactorizedCounter` runs: ``start`` (the strategy's state,
  kept on the counter), ``step`` (the fresh draws of step t, through the counter's ``_draw``, folded into the
  release noise) and ``noisy_sum``; a Toeplitz strategy's noise path is the counter's ``_mix_noise``, which the
  ledger's probe reads (docs/counters.md#ledger).

The object is stateless: the counter holds a run's state, the strategy's step reads and writes it.

This module, the registry and :mod:`privacct.log` load neither numpy nor any strategy's file: the names are
the registry's keys, and a strategy's file is imported the first time its object is asked for (as
:mod:`privacct.accounting` does for accountants), so ``privacct --help`` and a log's parser stay light.
Nothing here imports :mod:`privacct.log`: the log imports the registry, never the other way round.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from types import SimpleNamespace
from typing import TYPE_CHECKING, Any, Callable, ClassVar, Protocol

from ..errors import PrivacctError, check_count

if TYPE_CHECKING:  # annotations only: numpy is imported by the strategies' own files
    import numpy as np

U = 2.0**-53                            # unit roundoff of float64
NORMS = ("l1", "l2")
MAX_BLT_BUFFERS = 8                     # buffers a factorized structure carries at most (privacct.log)


class FactorizedSpec(Protocol):
    """What a strategy reads from a factorized :class:`privacct.log.Structure`: K and, for a strategy that takes
    them, its BLT buffers ((theta, omega) pairs)."""

    strategy: str | None
    leaves: int | None
    buffers: tuple[tuple[float, float], ...] | None


def tree_depth(leaves: int) -> int:
    """Nodes of a K-leaf binary counter that contain one leaf: floor(log2 K) + 1.

    Chan, Shi, Song (2011), binary mechanism; Kairouz et al. (2021, arXiv 2103.00039, App. D)
    give the same depth D = floor(log2 K) + 1 = ceil(log2(K + 1)) for the online tree in which only
    complete dyadic intervals ending at or before K are ever noised. Exact integer arithmetic
    (``int.bit_length``), no floating-point log.
    """
    k = check_count("leaves", leaves)
    return k.bit_length()


def up(x: float, rel: float) -> float:
    """x raised by a relative ``rel`` and one more ulp (an upper bound on a quantity known to within rel)."""
    return math.nextafter(x * (1.0 + rel), math.inf)


def norm_for(mechanism: str) -> str:
    """The column norm a mechanism's privacy needs: l1 for Laplace, l2 for Gaussian noise."""
    return "l1" if mechanism == "laplace" else "l2"


def max_over_prefixes(T: int, weight: Callable[[int], float]) -> float:
    """max over 1 <= t <= T of the sum (math.fsum) of ``weight(i)`` >= 0 over the set bits i of t: attained at T or
    at T with one set bit i cleared and every lower bit set, because the set bits of any t < T are a subset of one
    of these (docs/counters.md#tree)."""
    def w(t: int) -> float:
        return math.fsum(weight(i) for i in range(t.bit_length()) if (t >> i) & 1)

    best = w(T)
    for i in range(T.bit_length()):
        if (T >> i) & 1:
            cand = (T & ~((1 << (i + 1)) - 1)) | ((1 << i) - 1)
            if cand >= 1:
                best = max(best, w(cand))
    return best


class CounterStrategy(ABC):
    """One continual-counting strategy (module docstring). Subclass :class:`DyadicStrategy` (0/1 node columns) or
    :class:`ToeplitzStrategy` (a Toeplitz R and noise path), or this class for another kind, and register an
    instance (:func:`privacct.counters.registry.register`).

    Class attributes: ``name`` (the log's ``structure.strategy``), ``summary`` (one line with its citation),
    ``uniform`` (R's columns are 0/1 node incidences: one user is ``rows_per_user`` equal releases), ``toeplitz``
    (R is Toeplitz and the release noise is the counter's ``_mix_noise`` path, probed for the ledger),
    ``takes_buffers`` (its structure carries BLT buffers, ``params.buffers``), ``step_cost_growth`` (0: a step
    costs O(1) or O(log t); 1: O(t)) and ``draws_per_step`` (an upper bound on its fresh draws per addition,
    amortised over K steps).
    """

    name: ClassVar[str]
    summary: ClassVar[str]
    uniform: ClassVar[bool]
    toeplitz: ClassVar[bool] = False
    takes_buffers: ClassVar[bool] = False
    step_cost_growth: ClassVar[int] = 0
    draws_per_step: ClassVar[float] = 1.0

    def __repr__(self) -> str:
        return f"<counter strategy {self.name!r}>"

    # ---------------------------------------------------------------- declared figures
    @abstractmethod
    def factorization(self, spec: FactorizedSpec) -> tuple["np.ndarray", "np.ndarray"]:
        """(L, R), explicit, with L R = A: L is K x N, R is N x K, N the draws of a run in the order the counter
        draws them (row j of R: the users draw j covers, with their weights). O(K N) memory: for tests and small K."""

    @abstractmethod
    def rows_per_user(self, leaves: int) -> int:
        """Releases per user as the accountants see them (the worst user, single participation)."""

    @abstractmethod
    def release_multiplier(self, spec: FactorizedSpec, mechanism: str) -> float:
        """What one step's sensitivity is multiplied by in each of those releases."""

    @abstractmethod
    def column_norm(self, spec: FactorizedSpec, norm: str) -> float:
        """Largest column norm of R (``l1`` or ``l2``), an upper bound: column 1 dominates (docs/counters.md)."""

    @abstractmethod
    def prefix_variances(self, spec: FactorizedSpec, steps: int) -> "np.ndarray":
        """Variance of one coordinate of the release after t = 1..steps additions, in node variances."""

    @abstractmethod
    def worst_prefix_variance(self, spec: FactorizedSpec, steps: int) -> float:
        """max over t <= steps of :meth:`prefix_variances` (computed without the table where it can be)."""

    @abstractmethod
    def worst_prefix_l1(self, spec: FactorizedSpec, steps: int) -> float:
        """max over t <= steps of the l1 norm of row t of L (the weights of the draws in release t)."""

    def column_coefficients(self, spec: FactorizedSpec, n: int) -> "np.ndarray":
        """r_0..r_(n-1) of a Toeplitz R; refused for the others."""
        raise PrivacctError(f"strategy {self.name!r} is not Toeplitz: its columns are 0/1 node incidences")

    def default_buffers(self, leaves: int, *, norm: str) -> tuple[tuple[float, float], ...] | None:
        """The buffers of a strategy named without them (None: it takes none)."""
        return None

    def tight_candidate(self, mechanism: str) -> bool:
        """Whether ``tight`` calibration of a learner chooses among this strategy for ``mechanism``
        (:func:`privacct.counters.compare.candidates_for`; docs/counters.md#learners). Off unless a strategy says so."""
        return False

    # ---------------------------------------------------------------- the runtime step (FactorizedCounter)
    @abstractmethod
    def start(self, counter: Any) -> None:
        """Set up this strategy's state on a new ``counter`` (its ``_exact`` and ``_noise`` are zero)."""

    @abstractmethod
    def step(self, counter: Any, t: int, x: "np.ndarray", weights: "np.ndarray | None") -> None:
        """Addition ``t`` (1-based) of ``x``: draw this step's noise (``counter._draw``) and fold it into the
        release. ``weights``: the ledger weights of a Toeplitz draw (:meth:`ledger_weights`)."""

    def noisy_sum(self, counter: Any) -> "np.ndarray":
        """The current release (a new array)."""
        return counter._exact + counter._noise

    def ledger_weights(self, counter: Any, t: int) -> "np.ndarray | None":
        """Ledger weights of step t's draws, computed before any state moves (may refuse); None: unweighted."""
        return None


class DyadicStrategy(CounterStrategy):
    """A strategy whose noised nodes are dyadic intervals and whose columns of R are their 0/1 incidences: user 1
    is in the D = floor(log2 K) + 1 nodes [1, 2^i], every other user in at most D (docs/counters.md#column-1-dominates),
    so one user is D releases at multiplier 1, and the release after t steps weights the nodes of the set bits of t
    by a per-level weight. Subclasses give :meth:`level_variance` and :meth:`level_l1`."""

    uniform: ClassVar[bool] = True

    @abstractmethod
    def level_variance(self, i: int) -> float:
        """Variance, in node variances, of the part of a release a set bit i of t contributes."""

    @abstractmethod
    def level_l1(self, i: int) -> float:
        """Sum of the (non-negative) weights of the draws in that part."""

    def rows_per_user(self, leaves: int) -> int:
        return tree_depth(leaves)

    def release_multiplier(self, spec: FactorizedSpec, mechanism: str) -> float:
        return 1.0

    def column_norm(self, spec: FactorizedSpec, norm: str) -> float:
        D = tree_depth(int(spec.leaves))  # type: ignore[arg-type]
        return float(D) if norm == "l1" else up(math.sqrt(D), 0.0)

    def prefix_variances(self, spec: FactorizedSpec, steps: int) -> "np.ndarray":
        import numpy as np

        t = np.arange(1, steps + 1)
        bits = (t[:, None] >> np.arange(max(steps.bit_length(), 1))) & 1
        return bits @ self.level_weights(bits.shape[1])

    def level_weights(self, levels: int) -> "np.ndarray":
        """:meth:`level_variance` of levels 0..levels-1 as an array."""
        import numpy as np

        return np.array([self.level_variance(i) for i in range(levels)])

    def worst_prefix_variance(self, spec: FactorizedSpec, steps: int) -> float:
        return max_over_prefixes(steps, self.level_variance)

    def worst_prefix_l1(self, spec: FactorizedSpec, steps: int) -> float:
        return max_over_prefixes(steps, self.level_l1)


class ToeplitzStrategy(CounterStrategy):
    """A strategy with a lower-triangular Toeplitz R (R[t, s] = r_(t-s)) and release noise L z with L lower-
    triangular Toeplitz too (column 1: l_0..l_(K-1), the impulse response of the noise path): one fresh draw z_t per
    step, over users 1..t. Column s of R is a prefix of column 1, so one user is one release R x + z at multiplier
    ||column 1 of R|| (docs/counters.md#accounting). Subclasses give the coefficients of R, their column sums, the
    column l of L (:meth:`release_noise_column`, from which the prefix variances follow) and the noise path
    (``init_parameters``, ``init_mixing_state``, ``mix_noise``, ``mixing_parameters``)."""

    uniform: ClassVar[bool] = False
    toeplitz: ClassVar[bool] = True

    @abstractmethod
    def column_coefficients(self, spec: FactorizedSpec, n: int) -> "np.ndarray": ...

    @abstractmethod
    def column_sums(self, spec: FactorizedSpec) -> tuple[float, float]:
        """Upper bounds on (sum_(k<K) r_k^2, sum_(k<K) |r_k|)."""

    @abstractmethod
    def release_noise_column(self, spec: FactorizedSpec, n: int) -> "np.ndarray":
        """l_0..l_(n-1), column 1 of the declared L."""

    def rows_per_user(self, leaves: int) -> int:
        return 1

    def release_multiplier(self, spec: FactorizedSpec, mechanism: str) -> float:
        return self.column_norm(spec, norm_for(mechanism))

    def column_norm(self, spec: FactorizedSpec, norm: str) -> float:
        s2, s1 = self.column_sums(spec)
        return s1 if norm == "l1" else up(math.sqrt(s2), 0.0)

    def factorization(self, spec: FactorizedSpec) -> tuple["np.ndarray", "np.ndarray"]:
        K = int(spec.leaves)  # type: ignore[arg-type]
        return _lower_toeplitz(self.release_noise_column(spec, K)), _lower_toeplitz(self.column_coefficients(spec, K))

    def prefix_variances(self, spec: FactorizedSpec, steps: int) -> "np.ndarray":
        """Row t of L is (l_(t-1), ..., l_0): the release after t steps has variance sum_(k<t) l_k^2 node variances."""
        import numpy as np

        l = self.release_noise_column(spec, steps)
        return np.cumsum(l * l)

    def worst_prefix_variance(self, spec: FactorizedSpec, steps: int) -> float:
        """sum_(k<steps) l_k^2 (math.fsum): the variances increase with t. A strategy with a closed form for large K
        overrides it."""
        l = self.release_noise_column(spec, steps)
        return math.fsum((l * l).tolist())

    def worst_prefix_l1(self, spec: FactorizedSpec, steps: int) -> float:
        """Row t of L is (l_(t-1), ..., l_0): the worst row is the last, sum_(k<steps) |l_k| (math.fsum), l the
        impulse response of the noise path the counter runs (:meth:`impulse_response`)."""
        import numpy as np

        return math.fsum(np.abs(self.impulse_response(spec, steps)).tolist())

    def impulse_response(self, spec: FactorizedSpec, n: int) -> "np.ndarray":
        """l_0..l_(n-1) of this strategy's own noise path (:meth:`mix_noise`) fed z = (1, 0, ..., 0) on a fresh scalar
        state, as :meth:`privacct.counters.counter.FactorizedCounter.impulse_response` runs it for a counter."""
        import numpy as np

        owner = SimpleNamespace(structure=spec, leaves=int(spec.leaves))  # type: ignore[arg-type]
        self.init_parameters(owner)
        st = SimpleNamespace(_noise=np.zeros((1,)))
        self.init_mixing_state(owner, st, 1, ())
        out = np.empty(n)
        for t in range(1, n + 1):
            self.mix_noise(owner, st, t, np.array([1.0 if t == 1 else 0.0]))
            out[t - 1] = st._noise[0]
        return out

    # ---------------------------------------------------------------- the noise path
    @abstractmethod
    def init_parameters(self, counter: Any) -> None:
        """The coefficients the recursion reads, set on ``counter`` (where a test or a mutant may alter them)."""

    @abstractmethod
    def init_mixing_state(self, counter: Any, st: Any, batch: int, shape: tuple[int, ...]) -> None:
        """The past draws the recursion keeps, zeroed on ``st`` (``st._noise`` is already zero)."""

    @abstractmethod
    def mix_noise(self, counter: Any, st: Any, t: int, z: "np.ndarray") -> None:
        """Fold z_t into the release noise ``st._noise`` = (L z)_t, reading ``counter``'s coefficients."""

    @abstractmethod
    def mixing_parameters(self, counter: Any) -> tuple["np.ndarray", ...]:
        """The coefficients the recursion reads, as arrays (compared between draws)."""

    def parameter_attributes(self) -> "tuple[str, ...] | None":
        """The names of the counter attributes :meth:`mixing_parameters` reads its coefficients from (blt:
        ``("_P", "_Q")``), or None (the default: not known). When every one of them holds an immutable object (a tuple
        of Python floats) at the ledger's probe, a later draw that finds the very same objects there skips the
        comparison of the coefficients' bytes (:meth:`privacct.counters.counter.FactorizedCounter._row_weights`): the
        same immutable objects hold the same values."""
        return None

    def start(self, counter: Any) -> None:
        self.init_parameters(counter)
        counter._init_mixing_state(counter, counter.batch, counter.shape)

    def ledger_weights(self, counter: Any, t: int) -> "np.ndarray | None":
        return counter._row_weights(t)

    def step(self, counter: Any, t: int, x: "np.ndarray", weights: "np.ndarray | None") -> None:
        u0 = counter.first_user - 1
        z = counter._draw((u0 + 1, u0 + t), weights)
        counter._mix_noise(counter, t, z)


def _lower_toeplitz(col: "np.ndarray") -> "np.ndarray":
    """The lower-triangular Toeplitz matrix with first column ``col``."""
    import numpy as np

    n = len(col)
    i, j = np.indices((n, n))
    return np.where(i >= j, np.asarray(col, dtype=float)[np.clip(i - j, 0, None)], 0.0)


__all__ = ["CounterStrategy", "DyadicStrategy", "FactorizedSpec", "MAX_BLT_BUFFERS", "NORMS", "ToeplitzStrategy", "U", "max_over_prefixes",
           "norm_for", "tree_depth", "up"]
