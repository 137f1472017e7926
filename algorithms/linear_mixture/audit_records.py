"""A many-trial learner audit's run through the compiled episode loop (issue 23 item 4): what the per-draw primitives
would have recorded in the audit tap (:mod:`privacct.tap`), emitted in bulk by the engine after each compiled call.

The numpy loop of :func:`.engine.run_design` runs an audited run's releases through privacct's primitives, which
record what a white-box audit observes of user 1 (docs/auditing.md#observations-from-the-primitives). The compiled
loop (:mod:`.episode_jit`) makes the same draws from the same generators in the same order and the same arithmetic,
so every record is a function of (a) user 1's statistics of episode 1, which the compiled loop hands back as
released (``keep``: x_h, y_h after the variance weights), and (b) the drawn-ahead noise of each node or message over
her, read from the noise buffer at the position the compiled loop reads it. This module forms each record with the
primitive's own numpy expression and calls :meth:`privacct.tap.AuditTap.record` (or the counter's own
:class:`privacct.counters.observed.CounterObserver`) in the numpy loop's order:

* LDP messages (:func:`.noise_ahead.gaussian_message`, :func:`privacct.mechanisms.add_noise` for Laplace): at episode 1,
  per release group in the update order, ``"<group> report of user 1"``: her value + the message's noise;
* the printed tree (:meth:`privacct.mechanisms.TreeCounter.node_noise`): at each step t = 2^j <= K - 1, per group,
  ``"<group> node [1, t]"``: her addition + the node's noise;
* ``tree-honaker``: the counter's observer fed her addition at step 1 (:meth:`CounterObserver.addition`) and, at each
  step t = 2^j, the node [1, t]'s draw (the step's last draw of the group, :meth:`CounterObserver.draw`);
* ``blt``: the observer fed her addition at step 1 and called after every step (:meth:`CounterObserver.release`:
  the release whitened by the declared L), on the counter's state, which the compiled loop keeps in the counter's
  own arrays; the engine then runs one episode per compiled call (:attr:`AuditRecords.one_by_one`).

The actions prescribed to every user (:func:`privacct.tap.prescribed`) come from the compiled roll-out (``acts``). Whose
data each episode is: :func:`roles` (the canary of :mod:`.canary` for user 1, canary A's response or the environment
for users 2..K, as :class:`privacct.algorithms.contract.AuditHook` says). tests/algorithms/linear_mixture/
test_audited_compiled.py compares every record, action, ledger row and regret with the numpy loop's, byte for byte.
"""

from __future__ import annotations

import numpy as np

from privacct.mechanisms import _triangle, upper_triangle
from privacct.tap import current as current_tap
from privacct.tap import current_pin, prescribed

from . import canary as CAN
from .noise_ahead import honaker_draws


def audit_compiles(audit) -> bool:
    """Whether a run with audit hook ``audit`` (None: unaudited) may take the compiled loop, as far as the audit goes
    (the engine's ``_compiled_mode`` says the rest). THE predicate of what stays on the numpy loop, and why:

    * no hook but an active tap: someone observes an unaudited run through the primitives; nothing here emits for it;
    * a one-run audit (``audit.plan``, a tap with a plan): every canary's release needs her contribution under both
      bits given the same history (:func:`privacct.tap.canary_contribution`, played by the numpy loop's statistics of
      both responses) and Toeplitz counters record differences and window means per canary; not emitted here;
    * the billboard check (``audit.coupling``): the replayed run replaces user 1's values inside the primitives
      (:func:`privacct.tap.coupled_value`), which the compiled loop does not call;
    * a one-run action audit's pin (:func:`privacct.tap.current_pin`): every draw is logged and, in a replay, moved in
      place by :func:`privacct.tap.after_noise`;
    * a planted policy mutant (``audit.mutant``): a changed code path runs in the numpy loop only (none of these
      learners has one: ``LearnerSpec.mutants`` is empty);
    * a reported share waiting for a primitive (``tap.pending``, :func:`privacct.tap.user_contribution`): the
      linear-mixture learners report none, so a pending share is someone else's and stays with the primitives.

    Admitted: the many-trial audit (canary A / B at user 1, users 2..K fixed or the environment's), faithful or with
    the noise-multiplier bug (:class:`privacct.algorithms.contract.ScaledNoiseGenerator` scales the normals and
    exponentials drawn into its ``out`` buffer, the drawn-ahead ones as the per-draw ones). What else keeps the numpy
    loop (sqrt-toeplitz counters, batched leaves, a check that fails) is the engine's, audited or not."""
    tap = current_tap()
    if audit is None:
        return tap is None
    if audit.plan is not None or audit.coupling is not None or audit.mutant is not None or current_pin() is not None:
        return False
    return tap is None or (tap.plan is None and tap.coupling is None and not tap.pending)


def roles(des, audit, shared_start: bool) -> tuple[np.ndarray, np.ndarray]:
    """(aud, ctraj) of :func:`.episode_jit.run_chunk` for an audited run: aud = (role of user 1, her start state, role
    of users 2..K, their start state) and the LDP canary's trajectory ctraj (3, H), as the numpy loop plays them
    (engine ``_canary_episode`` / ``_respond_rollout``): JDP canary A / B's response from :func:`.canary.start_state`,
    the LDP canary's fixed trajectory, users 2..K canary A's response from s_1 (``fixed_users``) or the environment."""
    from .episode_jit import ENV, FIXED, JUMP, STAY

    env, H = des.env, des.H
    ctraj = np.zeros((3, H), dtype=np.int64)
    if des.mechanism == "tree":
        first = (STAY if audit.canary == "A" else JUMP, CAN.start_state(env, audit.canary, shared_start))
    else:
        first = (FIXED, env.initial_state)
        ctraj[...] = np.stack(CAN.ldp_trajectory(env, audit.canary))
    rest = (STAY, env.initial_state) if audit.fixed_users else (ENV, env.initial_state)
    return np.array(first + rest, dtype=np.int64), ctraj


class AuditRecords:
    """The audit tap's records of one compiled audited run (module docstring). ``order``: the release groups in the
    update order; ``draws``: (mechanism, ledger shape, values drawn) of each (engine ``_draw_of``); ``aggs``: the
    families' aggregators (their counters, JDP); ``mode``, ``strategy``: the compiled loop's aggregation and counter
    strategy; ``last``: the last episode that releases (K - 1 for counters, K for messages)."""

    def __init__(self, order, draws, aggs: dict, scales: dict, mode: int, strategy: int, last: int, B: int, H: int,
                 dims: dict) -> None:
        from .episode_jit import BLT, HONAKER, LOCAL

        self.tap = current_tap()
        self.order, self.aggs, self.scales, self.last, self.local = order, aggs, scales, last, mode == LOCAL
        self.honaker, self.blt = (not self.local and strategy == HONAKER), (not self.local and strategy == BLT)
        self.sizes = [n for _, _, n in draws]
        self.mechs = [m for m, _, _ in draws]
        self.per_episode = int(sum(self.sizes))
        #: BLT: the observer reads the counters' state after every step, so one episode per compiled call
        self.one_by_one = self.blt and self.tap is not None
        z3, z2 = np.zeros((0, 0, 0)), np.zeros((0, 0))
        self.keep = tuple(np.zeros((B, H, dims[f])) if (f in aggs and i == 0) else
                          (np.zeros((B, H)) if f in aggs else (z3 if i == 0 else z2))
                          for f in ("p", "r", "q") for i in (0, 1))
        self.x1: list | None = None

    def after(self, kc: int, first: int, stop: int, buf: np.ndarray, acts: np.ndarray) -> None:
        """Emit what the numpy loop's primitives record for episodes ``first .. stop - 1`` of the chunk starting at
        episode ``kc`` (``buf`` its noise drawn ahead, ``acts`` (B, n, H) its actions), in episode order: the actions
        prescribed to each user (:func:`privacct.tap.prescribed`), then the records of the episode's releases over
        user 1, group by group in the update order."""
        for k in range(first, stop):
            prescribed(k, acts[:, k - kc])
            if self.tap is None or k > self.last:
                continue
            if k == 1:
                self._user1()
            if self.local:
                if k == 1:
                    self._messages(buf, 0)
            elif self.blt:
                for g in self.order:
                    self.aggs[g.family].counters[g.name]._observer.release(k)
            elif k & (k - 1) == 0:   # steps 2^j: the node [1, k]
                self._node(kc, k, buf)

    def _user1(self) -> None:
        """User 1's value of every group as the numpy loop hands it to the primitive (engine ``_primitive_value``):
        x x^T (a Gaussian Gram group), its upper triangle (a Laplace one), x y (a target); fed to the factorized
        counters' observers (:meth:`CounterObserver.addition` at step 1)."""
        stats = {"p": self.keep[0:2], "r": self.keep[2:4], "q": self.keep[4:6]}
        self.x1 = []
        for g, mech in zip(self.order, self.mechs, strict=True):
            X, Y = stats[g.family]
            x, y = X[:, g.h], Y[:, g.h]
            if g.kind == "gram":
                xx = np.einsum("bi,bj->bij", x, x)
                value = upper_triangle(xx) if mech == "laplace" else xx
            else:
                value = x * y[:, None]
            self.x1.append(value)
            if not self.local:
                obs = getattr(self.aggs[g.family].counters[g.name], "_observer", None)   # none: the printed tree
                if obs is not None:
                    obs.addition(1, value)

    def _noise(self, buf: np.ndarray, p: int, gi: int) -> np.ndarray:
        """The noise of one draw of group ``gi`` from ``buf[:, p:]`` as the primitive makes it: Laplace (E1 - E2) x b
        (:func:`privacct.mechanisms.laplace`), a symmetric Gaussian matrix's upper triangle z x sigma mirrored
        (:func:`privacct.mechanisms.symmetric_gaussian`), a Gaussian vector z x sigma."""
        g, mech, n = self.order[gi], self.mechs[gi], self.sizes[gi]
        s = float(self.scales[g.name])
        if mech == "laplace":
            out = np.subtract(buf[:, p:p + n // 2], buf[:, p + n // 2:p + n])
            out *= s
            return out
        z = buf[:, p:p + n] * s
        if mech != "symmetric-gaussian-matrix":
            return z
        rows, cols = _triangle(g.dim)
        out = np.empty((buf.shape[0], g.dim, g.dim))
        out[:, rows, cols] = z
        out[:, cols, rows] = z
        return out

    def _messages(self, buf: np.ndarray, p: int) -> None:
        """Episode 1's messages (at ``buf[:, p:]``), one record per group: her value + the message's noise."""
        for gi, (g, mech) in enumerate(zip(self.order, self.mechs, strict=True)):
            value = self.x1[gi]   # type: ignore[index]
            self.tap.record(group=g.name, name=f"{g.name} report of user 1", mechanism=mech, scale=self.scales[g.name],
                            values=value + self._noise(buf, p, gi), contribution=value)
            p += self.sizes[gi]

    def _node(self, kc: int, k: int, buf: np.ndarray) -> None:
        """Step k = 2^j's node [1, k] of every group: the tree's (one draw per group and step) or tree-honaker's (the
        group's last draw of the step, after its leaf and nodes i < j)."""
        per = honaker_draws if self.honaker else (lambda j: 1)
        p = self.per_episode * sum(per(j) for j in range(kc, k))
        n_k = per(k)
        for gi, g in enumerate(self.order):
            noise = self._noise(buf, p + (n_k - 1) * self.sizes[gi], gi)
            p += n_k * self.sizes[gi]
            c = self.aggs[g.family].counters[g.name]
            if self.honaker:
                c._observer.draw((1, k), None, noise)
                continue
            x1 = self.x1[gi]   # type: ignore[index]
            self.tap.record(group=c.group or "tree", name=f"{c.group or 'tree'} node [1, {k}]", mechanism=c.mechanism,
                            scale=c.scale, values=x1 + noise, contribution=x1, means=None)
