"""Continual counters for every factorization strategy (docs/counters.md), as privacct primitives.

:class:`FactorizedCounter` releases, after each of up to K additions x_1..x_K (scalars, vectors or
symmetric d x d matrices, batched over seeds: arrays of shape ``(B, *shape)``), an unbiased
estimate of the prefix sum S_t = x_1 + ... + x_t. Every noise value is drawn through
:func:`privacct.mechanisms.draw` (so the ledger sees it) and never reused for another node or step.

* ``tree`` -- :class:`privacct.mechanisms.TreeCounter` (Chan, Shi, Song 2011, Alg. 2), unchanged.
* ``tree-honaker`` -- every dyadic node [t - 2^i + 1, t] (i = 0..nu(t), nu = trailing zeros of t)
  is noised when it completes at step t; each complete subtree's root is estimated bottom-up
  by least squares (Honaker 2015; Kairouz et al. 2021, App. D): est = w y + (1 - w)(est_left +
  est_right) with w = 2 v_(i-1) / (2 v_(i-1) + 1), v_i = w (docs/counters.md#tree-honaker);
  the release sums the estimates of the set bits of t. Memory O(log K).
* ``sqrt-toeplitz`` -- release S_t + (C z)_t with C the (1 - x)^(-1/2) Toeplitz matrix
  (Fichtenberger, Henzinger, Upadhyay 2023): L = R = C. Keeps every z (memory O(K)).
* ``blt`` -- release S_t + (A C^(-1) z)_t, C the BLT matrix of the buffers (Dvijotham et al. 2024,
  Sec. 3): u = C^(-1) z by the recursion Q(B) u = P(B) z (B the backshift, C(x) = Q(x)/P(x),
  :func:`privacct.counters.strategies.blt_polynomials`) and a running sum of u. Memory O(d).

Each strategy's step is its registry object's (:class:`privacct.counters.base.CounterStrategy`: ``start``,
``step``, ``noisy_sum``, and for a Toeplitz strategy the noise path ``init_mixing_state`` / ``mix_noise`` /
``mixing_parameters``, in privacct/counters/tree.py, tree_honaker.py, sqrt_toeplitz.py, blt.py); this class
holds the run's state, draws, and the ledger probe every Toeplitz strategy shares.

Ledger: each draw records the users of its node (trees, weight 1 each) or, for the Toeplitz
strategies, the users of steps 1..t with the weights of row t of the EXECUTED encoder R_exec =
L_exec^{-1} A (R[t, s] = r_(t-s); docs/counters.md#ledger), not the declared R: at the first draw
the counter runs its own noise-mixing step (:meth:`FactorizedCounter._mix_noise`, the one ``add``
calls) on a fresh scalar state fed a unit impulse (:meth:`FactorizedCounter.impulse_response`: no
rng draw, no ledger record), gets l_0..l_(K-1) of the release noise L_exec z and solves
l(x) r(x) = 1 / (1 - x) (:func:`privacct.counters.strategies.executed_encoder`). The K weights are kept
only when a ledger is given; a change of the recursion's coefficients after that probe is refused.

Batched leaves (``leaf_users``, as :class:`privacct.mechanisms.TreeCounter`'s; docs/counters.md#batched-leaves): leaf
t (addition t) holds the data of users a_t..b_t, e.g. one batch of episodes. A strategy's step names its draws in
addition coordinates (``first_user`` is then 1, so users (i, j) of a step are leaves i..j); :meth:`FactorizedCounter._draw`
maps them to the users the leaves hold: a draw over leaves i..j records users a_i..b_j, and a weighted draw (row t
of R_exec: leaf s with weight R[t, s]) gives every user of leaf s the weight R[t, s] (a user between two leaves, in
no leaf, the weight 0: her data is in no addition; an unweighted draw counts her, as TreeCounter does: conservative). A user is one whole column of R, as a one-user leaf is (her
data enters only her leaf's addition, by at most the declared step sensitivity), so the ledger's per-user w^2 / |w|
sums, and ``check_ledger``, account her exactly as a one-user leaf.

Audits: a counter built while an audit's tap is active (:mod:`privacct.tap`) records what a white-box audit
observes of user 1 (:class:`privacct.counters.observed.CounterObserver`, docs/auditing.md#factorized-counters): the
dyadic nodes over her (tree-honaker), the releases whitened with the declared L (Toeplitz strategies); its draws are
then made inside the primitive (not listed unobserved). Draws and bytes are those of an unaudited run.
"""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np

from ..errors import PrivacctError, check_count, check_positive
from ..ledger import Ledger
from ..log import Structure
from ..mechanisms import NOISE_KINDS, TreeCounter, _leaf_users, _shape, draw
from ..rng import as_generators
from .base import CounterStrategy, norm_for
from ..tap import ToeplitzDraw, current_pin, inside_primitive, toeplitz_draw
from ..tap import current as current_tap
from .observed import CounterObserver
from .executed_cache import executed_coefficients as _cached_executed_coefficients
from .executed_cache import recursion_key
from .strategies import Strategy, noise_unit_variance, prefix_variances
from .tree import TREE


#: :meth:`FactorizedCounter.pin_coefficients` by what the recursion runs (privacct.counters.executed_cache.recursion_key)
_PIN_COEFFICIENTS: dict[tuple, np.ndarray] = {}


class FactorizedCounter:
    """A continual counter over up to ``leaves`` additions with a named strategy.

    ``strategy``: a name (``tree``, ``tree-honaker``, ``sqrt-toeplitz``, ``blt``), a
    :class:`~privacct.counters.strategies.Strategy` or a factorized :class:`~privacct.log.Structure`
    (``blt`` without buffers: optimised for ``leaves`` and the mechanism's norm). ``structure`` is
    the factorized structure the counter runs, the one its release group declares.
    Other arguments as :class:`privacct.mechanisms.TreeCounter` (``leaf_users``: leaf t holds users
    ``leaf_users[t - 1]``, module docstring): ``add(x)`` with ``x`` of shape ``(B, *shape)`` returns the noisy
    prefix sum; ``noisy_sum()`` re-reads it at no privacy cost.
    """

    def __init__(self, shape, *, strategy, leaves: int, mechanism: str, scale: float, rngs,
                 ledger: Ledger | None = None, group: str | None = None, first_user: int = 1,
                 leaf_users=None) -> None:
        self.shape = _shape(shape)
        self.leaves = check_count("leaves", leaves)
        if mechanism not in NOISE_KINDS:
            raise PrivacctError(f"mechanism must be one of {', '.join(NOISE_KINDS)}, got {mechanism!r}")
        if mechanism == "symmetric-gaussian-matrix" and (len(self.shape) != 2 or self.shape[0] != self.shape[1]):
            raise PrivacctError(f"symmetric-gaussian-matrix counter needs a square (d, d) shape, got {self.shape}")
        self.mechanism = mechanism
        self.scale = check_positive("scale", scale)
        self.rngs = as_generators(rngs)
        if ledger is not None and group is None:
            raise PrivacctError("group is required when a ledger is given")
        self.ledger, self.group = ledger, group
        self.first_user = check_count("first_user", first_user)
        #: leaf t -> (first, last) user of its data (None: leaf t is user first_user + t - 1)
        self.leaf_users = None if leaf_users is None else _leaf_users(leaf_users, self.leaves, self.first_user)
        self._user_leaf: np.ndarray | None = None    # user a_1 + i -> 0-based leaf holding her, -1 for none
        if self.leaf_users is not None:
            lo, hi = self.leaf_users[0][0], self.leaf_users[-1][1]
            self._user_leaf = np.full(hi - lo + 1, -1, dtype=np.int64)
            for s, (a, b) in enumerate(self.leaf_users):
                self._user_leaf[a - lo:b - lo + 1] = s
        given = Strategy.of(strategy)
        if isinstance(strategy, Structure) and strategy.kind == "factorized" and int(strategy.leaves) != self.leaves:
            raise PrivacctError(f"strategy structure has leaves={strategy.leaves}, the counter leaves={self.leaves}")
        self.structure = given.structure(self.leaves, norm=norm_for(mechanism))
        self.strategy = self.structure.strategy
        #: the registry's object for ``strategy``: its step runs every addition
        self.implementation: CounterStrategy = given.implementation
        B = len(self.rngs)
        self._exact = np.zeros((B,) + self.shape)
        self._noise = np.zeros((B,) + self.shape)   # noise of the current release
        self.steps = 0
        self._executed: np.ndarray | None = None     # Toeplitz: r_0..r_(K-1) of R_exec, probed at the first draw
        self._probed: tuple = ()                      # the recursion's coefficients at that probe (dtype, shape, bytes)
        self._probed_objects: tuple | None = None     # the objects holding them, when immutable (_row_weights)
        self.implementation.start(self)
        #: an audited run's bookkeeping of what the audit observes (privacct.counters.observed); None otherwise and for
        #: the tree, whose TreeCounter records its own nodes
        tap = current_tap()
        self._observer = CounterObserver(self, tap) if tap is not None and self.implementation is not TREE else None

    @property
    def batch(self) -> int:
        return len(self.rngs)

    def leaf_interval_users(self, first: int, last: int, weights=None) -> tuple[tuple[int, int], np.ndarray | None]:
        """The users and per-user weights of a draw over additions (leaves) ``first..last`` (1-based) with one weight
        per leaf (or None: unweighted): users a_first..b_last, every user of leaf s with leaf s's weight and a user in
        no leaf with 0 (module docstring). Without ``leaf_users`` leaf s is user first_user + s - 1 and the weights
        are unchanged."""
        if self.leaf_users is None:
            u0 = self.first_user - 1
            return (u0 + first, u0 + last), weights
        spans = self.leaf_users[first - 1:last]
        users = (spans[0][0], spans[-1][1])
        if weights is None:
            return users, None
        w = np.asarray(weights, dtype=float)
        if w.shape != (len(spans),):
            raise PrivacctError(f"a draw over leaves {first}..{last} needs {len(spans)} leaf weights, got shape {w.shape}")
        lo = self.leaf_users[0][0]
        leaf = self._user_leaf[users[0] - lo:users[1] - lo + 1]   # type: ignore[index]
        return users, np.append(w, 0.0)[np.where(leaf < 0, w.size, leaf - (first - 1))]

    def _draw(self, users: tuple[int, int], weights=None) -> np.ndarray:
        """One fresh draw over the additions ``users`` (a strategy's step names them as users first_user + s - 1 of
        leaves s; with ``leaf_users`` first_user is 1 and they are leaves, mapped here to the users they hold,
        :meth:`leaf_interval_users`), recorded in the ledger with ``weights`` (one per leaf) spread over those users."""
        if self.leaf_users is not None:
            users, weights = self.leaf_interval_users(users[0], users[1], weights)
        # group and users reach the audit tap (privacct.tap): a draw over user 1 it cannot split is named there (and a
        # billboard check's coupling cannot equalise it); the ledger record below carries the weights
        obs = self._observer
        if current_pin() is not None and self.implementation.toeplitz:   # a one-run action audit: z_t's step for the pin
            self.pin_coefficients()   # computed in the recorded run, so that its forked replays inherit the cache
            with toeplitz_draw(ToeplitzDraw(self, self.steps, self.leaf_of, self.pin_coefficients)):
                out = self._draw_noise(users, obs)
        else:
            out = self._draw_noise(users, obs)
        if obs is not None:
            obs.draw(users, weights, out)
        if self.ledger is not None:
            self.ledger.record(group=self.group, users=users, mechanism=self.mechanism, scale=self.scale,
                               shape=self.shape, batch=self.batch, weights=weights)
        return out

    def _draw_noise(self, users: tuple[int, int], obs) -> np.ndarray:
        if obs is None:
            return draw(self.mechanism, self.rngs, self.shape, self.scale, group=self.group, users=users)
        with inside_primitive():   # an audited run: this counter records its own draws over user 1 (.observed)
            return draw(self.mechanism, self.rngs, self.shape, self.scale, group=self.group, users=users)

    def leaf_of(self, user: int) -> int | None:
        """The 1-based leaf (addition) holding ``user``'s data, None when none does."""
        if self.leaf_users is None:
            t = int(user) - self.first_user + 1
            return t if 1 <= t <= self.leaves else None
        i = int(user) - self.leaf_users[0][0]
        if not 0 <= i < self._user_leaf.size:   # type: ignore[union-attr]
            return None
        s = int(self._user_leaf[i])   # type: ignore[index]
        return None if s < 0 else s + 1

    def pin_coefficients(self) -> np.ndarray:
        """r_0..r_(K-1), column 1 of L_exec^{-1} A for the noise path that runs (its probed impulse response solved
        as :func:`privacct.counters.strategies.executed_encoder` does, NOT raised for the ledger): a one-run action
        audit's pin moves draw z_s by D r_(s - t0) (docs/auditing.md#pinning-a-toeplitz-noise-path). Cached on the
        counter while its coefficients stay the same, and per recursion (:func:`.executed_cache.recursion_key`: what the
        recursion runs), so forked replays and later counters of the same recursion reuse it."""
        params = tuple(np.asarray(p, dtype=float) for p in self._mixing_parameters())
        mine = getattr(self, "_pin_r", None)
        if mine is not None and all(a.shape == b.shape and np.array_equal(a, b)
                                    for a, b in zip(params, mine[0], strict=True)):
            return mine[1]
        key = recursion_key(self)   # what the recursion runs (None: an overridden path, never shared)
        r = None if key is None else _PIN_COEFFICIENTS.get(key)
        if r is None:
            from .strategies import _solve_encoder

            l = self.impulse_response()
            if l[0] == 0.0 or not np.all(np.isfinite(l)):
                raise PrivacctError("the executed noise path has no inverse (l_0 = 0 or non-finite): its releases "
                                    "cannot be pinned")
            with np.errstate(all="ignore"):
                r = _solve_encoder(l)
            if not np.all(np.isfinite(r)):
                raise PrivacctError("the executed noise path is numerically singular: its releases cannot be pinned")
            r.setflags(write=False)
            if key is not None:
                if len(_PIN_COEFFICIENTS) >= 8:
                    _PIN_COEFFICIENTS.clear()
                _PIN_COEFFICIENTS[key] = r
        self._pin_r = (tuple(p.copy() for p in params), r)
        return r

    def add(self, x) -> np.ndarray:
        x = np.asarray(x, dtype=float)
        if x.shape != (self.batch,) + self.shape:
            raise PrivacctError(f"x must have shape {(self.batch,) + self.shape}, got {x.shape}")
        if self.steps >= self.leaves:
            raise PrivacctError(f"counter is full: it was built for leaves={self.leaves} additions")
        t = self.steps + 1
        weights = self.implementation.ledger_weights(self, t)   # may refuse: before any state moves
        obs = self._observer
        if obs is not None:
            x = obs.addition(t, x)
        self.steps = t
        self._exact += x
        self.implementation.step(self, t, x, weights)
        if obs is not None:
            obs.release(t)
        pin = current_pin()
        if pin is not None:   # a one-run action audit compares the replay's releases with the run's
            pin.note_release(self.noisy_sum())
        return self.noisy_sum()

    def _online_tree(self) -> TreeCounter:
        """:class:`privacct.mechanisms.TreeCounter` over this counter's stream (shape, leaves, noise, seeds, ledger,
        users): the primitive the ``tree`` strategy runs (privacct/counters/tree.py)."""
        return TreeCounter(self.shape, leaves=self.leaves, mechanism=self.mechanism, scale=self.scale, rngs=self.rngs,
                           ledger=self.ledger, group=self.group, first_user=self.first_user, leaf_users=self.leaf_users)

    # ------------------------------------------------------------------ the noise path (Toeplitz strategies)
    def _init_mixing_state(self, st, batch: int, shape: tuple[int, ...]) -> None:
        """Zeroed noise-mixing state on ``st`` (the counter itself, or the probe's scratch object), for
        ``batch`` seeds of values of ``shape``: the release noise ``_noise`` and the past draws the strategy's
        recursion keeps (sqrt-toeplitz: every z_t; blt: ring buffers of the last d z and u)."""
        st._noise = np.zeros((batch,) + shape)
        self.implementation.init_mixing_state(self, st, batch, shape)

    def _mix_noise(self, st, t: int, z: np.ndarray) -> None:
        """The noise path: fold the fresh draw ``z`` = z_t of step ``t`` (1-based; shape (B, *shape)) into
        the release noise ``st._noise`` (= (L z)_t). ``add`` and :meth:`impulse_response` both call it, so
        the ledger's weights are those of the recursion that runs; it reads and writes state only through
        ``st`` and draws nothing. sqrt-toeplitz: (C z)_t = sum_j c_j z_(t-j); blt: u_t = z_t + sum_k P_k
        z_(t-k) - sum_k Q_k u_(t-k) and a running sum of u (docs/counters.md#blt)."""
        self.implementation.mix_noise(self, st, t, z)

    def impulse_response(self) -> np.ndarray:
        """l_0..l_(K-1): column 1 of the executed L_exec, the release noise after steps 1..K of a fresh
        scalar state fed z = (1, 0, ..., 0) through :meth:`_mix_noise` (no rng draw, no ledger record;
        the counter's own state is untouched). Toeplitz strategies only."""
        if not self.implementation.toeplitz:
            raise PrivacctError(f"strategy {self.strategy!r} has no Toeplitz noise path to probe")
        st = SimpleNamespace()
        self._init_mixing_state(st, 1, ())
        out = np.empty(self.leaves)
        for t in range(1, self.leaves + 1):
            self._mix_noise(st, t, np.array([1.0 if t == 1 else 0.0]))
            out[t - 1] = st._noise[0]
        return out

    def executed_coefficients(self) -> np.ndarray:
        """r_0..r_(K-1) of the executed encoder R_exec = L_exec^{-1} A (column 1; raised to an upper bound
        on the solve's rounding; :func:`privacct.counters.strategies.executed_encoder`). Refuses
        (PrivacctError) a noise path with l_0 = 0 or a non-finite R_exec. Read-only; computed once per recursion
        that runs, per process (:mod:`privacct.counters.executed_cache`: keyed on the noise path and the bytes of its
        coefficients, a short probe compared on every hit)."""
        return _cached_executed_coefficients(self)

    def _mixing_parameters(self) -> tuple[np.ndarray, ...]:
        """The coefficients the recursion reads (sqrt-toeplitz: c; blt: P_1..P_d, Q_1..Q_d)."""
        return self.implementation.mixing_parameters(self)

    def _row_weights(self, t: int) -> np.ndarray | None:
        """Ledger weights of draw z_t: row t of R_exec (r_(t-1), ..., r_0), None without a ledger. The
        probe runs at the first draw; coefficients changed after it are refused (the recorded weights
        would no longer describe the recursion)."""
        if self.ledger is None:
            return None
        if self._executed is None:
            self._executed = self.executed_coefficients()
            self._probed = self._coefficient_bytes()
            names = self.implementation.parameter_attributes()
            objs = None if names is None else tuple(getattr(self, n) for n in names)
            # the very objects the recursion reads, kept only when immutable (tuples of Python floats): the same
            # objects at a later draw hold the same values, so their bytes need no second look
            self._probed_objects = objs if objs is not None and all(
                type(o) is tuple and all(type(v) is float for v in o) for o in objs) else None
        else:
            kept = self._probed_objects
            names = None if kept is None else self.implementation.parameter_attributes()
            objs = None if names is None else tuple(getattr(self, n) for n in names)
            if objs is None or len(objs) != len(kept) or any(a is not b for a, b in zip(objs, kept, strict=True)):
                if self._coefficient_bytes() != self._probed:
                    # the coefficients' bytes (dtype, shape, values; -0.0 and NaN compared by their bits: stricter
                    # than equal)
                    raise PrivacctError("the counter's noise recursion changed after its first draw: the ledger's "
                                        "executed weights no longer describe what runs; refused")
        return self._executed[:t][::-1]

    def share_probe(self, other: "FactorizedCounter") -> None:
        """Take ``other``'s executed encoder (probed at its first draw) as this counter's, before this counter's own
        first draw, for counters whose noise one compiled recursion makes in their place (a loop that checks that
        recursion's impulse response against ``other``'s own noise path: algorithms/linear_mixture/engine.py
        ``_blt_step_ok``): the ledger weights of every draw are then the probe of the path that runs, made once.
        Refused unless both run the same recursion (:func:`.executed_cache.recursion_key` equal, not None), ``other``
        has probed and this counter has neither drawn nor probed. Later draws check the coefficients as usual."""
        key = recursion_key(self)
        if (key is None or key != recursion_key(other) or other._executed is None or self.steps
                or self._executed is not None):
            raise PrivacctError("share_probe: the counters do not run the same recursion, or the probe is not to share")
        self._executed = other._executed
        self._probed = self._coefficient_bytes()
        names = self.implementation.parameter_attributes()
        objs = None if names is None else tuple(getattr(self, n) for n in names)
        self._probed_objects = objs if objs is not None and all(
            type(o) is tuple and all(type(v) is float for v in o) for o in objs) else None

    def _coefficient_bytes(self) -> tuple:
        """(dtype, shape, bytes) of each coefficient array the recursion reads (:meth:`_mixing_parameters`)."""
        return tuple((a.dtype.str, a.shape, a.tobytes()) for a in map(np.asarray, self._mixing_parameters()))

    def noisy_sum(self) -> np.ndarray:
        return self.implementation.noisy_sum(self)

    def exact_sum(self) -> np.ndarray:
        """The noiseless prefix sum (for tests and regret diagnostics only; never released)."""
        return self._exact.copy()

    def noise_variance(self, steps: int | None = None) -> float:
        """Derived variance of one coordinate of the release after ``steps`` additions (default: now)."""
        t = self.steps if steps is None else check_count("steps", steps, maximum=self.leaves)
        if t == 0:
            return 0.0
        return noise_unit_variance(self.mechanism, self.scale) * float(prefix_variances(self.structure, t)[-1])


__all__ = ["FactorizedCounter"]
