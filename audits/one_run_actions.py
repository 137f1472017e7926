"""One-run ACTION audits of a JDP learner (docs/auditing.md#one-run-action-audits): per-canary guesses from the actions
the learner prescribes to the users who are not canaries, so that a policy reading un-noised data shows up in one run.

The run is the one-run audit's (:mod:`privacct.audits.one_run_learner`): M canary users at even spacing, each playing
canary A's or canary B's response by a fair coin S_i (``SeedSequence(seed)``), every other user the environment's, the
agent's coins fixed. What the audit observes, Y: every release with its schedule (which release groups are drawn over
which users, in which order) and the actions prescribed to every user who is not a canary (never a canary's own). A
correct JDP learner's Y is (eps, delta)-DP in each canary at its accounted eps: its releases are (the papers' lemma)
and the actions to a non-canary user are a function of the releases, her own data and the coins (the billboard lemma).

Per canary i (user u_i), a REPLAY of the run from u_i on: the same seeds (the same noise, environment and coins), canary
i playing the other bit, every release over her moved back to the run's (her reported contribution under the bit she
played minus under the replayed one is added to its noise, through a Toeplitz counter's noise path weighted by its
executed R: :class:`privacct.tap.ActionPin`, docs/auditing.md#pinning-a-toeplitz-noise-path), the canaries before her
playing their own bits, and the window ending before the next canary u_{i+1} (or after ``window`` users). The replay
of the bit she played IS the run (the same inputs), so it prescribes the run's actions; a correct learner's replay of
the other bit does too (its actions read only the releases, which are the run's). The guess: when the replay of the
other bit prescribes some user in the window different actions than the run (or draws a different release schedule)
before any release it cannot pin (a release over canary i whose share the learner did not report: Private LSVI-UCB's
responses; nothing after it is compared), exactly one bit reproduces the observation, and the audit guesses it;
otherwise it abstains. Every guess is right by construction; what a leak changes is how many canaries get one. A
replay is refused (it abstains) unless the canary's own releases the primitives record in it, and every counter release
it makes, before its first difference equal the run's (to rounding), at least one over her: the check that the pin
held (:func:`_verify_pin`).

Soundness (docs/auditing.md#soundness-of-the-action-audit): canary i's guess is a function of Y (the pinned releases
are Y's, the non-canary users' data and the coins are the auditor's) and of S_1..S_{i-1} only (the window ends before
u_{i+1}), so it is PREDICTABLE; given Y and S_{<i}, S_i is right with probability at most e^eps / (1 + e^eps) plus an
excess of mean at most delta / (1 + e^eps), so P[R guesses, all right] <= q^R + M delta / (1 + e^eps)
(:func:`privacct.audits.one_run.predictable_epsilon_lower_bound`). Steinke et al.'s top-k guessing and the f-DP bound
assume guesses that are functions of Y alone, which a replay that reads the earlier canaries' bits is not; they are
not used here.

Cost: one learner run, plus per canary a replay of its window only: on POSIX the run FORKS at the end of user
u_i - 1's episode and the child replays (``engine="fork"``: the learner's whole state is copied by the operating
system); elsewhere, or with ``engine="rerun"``, each replay runs from episode 1 to the window's end.
"""

from __future__ import annotations

import math
import os
import pickle
import time
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Callable

import numpy as np

from privacct.errors import PrivacctError, check_count

from .learner_audit import accounted_epsilon
from .one_run import FdpBound, draw_bits, predictable_epsilon_lower_bound, predictable_fdp_lower_bound
from .one_run_learner import plan_users, resolve_one_run_config

if TYPE_CHECKING:
    from privacct.algorithms.contract import RunConfig

ENGINES = ("auto", "fork", "rerun")
PLACEMENTS = ("auto", "spread", "releases")
TESTS = ("JDP as its proofs establish it: the releases and the actions sent to the users who are not canaries, "
         "(eps, delta)-DP in each canary (a policy that reads un-noised data fails it)")


def _other(bit: str) -> str:
    return "B" if bit == "A" else "A"


@dataclass(frozen=True)
class CanaryReplay:
    """The replay of one canary (module docstring): ``user`` u_i, the window of users ``(user, window_end]``
    compared, ``decisive`` when the replay of the other bit differs from the run in the window (then ``difference``
    is the first user whose actions, or whose release schedule, differ, and ``kind`` says which), ``cut_at`` the first
    user after a release the replay could not pin (None: none in the window), ``episodes`` replayed, ``error`` when
    the replay raised (then not decisive)."""

    user: int
    window_end: int
    decisive: bool
    difference: int | None = None
    kind: str = ""
    cut_at: int | None = None
    episodes: int = 0
    error: str | None = None

    def to_dict(self) -> dict:
        return {"user": self.user, "window_end": self.window_end, "decisive": self.decisive,
                "difference": self.difference, "kind": self.kind, "cut_at": self.cut_at, "episodes": self.episodes,
                "error": self.error}


@dataclass(frozen=True)
class OneRunActionResult:
    """A learner's one-run action audit (module docstring). ``guesses`` canaries got a guess, ``correct`` of them
    right (all, by construction), ``prefix`` the leading run of right guesses in canary order (the statistic);
    ``epsilon_lower_bound`` exceeds the true eps of Y with probability at most 1 - ``confidence``. ``verdict``:
    ``fails`` iff the bound exceeds the claim, else ``inconclusive`` (no power criterion: like a black-box action
    audit, it can fail, never pass)."""

    algorithm: str
    privacy: str
    calibration: str
    episodes: int
    horizon: int | None
    env: str | None
    mutant: str | None
    canaries: int
    spacing: int
    window: int | None
    guesses: int
    correct: int
    prefix: int
    epsilon_lower_bound: float
    claimed_epsilon: float
    delta: float
    confidence: float
    accountant: str
    accounted_epsilon: float
    engine: str
    seconds: float
    run_seconds: float
    replay_episodes: int
    cut: int
    errors: int
    replays: tuple[CanaryReplay, ...] = ()
    seed: int = 0
    notes: tuple[str, ...] = field(default_factory=tuple)
    #: the f-DP bound of the same predictable guesses (docs/auditing.md#the-f-dp-bound-for-predictable-guesses): its
    #: mu rejects mu-GDP whatever the mechanism; its eps(delta) is a lower bound only for a GDP-shaped one
    fdp: FdpBound | None = None
    #: where the canaries sit (:func:`place_canaries`): ``spread`` (even spacing) or ``releases`` (the last user before
    #: each fixed release of a batched learner)
    placement: str = "spread"

    tests: str = TESTS
    check: str = "one-run-actions"

    @property
    def verdict(self) -> str:
        return "fails" if self.epsilon_lower_bound > self.claimed_epsilon else "inconclusive"

    @property
    def sandwich_ok(self) -> bool:
        return self.epsilon_lower_bound <= self.accounted_epsilon * (1 + 1e-9)

    @property
    def reason(self) -> str:
        if self.verdict == "fails":
            return (f"violation certified: eps lower bound {self.epsilon_lower_bound:.4f} > claim {self.claimed_epsilon:g}"
                    f" ({self.guesses} canaries whose bit the actions to other users reveal)")
        return ("no violation found; an action audit has no power criterion (it can fail, never pass): "
                f"{self.guesses} of {self.canaries} canaries changed an action to another user when replayed")

    def to_dict(self) -> dict[str, Any]:
        def num(x):
            return float(x) if x is not None and math.isfinite(x) else None
        return {"kind": "one-run action audit", "check": self.check, "tests": self.tests, "algorithm": self.algorithm,
                "privacy": self.privacy, "calibration": self.calibration, "episodes": self.episodes,
                "horizon": self.horizon, "env": self.env, "mutant": self.mutant, "canaries": self.canaries,
                "spacing": self.spacing, "window": self.window, "guesses": self.guesses, "correct": self.correct,
                "prefix": self.prefix, "epsilon_lower_bound": num(self.epsilon_lower_bound),
                "mu_lower_bound": num(self.fdp.parameter) if self.fdp else None,
                "epsilon_fdp": num(self.fdp.epsilon) if self.fdp else None,
                "fdp_note": "mu_lower_bound rejects mu-GDP for these predictable guesses (assumption-free); "
                            "epsilon_fdp is its eps(delta), a bound only if the mechanism is GDP-shaped",
                "claimed_epsilon": num(self.claimed_epsilon), "delta": float(self.delta),
                "confidence": float(self.confidence), "accountant": self.accountant,
                "accounted_epsilon": num(self.accounted_epsilon), "sandwich_ok": self.sandwich_ok,
                "verdict": self.verdict, "reason": self.reason, "engine": self.engine, "seconds": num(self.seconds),
                "run_seconds": num(self.run_seconds), "replay_episodes": self.replay_episodes, "cut": self.cut,
                "errors": self.errors, "seed": self.seed, "notes": list(self.notes), "placement": self.placement,
                "decisive": [r.to_dict() for r in self.replays if r.decisive]}

    def summary(self) -> str:
        rel = "<=" if self.sandwich_ok else "> (SANDWICH VIOLATED: the code's releases and actions leak more than its log)"
        cut = f", {self.cut} windows cut by a release the replay cannot pin" if self.cut else ""
        err = f", {self.errors} replays without evidence (abstained)" if self.errors else ""
        return (f"one-run action audit {self.verdict.upper()} ({self.algorithm} {self.privacy} {self.calibration} "
                f"K={self.episodes}{'' if self.horizon is None else f' H={self.horizon}'}"
                + ("" if self.mutant is None else f", mutant {self.mutant}")
                + f"): {self.canaries} canaries ("
                + ("one before each fixed release, " if self.placement == "releases" else "") + f"spacing {self.spacing}"
                + ("" if self.window is None else f", window {self.window}") + f"), {self.guesses} guesses, "
                f"{self.correct} correct; eps lower bound {self.epsilon_lower_bound:.4f} {rel} accounted "
                f"{self.accounted_epsilon:.4f} ({self.accountant}) vs claimed {self.claimed_epsilon:g} (delta "
                f"{self.delta:g}), confidence {self.confidence:g}{cut}{err}; {self.replay_episodes} episodes replayed "
                f"({self.engine}); {self.seconds:.1f} s. Tests {self.tests}")


# --------------------------------------------------------------------------------------------------
# replays

@dataclass
class _Payload:
    """What one replay hands back: its draws from index ``base`` of the run's on, their unpinned indices, the actions of
    the users after the canary, the episodes it ran, an error, and the releases of the replayed canary the primitives
    recorded in the replay ((name, values) of each, :class:`privacct.tap.CanaryRecord`)."""

    base: int
    draws: list
    unpinned: list
    actions: dict
    episodes: int
    error: str | None = None
    records: list = field(default_factory=list)
    #: replay draw index -> fingerprint of the counter release made at that draw (:meth:`privacct.tap.ActionPin.note_release`)
    releases: dict = field(default_factory=dict)


def _records_of(pin, user: int, start: int = 0) -> list:
    """(name, values, index of the replay's draw that made it) of the canary records of ``user`` in the pin's tap from
    index ``start`` on (:attr:`privacct.tap.ActionPin.records_at`)."""
    import bisect

    tap = pin.tap
    if tap is None:
        return []
    out = []
    for j in range(start, len(tap.canary_records)):
        r = tap.canary_records[j]
        if r.user == user:
            d = bisect.bisect_right(pin.records_at, j) - 1
            out.append((r.name, np.array(r.values, copy=True), d))
    return out


def _verify_pin(p: _Payload, run_records: dict, limit: int, before_user: int | None,
                run_releases: dict | None = None, user: int | None = None) -> str | None:
    """None when every release of the replayed canary recorded in the replay before its first difference from the run
    (made by a draw before draw ``limit``, over users before ``before_user``) equals the run's (to rounding), and
    every counter release made in that stretch does too (``run_releases``: run draw index -> fingerprint,
    :func:`privacct.tap.release_fingerprint`; a Toeplitz counter's later releases are pinned through its whole noise
    path, docs/auditing.md#pinning-a-toeplitz-noise-path), and at least one release over canary ``user`` was
    compared; else why not. It catches a replay whose canary did not play the replayed bit (a learner that reads the
    plan once, not per episode), whose reported contribution is not what entered the release, or whose pin did not
    move a noise path's later releases back: its pinned releases would then differ from the run's, and a difference
    in actions would prove nothing."""
    from privacct.tap import same_release

    checked = 0
    for j, fp in sorted(p.releases.items()):
        if j >= limit:
            break
        users = p.draws[j][0][1]
        if users is None or (before_user is not None and users[1] >= before_user):
            continue   # a release over a user whose actions already differ may differ too
        ref = None if run_releases is None else run_releases.get(p.base + j)
        if ref is None:
            continue
        if not same_release(fp, ref):
            return (f"the replay's {p.draws[j][0][0]} release over users {users[0]}..{users[1]} is not the run's: the "
                    "pin does not hold for this learner")
        checked += user is not None and users[0] <= user <= users[1]
    for name, values, d in p.records:
        if d < 0 or d >= limit:
            continue
        users = p.draws[d][0][1]
        if before_user is not None and (users is None or users[1] >= before_user):
            continue   # the release holds a user whose actions already differ: it may differ too
        ref = run_records.get(name)
        if ref is None:
            continue
        scale = 1.0 + float(np.max(np.abs(ref))) if ref.size else 1.0
        if values.shape != ref.shape or not np.allclose(values, ref, rtol=1e-9, atol=1e-9 * scale):
            return f"the replay's release {name!r} is not the run's: the pin does not hold for this learner"
        checked += 1
    if not checked:
        return NOTHING_CHECKED
    return None


#: :func:`_verify_pin`'s answer when the replay made no release over the canary before its first difference (a batched
#: learner's window that holds no release: nothing to compare; silent, not an error, when nothing differs either)
NOTHING_CHECKED = ("no release of the canary was recorded in the replay before its first difference: the pin cannot be "
                   "checked")


def _compare(run_draws: list, run_actions: dict, p: _Payload, user: int, end: int,
             run_records: dict | None = None, run_releases: dict | None = None) -> CanaryReplay:
    """The replay's outcome (module docstring): its first difference from the run in the window, if it comes before a
    release it could not pin; not decisive (an error) when the pin of the releases made before that difference does
    not hold (:func:`_verify_pin`, with the run's records of her releases ``run_records``: name -> values, and the
    fingerprints of the run's counter releases ``run_releases``; None: not checked)."""
    if p.error is not None:
        return CanaryReplay(user, end, False, episodes=p.episodes, error=p.error)
    unpinned = set(p.unpinned)
    sched = cut = None
    limit = len(p.draws)
    for j, (sig, e) in enumerate(p.draws):
        q = p.base + j
        if q >= len(run_draws) or run_draws[q][0] != sig:
            sched = min(e, run_draws[q][1] if q < len(run_draws) else end + 1)
            limit = j
            break
        if j in unpinned:
            cut = e
            limit = j
            break
    else:   # the replay's draws are a prefix of the run's: a further draw of the run inside the window differs
        q = p.base + len(p.draws)
        if q < len(run_draws) and run_draws[q][1] <= end:
            sched = run_draws[q][1]
    act = None
    for k in range(user + 1, end + 1):
        if cut is not None and k >= cut:
            break
        a, b = p.actions.get(k), run_actions.get(k)
        if a is None or b is None:
            continue
        if a.shape != b.shape or np.any(a != b):
            act = k
            break
    found = [(k, kind) for k, kind in ((act, "actions"), (sched, "schedule")) if k is not None and k <= end
             and (cut is None or k < cut)]
    if run_records is not None:
        why = _verify_pin(p, run_records, limit, act, run_releases, user)
        if why is not None and not (why == NOTHING_CHECKED and not found):
            # (a window with no release over her and no difference is silent: nothing to pin, nothing seen)
            return CanaryReplay(user, end, False, episodes=p.episodes, error=why)
    if not found:
        return CanaryReplay(user, end, False, cut_at=cut if cut is not None and cut <= end else None,
                            episodes=p.episodes)
    k, kind = min(found)
    return CanaryReplay(user, end, True, k, kind, episodes=p.episodes)


def _set_bits(plan, bits: tuple[str, ...]) -> None:
    object.__setattr__(plan, "bits", tuple(bits))   # the replay's plan (a forked copy, or its own object)


class _Forker:
    """The fork engine's hook (``ActionPin.on_user``): at the end of user u_i - 1's episode the run forks; the child
    turns the pin into canary i's replay and goes on with the learner's loop until its window ends (then
    :func:`_child_exit`); the parent goes on with the run while at most ``jobs`` - 1 replays are in flight (``jobs``
    processes at once, the run's among them), collecting each payload, the oldest first, when it must wait and at the
    end (:meth:`drain`). A replay is a copy of
    the run's state at its fork, so what it sends does not depend on when the parent collects it: ``jobs`` changes the
    wall time only, never a payload (tested)."""

    def __init__(self, pin, plan, users: tuple[int, ...], bits: tuple[str, ...], ends: dict[int, int],
                 todo: set[int], progress: Callable[[int], None] | None, jobs: int = 1):
        self.pin, self.plan, self.users, self.bits, self.ends = pin, plan, users, bits, ends
        self.before = {u - 1: i for i, u in enumerate(users) if u >= 2 and i in todo}
        self.payloads: dict[int, _Payload] = {}
        self.inflight: list[tuple[int, int, int, int]] = []   # (canary index, pid, read end, base), oldest first
        self.jobs = max(1, int(jobs))
        self.child_fd: int | None = None
        self.child_start = 0
        self.child_base = 0
        self.child_user = 0
        self.child_records = 0
        self.progress = progress

    def __call__(self, k: int) -> None:
        i = self.before.get(k)
        if i is None:
            return
        from privacct.tap import current

        r, w = os.pipe()
        base = len(self.pin.draws)
        tap = current()
        records = 0 if tap is None else len(tap.canary_records)
        pid = os.fork()
        if pid == 0:   # the replay of canary i: the other bit, the releases pinned, up to the window's end
            os.close(r)
            for _, _, other, _ in self.inflight:   # the other replays' pipes are the parent's to read
                os.close(other)
            self.inflight = []
            self.child_fd = w
            self.child_start = k
            u = self.users[i]
            flipped = list(self.bits)
            flipped[i] = _other(self.bits[i])
            _set_bits(self.plan, flipped)
            self.pin.start_replay({u: (self.bits[i], flipped[i])}, stop_after=self.ends[i], keep_from=u)
            self.child_base, self.child_user, self.child_records = base, u, records
            return
        os.close(w)
        self.inflight.append((i, pid, r, base))
        while len(self.inflight) >= self.jobs:   # jobs 1: wait for this replay (the run and one process at a time)
            self._collect()

    def _collect(self) -> None:
        """Read the oldest replay's payload to its end and reap its process."""
        i, pid, r, base = self.inflight.pop(0)
        chunks = []
        while True:
            got = os.read(r, 1 << 20)
            if not got:
                break
            chunks.append(got)
        os.close(r)
        os.waitpid(pid, 0)
        try:
            self.payloads[i] = pickle.loads(b"".join(chunks))
        except Exception as exc:   # noqa: BLE001 - a child that died without a payload: no evidence, said
            self.payloads[i] = _Payload(base, [], [], {}, 0, f"replay process ended without a result ({exc!r})")
        if self.progress is not None:
            self.progress(len(self.payloads))

    def drain(self) -> None:
        """Collect every replay still in flight (the run has ended)."""
        while self.inflight:
            self._collect()


def _child_exit(forker: _Forker, exc: BaseException | None) -> None:
    """In a forked replay: send the payload to the parent and end the process (never returns)."""
    from privacct.tap import ReplayWindowDone

    pin = forker.pin
    err = None if exc is None or isinstance(exc, ReplayWindowDone) else f"{type(exc).__name__}: {exc}"
    payload = _Payload(forker.child_base, pin.draws, pin.unpinned, pin.actions,
                       max(0, pin.last_user - forker.child_start), err,
                       _records_of(pin, forker.child_user, forker.child_records), pin.releases)
    try:
        data = pickle.dumps(payload, protocol=pickle.HIGHEST_PROTOCOL)
        view = memoryview(data)
        while view:
            n = os.write(forker.child_fd, view)
            view = view[n:]
        os.close(forker.child_fd)
    finally:
        os._exit(0)


def _rerun(spec, cfg, seeds, hook_args: dict, users, bits, i: int, end: int) -> _Payload:
    """Canary i's replay from episode 1 (the portable engine): the other bit, the releases over her pinned."""
    from privacct.algorithms.contract import AuditHook, CanaryPlan
    from privacct.tap import ActionPin, ReplayWindowDone, pinning

    flipped = list(bits)
    flipped[i] = _other(bits[i])
    u = users[i]
    pin = ActionPin("replay", flipped={u: (bits[i], flipped[i])}, stop_after=end, keep_from=u)
    hook = AuditHook("A", plan=CanaryPlan(users, tuple(flipped)), **hook_args)
    error = None
    try:
        with pinning(pin):
            spec.run(cfg, seeds, audit=hook)
    except ReplayWindowDone:
        pass
    except Exception as exc:   # noqa: BLE001 - a replay that raised gives no evidence; said in the result
        error = f"{type(exc).__name__}: {exc}"
    return _Payload(0, pin.draws, pin.unpinned, pin.actions, pin.last_user, error, _records_of(pin, u), pin.releases)


def replay_jobs(jobs: int | None = None) -> int:
    """Processes at once under the fork engine, the run's included (``jobs`` - 1 replays in flight beside it; 1: the
    run waits for each replay): ``jobs`` if given (an integer in [1, 64]), else the CPUs this process may run on
    (``os.sched_getaffinity``, else ``os.cpu_count()``), at most 8."""
    if jobs is not None:
        if isinstance(jobs, bool) or not isinstance(jobs, (int, np.integer)) or not 1 <= int(jobs) <= 64:
            raise PrivacctError(f"jobs must be an integer in [1, 64], got {jobs!r}")
        return int(jobs)
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return max(1, min(8, cpus))


def _window_ends(users: tuple[int, ...], K: int, window: int | None) -> list[int]:
    ends = []
    for i, u in enumerate(users):
        end = (users[i + 1] - 1) if i + 1 < len(users) else K
        if window is not None:
            end = min(end, u + window)
        ends.append(end)
    return ends


def replay_canaries(spec, cfg, users: tuple[int, ...], bits: tuple[str, ...], ends: list[int], todo: set[int],
                    hook_args: dict, *, seed: int, engine: str, progress: Callable[[int], None] | None = None,
                    jobs: int | None = None):
    """(the run's result, its seconds, the replays of the canaries in ``todo``): ONE learner run on
    ``SeedSequence([seed, 1])`` with canaries ``users`` playing ``bits``, and canary i's replay of the other bit up to
    user ``ends[i]`` (:class:`CanaryReplay`, in canary order). Soundness needs ``ends[i]`` < the next canary
    (:func:`one_run_action_audit`); a later end gives a DIAGNOSTIC only (the later canaries play their own bits in the
    replay: a guess from it would read them). ``jobs``: processes at once under the fork engine
    (:func:`replay_jobs`; the payloads are the same for every value)."""
    from threadpoolctl import threadpool_limits

    from privacct.algorithms.contract import AuditHook, CanaryPlan
    from privacct.tap import ActionPin, pinning

    plan = CanaryPlan(users, bits)
    hook = AuditHook("A", plan=plan, **hook_args)
    seeds = [np.random.SeedSequence([seed, 1])]     # the one-run audit's run (privacct.audits.one_run_learner)
    t0 = time.perf_counter()
    pin = ActionPin("record")
    forker = None
    if engine == "fork":
        forker = _Forker(pin, plan, users, bits, dict(enumerate(ends)), todo, progress, jobs=replay_jobs(jobs))
        pin.on_user = forker
    with threadpool_limits(1):   # one BLAS thread: forking with idle BLAS workers is safe, and the machine is shared
        try:
            with pinning(pin):
                res = spec.run(cfg, seeds, audit=hook)
        except BaseException as exc:
            if forker is not None and forker.child_fd is not None:
                _child_exit(forker, exc)
            if forker is not None:
                forker.drain()   # reap the replays in flight before the error goes up
            raise
        if forker is not None and forker.child_fd is not None:   # a replay whose run ended inside its window
            _child_exit(forker, None)
        if forker is not None:
            forker.drain()
        run_seconds = time.perf_counter() - t0
        if not res.tap.counterfactual:
            raise PrivacctError(f"learner {cfg.algorithm!r} reported no canary's contribution under both bits "
                                "(privacct.tap.canary_contribution): no release over a canary can be pinned")
        run_draws = list(pin.draws)
        run_releases = dict(pin.releases)
        run_actions = {k: np.asarray(v) for k, v in res.tap.actions.items()}
        payloads = {} if forker is None else dict(forker.payloads)
        for i in sorted(todo):
            if i not in payloads:   # the rerun engine, or a canary at user 1 (no episode before hers to fork at)
                payloads[i] = _rerun(spec, cfg, seeds, hook_args, users, bits, i, ends[i])
                if progress is not None:
                    progress(len(payloads))
    run_records: dict[int, dict] = {}
    for rec in res.tap.canary_records:
        run_records.setdefault(rec.user, {})[rec.name] = np.asarray(rec.values)
    replays = tuple(_compare(run_draws, run_actions, payloads[i], users[i], ends[i], run_records.get(users[i], {}),
                             run_releases) for i in sorted(todo))
    return res, run_seconds, replays


def release_users(config: "RunConfig") -> tuple[int, ...] | None:
    """The users after whose episode a release happens on a FIXED schedule (the declared log's ``release_episodes``,
    e.g. the batch ends of seed 003's batched LSVI-UCB), those with at least one user after them; None when the log
    declares no fixed schedule (a release after every episode, or data-dependent update times)."""
    from privacct.algorithms.registry import get_learner

    log = get_learner(config.algorithm).declared_log(config)
    ends = None if log is None else log.params.get("release_episodes")
    if ends is None:
        return None
    return tuple(int(e) for e in ends if 1 <= int(e) < int(config.episodes))


def place_canaries(config: "RunConfig", canaries: int, placement: str = "auto") -> tuple[tuple[int, ...], str | None]:
    """(canary users, a note or None). ``spread``: :func:`privacct.audits.one_run_learner.plan_users` (even spacing);
    ``releases``: at most one canary per release of a fixed schedule (:func:`release_users`), the LAST user before it,
    ``canaries`` of them spread evenly over the releases (all when there are fewer): between two releases the policy is
    fixed, so only a canary whose window holds a release can change an action in it, and with batches of many users
    (docs/auditing.md#batched-learners-in-the-action-audit) the last one before the release is the only canary whose
    window (up to the next canary) holds users after it; ``auto``: ``releases`` when the log declares a fixed schedule
    whose batches hold more than one user, else ``spread``."""
    if placement not in PLACEMENTS:
        raise PrivacctError(f"placement must be one of {', '.join(PLACEMENTS)}, got {placement!r}")
    K = int(config.episodes)
    rel = release_users(config) if placement != "spread" else None
    if placement == "releases" and not rel:
        raise PrivacctError(f"placement releases needs a learner whose log declares a fixed release schedule with a user "
                            f"after a release; {config.algorithm!r} at K = {K} declares none")
    if placement == "auto" and (not rel or len(rel) >= K - 1):   # no schedule, or a release after every user
        rel = None
    if rel is None:
        return plan_users(K, canaries), None
    m = check_count("canaries", canaries)
    picked = rel if m >= len(rel) else tuple(rel[i] for i in np.unique(np.round(np.linspace(0, len(rel) - 1, m))
                                                                       .astype(int)))
    note = (f"canaries at the last user before each of {len(picked)} of the {len(rel)} fixed releases "
            f"(placement releases; {m} asked): between releases the policy is fixed, so a canary can change an action "
            "in her window only through a release inside it, and a release holding a batch holds other users too "
            "(docs/auditing.md#batched-learners-in-the-action-audit)")
    return picked, note


def one_run_action_audit(config: "RunConfig | str", *, canaries: int = 1000, confidence: float = 0.95, seed: int = 0,
                         coins_seed: int = 0, mutant: str | None = None, window: int | None = None, engine: str = "auto",
                         audited: tuple[int, ...] | None = None, progress: Callable[[int], None] | None = None,
                         placement: str = "auto", jobs: int | None = None, **fields: Any) -> OneRunActionResult:
    """The one-run action audit of a JDP learner (module docstring).

    ``config``: a :class:`privacct.algorithms.contract.RunConfig` that gives the whole configuration and claim, or a
    learner's name with the keyword form's ``fields`` (privacy, epsilon, delta, calibration, episodes, horizon, env,
    options, bonus_scale; ``episodes`` None: the learner's first JDP paper setting), resolved as
    :func:`privacct.audits.one_run_learner.one_run_audit_learner` does (one path:
    :func:`privacct.audits.one_run_learner.resolve_one_run_config`). ``canaries`` M users at the largest power-of-two spacing that fits them in 1..K - 1
    (:func:`privacct.audits.one_run_learner.plan_users`). ``window``: compare at most this many users after each canary
    (None: up to the next canary; never further, which soundness needs). ``mutant``: a planted policy bug
    (``LearnerSpec.mutants``). ``engine``: ``fork`` (POSIX: each replay forks off the run at its canary), ``rerun``
    (each replay from episode 1) or ``auto`` (fork where the platform has it). ``audited``: the canary indices to replay
    (None: all; the others abstain, which keeps the bound sound). ``progress(n)``: replays done. ``placement``: where
    the canaries sit (:func:`place_canaries`: ``auto`` puts them before the fixed releases of a batched learner, else
    at even spacing). ``jobs``: processes at once under the fork engine, the run's included (:func:`replay_jobs`;
    default the CPUs this process may use; the result is the same for every value, only the wall time changes)."""
    from privacct.algorithms.contract import AuditHook, CanaryPlan
    from privacct.algorithms.registry import get_learner

    cfg = resolve_one_run_config(config, fields, caller="one_run_action_audit")
    jobs = replay_jobs(jobs)
    if cfg.privacy != "jdp":
        raise PrivacctError(f"privacy must be jdp for an action audit (under LDP the reports are the output), got "
                            f"{cfg.privacy!r}")
    if engine not in ENGINES:
        raise PrivacctError(f"engine must be one of {', '.join(ENGINES)}, got {engine!r}")
    if engine == "fork" and not hasattr(os, "fork"):
        raise PrivacctError("engine fork needs os.fork (POSIX); use engine rerun")
    engine = ("fork" if hasattr(os, "fork") else "rerun") if engine == "auto" else engine
    if window is not None:
        window = check_count("window", window)
    if not 0.0 < confidence < 1.0:
        raise PrivacctError(f"confidence must be in (0, 1), got {confidence!r}")
    seed = check_count("seed", seed, minimum=0)
    spec = get_learner(cfg.algorithm)
    K = int(cfg.episodes)
    users, placed = place_canaries(cfg, canaries, placement)
    m = len(users)
    spacing = users[1] - users[0] if m > 1 else 1
    bits = tuple("A" if v > 0 else "B" for v in draw_bits(seed, m))
    todo = set(range(m)) if audited is None else {check_count("audited canary", i, minimum=0, maximum=m - 1)
                                                  for i in audited}
    ends = _window_ends(users, K, window)
    hook_args = dict(fixed_users=False, coins_seed=coins_seed, mutant=mutant)
    AuditHook("A", plan=CanaryPlan(users, bits), **hook_args)   # validates coins_seed and the mutant before anything runs
    t0 = time.perf_counter()
    _, run_seconds, replays = replay_canaries(spec, cfg, users, bits, ends, todo, hook_args, seed=seed, engine=engine,
                                              progress=progress, jobs=jobs)
    by_index = dict(zip(sorted(todo), replays, strict=True))
    guesses = [bits[i] if (i in by_index and by_index[i].decisive) else None for i in range(m)]
    made = [(g, bits[i]) for i, g in enumerate(guesses) if g is not None]
    correct = sum(g == b for g, b in made)
    prefix = 0
    for g, b in made:
        if g != b:
            break
        prefix += 1
    bound = predictable_epsilon_lower_bound(canaries=m, prefix=prefix, delta=cfg.delta, confidence=confidence)
    acc_name, acc = accounted_epsilon(cfg, cfg.delta)
    notes = [] if placed is None else [placed]
    cut = sum(r.cut_at is not None for r in replays)
    if cut:
        notes.append(f"{cut} replays stopped comparing at a release over the canary whose share the learner does not "
                     "report (e.g. an aggregate noised without it): nothing after such a release is compared")
    errors = [r for r in replays if r.error is not None]
    if errors:
        notes.append(f"{len(errors)} replays gave no evidence (first: {errors[0].error}); they abstain")
    return OneRunActionResult(
        algorithm=cfg.algorithm, privacy=cfg.privacy, calibration=cfg.calibration, episodes=K, horizon=cfg.horizon, env=cfg.env,
        mutant=mutant, canaries=m, spacing=spacing, window=window, guesses=len(made), correct=int(correct),
        prefix=prefix, epsilon_lower_bound=float(bound), claimed_epsilon=float(cfg.epsilon), delta=float(cfg.delta),
        confidence=float(confidence), accountant=acc_name, accounted_epsilon=float(acc), engine=engine,
        fdp=predictable_fdp_lower_bound(canaries=m, prefix=prefix, delta=cfg.delta, confidence=confidence),
        placement="spread" if placed is None else "releases", seconds=time.perf_counter() - t0, run_seconds=run_seconds,
        replay_episodes=int(sum(r.episodes for r in replays)), cut=cut, errors=len(errors), replays=replays, seed=seed,
        notes=tuple(notes))


__all__ = ["CanaryReplay", "ENGINES", "NOTHING_CHECKED", "OneRunActionResult", "PLACEMENTS", "one_run_action_audit",
           "place_canaries", "release_users", "replay_canaries"]
