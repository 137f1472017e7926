"""What a white-box learner audit observes of a :class:`~privacct.counters.counter.FactorizedCounter` over user 1
(docs/auditing.md#factorized-counters), recorded in the audited run's tap (:mod:`privacct.tap`).

A factorized counter releases y = A x + L z (A the K x K prefix matrix, z iid noise of the declared scale, A = L R;
docs/counters.md). The colluding other users know their own additions, so they see e = y - A x_others =
A[:, 1] x_1 + L z (user 1 sits in leaf 1 whenever a counter covers her: leaves are increasing user intervals).

* ``tree``: the counter IS :class:`privacct.mechanisms.TreeCounter`, which records its nodes [1, 2^j] itself.
* ``tree-honaker`` (every :class:`~privacct.counters.base.DyadicStrategy`): every draw over user 1 is the noise of a
  dyadic node [1, 2^i] (an unweighted draw over leaves 1..2^i); it is recorded as user 1's addition + that noise,
  exactly as the tree's nodes (each release is a post-processing of the noised nodes).
* Toeplitz strategies (``sqrt-toeplitz``, ``blt``): the RELEASED values, whitened with the DECLARED L:
  w = L^{-1} e = R A^{-1} e, i.e. w_t = sum_(s <= t) r_(t-s) (e_s - e_(s-1)) with r the declared column 1 of R
  (:func:`privacct.counters.strategies.column_coefficients`): w_t = r_(t-1) x_1 + z_t when the executed noise path
  is the declared one. Release t is recorded with contribution r_(t-1) x_1 (its per-coordinate weight on user 1's
  shift); a t with r_(t-1) = 0 carries nothing and is not recorded. This is what the other users can compute from
  the transcript; if the executed path differs from the declared one, the whitened noise is no longer iid (the
  statistic loses its optimality, the certified bound stays sound).

User 1's addition is the leaf's value when leaf 1 holds her alone, else the share the learner reported
(:func:`privacct.tap.user_contribution`, its means under both canaries travel with the records); a leaf of several
users without a reported share is listed unobserved. In a billboard check's replayed run (:class:`privacct.tap.Coupling`)
user 1's addition is moved to canary A's, as :class:`privacct.mechanisms.TreeCounter` does.

One-run audits (a tap with a ``plan``; docs/auditing.md#factorized-counters): a release is used when it holds exactly
one canary, whose addition is kept when her leaf holds her alone (:func:`privacct.tap.record_canary`, which needs her
contribution under both bits): a dyadic node holding one canary (as the tree's), and for a Toeplitz counter with
Gaussian noise the difference of consecutive releases y_t - y_(t-1) = x_t + (L z)_t - (L z)_(t-1) at a canary's leaf
t (only leaf t enters it; its noise is Gaussian with per-coordinate std sigma sqrt(sum_(k<t) (l_k - l_(k-1))^2),
l the declared column 1 of L, l_(-1) = 0). Different canaries' differences share noise draws: the guesses stay a
function of the output (sound); only the per-canary power reference treats each canary alone. A Laplace Toeplitz
counter's difference is not Laplace noise: it is recorded with the mechanism label :data:`GAUSSIAN_FORM` and the scale
of its DECLARED per-coordinate std (b sqrt(2) sqrt(sum_(k<t) (l_k - l_(k-1))^2)): no exact likelihood, so a score may
read it only as an output-only statistic (:mod:`privacct.audits.one_run_scores`; no power criterion).

Window means (one-run audits of a Toeplitz counter; docs/auditing.md#one-run-scores): the colluding other users see
every release, so beside the difference the observer forms, from the RELEASES, e_s = y_s minus the non-canary users'
exact prefix sum (which still holds the kept canaries' additions), and for the canary at leaf t_i (canaries at leaves
t_0 < t_1 < ..., each alone in her leaf) the statistic W_i = mean(e_s, s in [t_i, t_(i+1))) - mean(e_s, s in
[t_(i-1), t_i)): both windows hold a fixed set of canaries (up to t_i, up to t_(i-1)), so W_i = x_(t_i) + the same
weighted sum of the release noise (the first canary's before-window is [1, t_0), empty at t_0 = 1; the last canary's
after-window has the length of her before-window and is used only if the run reaches its end). Its DECLARED noise
is sum_s c_s (L z)_s: per-coordinate std scale x ||coef|| with coef_j = sum_s c_s l_(s-j) (:func:`window_noise_std`;
Laplace: x sqrt(2), label :data:`GAUSSIAN_FORM`). A counter where a canary shares her leaf makes no window records
(her share is unknown). They are kept apart from the release records, in :func:`window_records` of the tap, so the
one-run action audits, which pin releases by name, never see them.
"""

from __future__ import annotations

import numpy as np

from ..tap import AuditTap, append_canary_record, coupled_share, coupled_value, note_uncoupled, record_canary

__all__ = ["GAUSSIAN_FORM", "CounterObserver", "window_noise_std", "window_records", "whiten"]

#: The mechanism label of a one-canary record whose noise is NOT the mechanism's (Laplace draws through a Toeplitz L):
#: its ``scale`` is the declared per-coordinate std; no exact likelihood ratio (docs/auditing.md#one-run-scores).
GAUSSIAN_FORM = "gaussian-form"


def window_records(tap: AuditTap) -> list:
    """The window-mean records of a one-run audited run (module docstring): :class:`privacct.tap.CanaryRecord` s, kept
    on the tap beside (not in) ``tap.canary_records``; an empty list when none was made."""
    return tap.__dict__.setdefault("window_records", [])


def window_noise_std(l: np.ndarray, before: tuple[int, int], after: tuple[int, int]) -> float:
    """Per-coordinate std (unit iid noise z) of mean(n_s, s in ``after``) - mean(n_s, s in ``before``), n_s =
    sum_(j <= s) l_(s-j) z_j the release noise of a Toeplitz L with column ``l`` (1-based steps; windows half-open
    [a, b); an empty ``before`` (a == b) counts 0): ||coef||, coef_j = sum_s c_s l_(s-j) (docs/auditing.md#one-run-scores)."""
    l = np.asarray(l, dtype=float)
    end = after[1] - 1                       # the last step in either window
    lc = np.concatenate(([0.0], np.cumsum(l[:end])))      # lc[k] = l_0 + ... + l_(k-1)
    j = np.arange(1, end + 1)
    coef = np.zeros(end)
    for (a, b), sign in ((after, 1.0), (before, -1.0)):
        if b <= a:
            continue
        hi, lo = np.clip(b - 1 - j + 1, 0, None), np.clip(np.maximum(a, j) - j, 0, None)
        coef += sign / (b - a) * np.where(j <= b - 1, lc[hi] - lc[np.minimum(lo, hi)], 0.0)
    return float(np.linalg.norm(coef))


def whiten(released_minus_others: np.ndarray, r: np.ndarray) -> np.ndarray:
    """L^{-1} e = R A^{-1} e for a lower-triangular Toeplitz R of column ``r`` (r_0..r_(n-1)):
    ``released_minus_others`` (n, ...) the releases after steps 1..n minus the other users' contribution, each row
    w_t = sum_(s <= t) r_(t-s) (e_s - e_(s-1)) (docs/auditing.md#factorized-counters). The observer computes the same
    sum step by step (:meth:`CounterObserver.release`); this whole-matrix form is the reference its tests check."""
    e = np.asarray(released_minus_others, dtype=float)
    d = np.diff(e, axis=0, prepend=np.zeros((1,) + e.shape[1:]))
    n = e.shape[0]
    out = np.empty_like(e)
    for t in range(n):
        out[t] = np.tensordot(np.asarray(r[:t + 1], dtype=float)[::-1], d[:t + 1], axes=1)
    return out


class CounterObserver:
    """The audit bookkeeping of one FactorizedCounter in an audited run (module docstring): classic (user 1) or one-run
    (a tap with a plan). Built by the counter when a tap is active and its strategy is not the tree (which records
    itself)."""

    def __init__(self, counter, tap: AuditTap) -> None:
        self.counter, self.tap = counter, tap
        self.group = counter.group or counter.strategy
        self.user1_leaf = counter.leaf_interval_users(1, 1)[0]
        self.covers = self.user1_leaf[0] <= 1 <= self.user1_leaf[1]
        self.own: np.ndarray | None = None          # user 1's addition (B, *shape) or broadcastable
        self.means: tuple[np.ndarray, np.ndarray] | None = None
        impl = counter.implementation
        self.toeplitz = bool(impl.toeplitz)
        from .base import DyadicStrategy

        self.dyadic = isinstance(impl, DyadicStrategy)
        if self.toeplitz:
            from .strategies import column_coefficients

            self.r = np.asarray(column_coefficients(counter.structure, counter.leaves), dtype=float)
            self.diffs: np.ndarray | None = None    # row s - 1: e_s - e_(s-1), s = 1..t
            self.last_e: np.ndarray | None = None
        #: one-run audits: canary user -> (her leaf t, her addition); the previous release (Toeplitz)
        self.plan = tap.plan is not None
        self.canary_x: dict[int, tuple[int, np.ndarray]] = {}
        #: leaf t -> the canary user whose addition it is (at most one single-user canary leaf a step)
        self.canary_at: dict[int, int] = {}
        self.last_y: np.ndarray | None = None
        #: window means (module docstring): the kept canaries' additions so far, the running sum E of e_s, the open
        #: canary (user, leaf, E before her leaf), the last closed window ((a, b), its mean); False once a canary
        #: shares her leaf
        self.window_ok = self.plan and self.toeplitz
        self.canary_sum: np.ndarray | float = 0.0
        self.cum: np.ndarray | float = 0.0
        self.open: tuple[int, int, np.ndarray | float] | None = None
        self.closed: tuple[tuple[int, int], np.ndarray | float] | None = None
        self._l: np.ndarray | None = None

    # ------------------------------------------------------------------ additions
    def addition(self, t: int, x: np.ndarray) -> np.ndarray:
        """The addition that enters the counter at step ``t`` (coupled in a billboard check's replay); keeps user
        1's share at step 1."""
        if self.plan:
            self._canary_addition(t, x)
            return x
        if t != 1 or not self.covers:
            return x
        leaf, tap = self.user1_leaf, self.tap
        if leaf == (1, 1):
            x = coupled_value(f"{self.group} leaf of user 1", x)
            self.own = np.array(x, dtype=float, copy=True)
            return x
        got = tap.take_pending(self.counter.group)
        if got is None or got[4] is not None:
            why = "no share reported" if got is None else "a share reported for some seeds only"
            tap.note_unobserved(self.group, leaf, f"{self.counter.strategy} leaf 1 holds users {leaf[0]}..{leaf[1]} "
                                                  f"together ({why}): user 1's share of the leaf is unknown to the counter")
            note_uncoupled(f"{self.group}: a leaf of user 1 with other users")
            return x
        own, a, b = got[0], got[1], got[2]
        if tap.coupling is not None and tap.coupling.mode == "replay":
            x = coupled_share(f"{self.group}: a leaf of user 1 with other users", x, a, b)
            own = np.asarray(a, dtype=float)    # the replay puts canary A's share into the leaf
        self.own, self.means = np.asarray(own, dtype=float), (np.asarray(a, dtype=float), np.asarray(b, dtype=float))
        return x

    def unobservable(self) -> bool:
        return not self.covers or self.own is None

    def _canary_addition(self, t: int, x: np.ndarray) -> None:
        from ..mechanisms import _canaries_in

        leaf = self.counter.leaf_interval_users(t, t)[0]
        canaries = _canaries_in(self.tap, leaf)
        if leaf[0] == leaf[1] and canaries:
            self.canary_x[leaf[0]] = (t, np.array(x, dtype=float, copy=True))
            self.canary_at[t] = leaf[0]
            if self.window_ok:
                self._window_canary(leaf[0], t, x)
        elif canaries:
            self.window_ok = False
            self.tap.note_unobserved(self.group, leaf, f"{self.counter.strategy} leaf holds users {leaf[0]}..{leaf[1]} "
                                                       "together: a canary's share of the leaf is unknown to the counter")

    # ------------------------------------------------------------------ draws (dyadic strategies)
    def draw(self, users: tuple[int, int], weights, noise: np.ndarray) -> None:
        """A fresh draw of the counter (after its leaf -> user mapping): a dyadic node over user 1 is recorded (one-run:
        a dyadic node over exactly one kept canary)."""
        c = self.counter
        if self.plan:
            if self.toeplitz or not self.dyadic or weights is not None:
                return
            from ..mechanisms import _canaries_in

            canaries = _canaries_in(self.tap, users)
            if len(canaries) == 1 and canaries[0] in self.canary_x:
                u = canaries[0]
                record_canary(self.tap, user=u, group=self.group, name=f"{self.group} {c.strategy} node over users "
                              f"{users[0]}..{users[1]} of user {u}", mechanism=c.mechanism, scale=c.scale,
                              values=self.canary_x[u][1] + noise)
            return
        if self.toeplitz or not (users[0] <= 1 <= users[1]) or self.unobservable():
            return
        if not self.dyadic or weights is not None:
            self.tap.note_unobserved(self.group, users, f"{c.strategy}: a draw over user 1 that is not a dyadic node")
            return
        self.tap.record(group=self.group, name=f"{self.group} {c.strategy} node over users {users[0]}..{users[1]}",
                        mechanism=c.mechanism, scale=c.scale, values=self.own + noise, contribution=self.own,
                        means=self.means)

    # ------------------------------------------------------------------ releases (Toeplitz strategies)
    def release(self, t: int) -> None:
        """After step ``t``: record the whitened release w_t (one-run: the difference of releases at a canary's leaf;
        module docstring)."""
        if self.plan:
            self._canary_release(t)
            return
        if not self.toeplitz or self.unobservable():
            return
        c = self.counter
        # e_t = y_t - (the other users' exact prefix sum), the release as the colluding other users see it
        e = c.noisy_sum() - (c._exact - self.own)
        if self.diffs is None:
            self.diffs = np.zeros((c.leaves,) + e.shape)
        self.diffs[t - 1] = e if self.last_e is None else e - self.last_e
        self.last_e = e
        w = np.tensordot(self.r[:t][::-1], self.diffs[:t], axes=1)
        weight = float(self.r[t - 1])
        if weight == 0.0:
            return
        means = None if self.means is None else (weight * self.means[0], weight * self.means[1])
        self.tap.record(group=self.group, name=f"{self.group} {c.strategy} release {t} whitened", mechanism=c.mechanism,
                        scale=c.scale, values=w, contribution=weight * self.own, means=means)

    def _canary_release(self, t: int) -> None:
        if not self.toeplitz:
            return
        c = self.counter
        y = c.noisy_sum()
        prev, self.last_y = self.last_y, y
        if self.window_ok:
            self._window_release(t, y)
        u = self.canary_at.get(t)
        if u is None or self.canary_x[u][0] != t:
            return
        l = np.asarray(c.implementation.release_noise_column(c.structure, t), dtype=float)
        scale = c.scale * float(np.sqrt(np.sum(np.diff(l, prepend=0.0) ** 2)))
        name = f"{self.group} {c.strategy} release {t} minus release {t - 1} of user {u}"
        values = y if prev is None else y - prev
        if c.mechanism == "laplace":   # not Laplace noise: its declared std, read by output-only scores only
            append_canary_record(self.tap, self.tap.canary_records, user=u, group=self.group, name=name,
                                 label=GAUSSIAN_FORM, scale=float(np.sqrt(2.0)) * scale, values=values, matrix=False)
            return
        record_canary(self.tap, user=u, group=self.group, name=name, mechanism=c.mechanism, scale=scale, values=values)

    # ------------------------------------------------------------------ window means (Toeplitz strategies, one-run)
    def _window_canary(self, u: int, t: int, x: np.ndarray) -> None:
        """Canary ``u`` enters at leaf ``t`` (before release t; ``self.cum`` is E_(t-1)): the open canary's window
        closes at t - 1, and ``u`` opens hers."""
        if self.open is not None:
            self._close_window(t)
        elif self.closed is None:        # the first canary: her before-window [1, t) holds no canary
            self.closed = ((1, t), self.cum / (t - 1) if t > 1 else 0.0)
        self.open = (u, t, self.cum.copy() if isinstance(self.cum, np.ndarray) else self.cum)
        self.canary_sum = self.canary_sum + np.asarray(x, dtype=float)

    def _window_release(self, t: int, y: np.ndarray) -> None:
        c = self.counter
        e = y - (c._exact - self.canary_sum)      # the release minus the non-canary users' exact prefix sum
        self.cum = self.cum + e
        if self.open is not None and self.closed is not None:
            (a, b), _ = self.closed
            if b - a > 0 and t - self.open[1] + 1 == b - a:   # the after-window reached the before-window's length
                self._close_window(t + 1)

    def _close_window(self, end: int) -> None:
        """Close the open canary's after-window [t, end) (``self.cum`` is E_(end-1)) and record her W."""
        u, t, e0 = self.open
        before, mean_before = self.closed
        after = (t, end)
        mean_after = (self.cum - e0) / (end - t)
        self.open, self.closed = None, (after, mean_after)
        c = self.counter
        if self._l is None:
            self._l = np.asarray(c.implementation.release_noise_column(c.structure, c.leaves), dtype=float)
        sd = c.scale * window_noise_std(self._l, before, after) * (float(np.sqrt(2.0)) if c.mechanism == "laplace" else 1.0)
        label = GAUSSIAN_FORM if c.mechanism == "laplace" else "gaussian"
        append_canary_record(self.tap, window_records(self.tap), user=u, group=self.group, label=label, scale=sd,
                             name=f"{self.group} {c.strategy} window mean of releases [{after[0]}, {after[1]}) minus "
                                  f"[{before[0]}, {before[1]}) of user {u}", values=mean_after - mean_before,
                             matrix=c.mechanism == "symmetric-gaussian-matrix")
