"""The compact ledger (issue 23 item 2; docs/performance.md#design-a-compact-ledger-item-2) against the
ledger it replaced.

``_ReferenceLedger``, ``_reference_shape_problems`` and ``_reference_check`` below are privacct/ledger.py
as it was before the compact columns (a list of Python values per draw), copied unchanged but for their
names, absolute imports and a shortened docstring: the oracle. The comparisons record the same draws
into both and require the same answers, bit for bit: the draws in order (as the regret pins hash them),
the per-user counts and weight norms, the usage, the executed log, the shape problems and the whole
``check_ledger`` outcome (or the same refusal). The random ledgers (hypothesis) mix single records, runs
of shifted intervals (what the columns compress), near-runs, weighted records, extensions and the bulk
records; the planted privatizers of privacct.audits.mutants (every mutant and control) and factorized
counters record through a tee into both. Also here: the memory the columns hold (tracemalloc), and the
refusals of the bulk records (nothing recorded).
"""

from __future__ import annotations

import pickle
import tracemalloc
from typing import Iterable

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacct.errors import PrivacctError
from privacct.ledger import Draw, GroupUsage, Ledger, LedgerCheck, check_ledger, independent_values, shape_problems
from privacct.log import MECHANISMS, Claim, MechanismLog, ReleaseGroup, Sensitivity, Structure


# --------------------------------------------------------------------------- the oracle: the ledger as it was
class _ReferenceLedger:
    """An append-only record of noise draws. Cheap to append (columnar Python lists)."""

    def __init__(self) -> None:
        self._group: list[str] = []
        self._lo: list[int] = []
        self._hi: list[int] = []
        self._mech: list[str] = []
        self._scale: list[float] = []
        self._shape: list[tuple[int, ...]] = []
        self._batch: list[int] = []
        # (group, mechanism, scale) -> [sum of w^2, sum of |w|] per user (index 0 is user 1), over weighted draws
        self._weighted: dict[tuple[str, str, float], list[np.ndarray]] = {}
        self._is_weighted: list[bool] = []

    def __len__(self) -> int:
        return len(self._group)

    def record(self, *, group: str, users: tuple[int, int], mechanism: str, scale: float,
               shape: tuple[int, ...], batch: int = 1, weights=None) -> None:
        """Record one draw over the user interval ``users = (first, last)`` (1-based, inclusive).

        ``weights`` (optional): one finite weight per user of the interval, the coefficient with
        which she enters the noised value (a factorized counter's row of R); absent means 1 each."""
        lo, hi = int(users[0]), int(users[1])
        if lo < 1 or hi < lo:
            raise PrivacctError(f"users must be an interval (first, last) with 1 <= first <= last, got {users!r}")
        if mechanism not in MECHANISMS:
            raise PrivacctError(f"mechanism must be one of {', '.join(MECHANISMS)}, got {mechanism!r}")
        if weights is not None:
            w = np.asarray(weights, dtype=float)
            if w.shape != (hi - lo + 1,) or not np.all(np.isfinite(w)):
                raise PrivacctError(f"weights must be {hi - lo + 1} finite numbers (one per user of {users!r}), "
                                    f"got shape {w.shape}")
            self._add_weights((group, mechanism, float(scale)), lo, w * w, np.abs(w))
        self._is_weighted.append(weights is not None)
        self._group.append(group)
        self._lo.append(lo)
        self._hi.append(hi)
        self._mech.append(mechanism)
        self._scale.append(float(scale))
        self._shape.append(tuple(int(s) for s in shape))
        self._batch.append(int(batch))

    def _add_weights(self, key: tuple[str, str, float], lo: int, sq: np.ndarray, ab: np.ndarray) -> None:
        acc = self._weighted.get(key)
        hi = lo + sq.size - 1
        if acc is None or acc[0].size < hi:
            n = max(hi, 2 * (acc[0].size if acc is not None else 0))
            grown = [np.zeros(n), np.zeros(n)]
            if acc is not None:
                grown[0][:acc[0].size] = acc[0]
                grown[1][:acc[1].size] = acc[1]
            acc = self._weighted[key] = grown
        acc[0][lo - 1:hi] += sq
        acc[1][lo - 1:hi] += ab

    def per_user_norms(self, group: str, mechanism: str, scale: float) -> np.ndarray:
        """Per-user weight norm of (group, mechanism, scale): sqrt(sum w^2) for Gaussian noise,
        sum |w| for Laplace, an unweighted draw counting w = 1 (index 0 is user 1)."""
        idx = [i for i, g in enumerate(self._group)
               if g == group and self._mech[i] == mechanism and self._scale[i] == scale and not self._is_weighted[i]]
        acc = self._weighted.get((group, mechanism, float(scale)))
        n = max([self._hi[i] for i in idx] + [0 if acc is None else acc[0].size])
        total = np.zeros(n)
        if idx:
            diff = np.zeros(n + 2)
            np.add.at(diff, np.array([self._lo[i] for i in idx]), 1.0)
            np.add.at(diff, np.array([self._hi[i] for i in idx]) + 1, -1.0)
            total += np.cumsum(diff)[1:n + 1]
        laplace = mechanism == "laplace"
        if acc is not None:
            total[:acc[0].size] += acc[1] if laplace else acc[0]
        return total if laplace else np.sqrt(total)

    def draws(self) -> Iterable[Draw]:
        for i in range(len(self)):
            yield Draw(self._group[i], self._lo[i], self._hi[i], self._mech[i], self._scale[i], self._shape[i], self._batch[i])

    def groups(self) -> list[str]:
        return sorted(set(self._group))

    def extend(self, other: "_ReferenceLedger") -> None:
        for i, d in enumerate(other.draws()):
            self.record(group=d.group, users=(d.first_user, d.last_user), mechanism=d.mechanism,
                        scale=d.scale, shape=d.shape, batch=d.batch)
            self._is_weighted[-1] = other._is_weighted[i]
        for key, (sq, ab) in other._weighted.items():
            self._add_weights(key, 1, sq, ab)

    def per_user_counts(self, group: str, *, scale: float | None = None) -> np.ndarray:
        """Draw counts per user for ``group`` (index 0 is user 1), optionally for one scale only.

        Difference array over the intervals: O(draws + users).
        """
        idx = [i for i, g in enumerate(self._group) if g == group and (scale is None or self._scale[i] == scale)]
        if not idx:
            return np.zeros(0, dtype=np.int64)
        lo = np.fromiter((self._lo[i] for i in idx), dtype=np.int64, count=len(idx))
        hi = np.fromiter((self._hi[i] for i in idx), dtype=np.int64, count=len(idx))
        n = int(hi.max())
        diff = np.zeros(n + 2, dtype=np.int64)
        np.add.at(diff, lo, 1)
        np.add.at(diff, hi + 1, -1)
        return np.cumsum(diff)[1 : n + 1]

    def usage(self) -> list[GroupUsage]:
        """The worst user of every (group, mechanism, scale) that ran."""
        keys = sorted({(g, m, s) for g, m, s in zip(self._group, self._mech, self._scale, strict=True)})
        out = []
        for g, m, s in keys:
            counts = self.per_user_counts(g, scale=s)
            u = int(np.argmax(counts))
            n_draws = sum(1 for gg, mm, ss in zip(self._group, self._mech, self._scale, strict=True) if (gg, mm, ss) == (g, m, s))
            out.append(GroupUsage(g, m, s, u + 1, int(counts[u]), n_draws))
        return out

    def executed_log(self, declared: MechanismLog) -> MechanismLog:
        """The log of what ran: declared sensitivities, executed scales and worst-user counts.

        Each (group, scale) that ran becomes a ``repeated(count)`` group with the worst user's
        count. Draws whose group the declared log does not name are an error (nothing can be
        assumed about their sensitivity). Declared groups that never ran are dropped.
        """
        usage = self.usage()
        if not usage:
            raise PrivacctError("the ledger is empty: no noise was drawn through privacct primitives")
        groups: list[ReleaseGroup] = []
        declared_names = {g.name for g in declared.release_groups}
        for u in usage:
            if u.group not in declared_names:
                raise PrivacctError(f"ledger group {u.group!r} is not declared in log {declared.name!r}")
            dg = declared.group(u.group)
            if u.mechanism != dg.mechanism:
                raise PrivacctError(
                    f"ledger group {u.group!r} ran mechanism {u.mechanism!r} but the log declares {dg.mechanism!r}"
                )
            name = u.group if sum(1 for v in usage if v.group == u.group) == 1 else f"{u.group}@scale={u.scale:g}"
            if (u.group, u.mechanism, float(u.scale)) in self._weighted:
                groups.append(self._weighted_group(name, dg, u))
                continue
            groups.append(ReleaseGroup(name, dg.mechanism, u.scale, dg.sensitivity, Structure.repeated(u.count),
                                       dg.dimension, f"executed: worst user {u.worst_user}, {u.draws} draws", dg.paper))
        return declared.replace_groups(groups)


    def _weighted_group(self, name: str, dg: ReleaseGroup, u: GroupUsage) -> ReleaseGroup:
        """One release whose sensitivity is the declared step sensitivity times the worst user's
        weight norm (raised by 2^-40 for the rounding of the float sums; docs/counters.md#ledger)."""
        from privacct.accounting.base import _product_up

        norms = self.per_user_norms(u.group, u.mechanism, u.scale)
        worst = int(np.argmax(norms))
        mult = float(norms[worst]) * (1.0 + 2.0**-40)
        sens = Sensitivity(dg.sensitivity.norm, _product_up(dg.sensitivity.value, mult),
                           f"executed: declared {dg.sensitivity.value!r} x weight norm {mult!r} of user {worst + 1}")
        return ReleaseGroup(name, dg.mechanism, u.scale, sens, Structure.single(), dg.dimension,
                            f"executed: worst user {worst + 1}, {u.draws} weighted draws", dg.paper)


def _reference_shape_problems(declared: MechanismLog, ledger: _ReferenceLedger) -> list[str]:
    """Draws that noise fewer (or more) independent values than their group's declared
    ``dimension``: e.g. one noise value shared by all (s, a) pairs, or a Gram matrix noised
    without symmetrising. Groups that declare no dimension are not checked."""
    dims = {g.name: g.dimension for g in declared.release_groups}
    seen: dict[tuple[str, str, tuple[int, ...]], None] = {}
    for i in range(len(ledger)):
        seen.setdefault((ledger._group[i], ledger._mech[i], ledger._shape[i]), None)
    out = []
    for group, mech, shape in seen:
        want = dims.get(group)
        got = independent_values(mech, shape)
        if want is not None and got != want:
            out.append(f"group {group!r}: a draw noised {got} independent values, the log declares dimension {want}")
    return sorted(set(out))


def _reference_check(declared: MechanismLog, ledger: _ReferenceLedger, *, delta: float | None = None,
                 accountant: str | None = None, rtol: float = 1e-9) -> LedgerCheck:
    """privacct.ledger.check_ledger as it was (docstring: see there)."""
    from privacct.accounting import default_delta, tightest_epsilon  # local import: accounting imports log, not ledger

    executed = ledger.executed_log(declared)
    if delta is None:
        delta = default_delta(declared)
    name_d, eps_d = tightest_epsilon(declared, delta=delta, accountant=accountant)
    name_e, eps_e = tightest_epsilon(executed, delta=delta, accountant=accountant or name_d)
    counts = {g.name: g.per_user_count for g in declared.release_groups}
    ran = {g.name: g.per_user_count for g in executed.release_groups}
    problems = _reference_shape_problems(declared, ledger)
    return LedgerCheck(declared_epsilon=eps_d, executed_epsilon=eps_e, accountant=name_e, delta=delta,
                       declared_counts=counts, executed_counts=ran,
                       ok=bool(eps_e <= eps_d * (1 + rtol)) and not problems, executed_log=executed,
                       shape_problems=problems)




# --------------------------------------------------------------------------- comparing the two
GROUPS = ("a", "b", "c")
SCALES = (0.5, 1.0, 2.0)
SHAPES = ((3,), (2, 2), (6,), (3, 3))
NORM = {"laplace": "l1", "gaussian": "l2", "symmetric-gaussian-matrix": "frobenius-upper"}


def _outcome(fn, *args, **kw):
    """("ok", fn(*args, **kw)) or ("refused", the error's type and message)."""
    try:
        return ("ok", fn(*args, **kw))
    except PrivacctError as e:
        return ("refused", type(e).__name__, str(e))


def _check(check, log, led, **kw) -> tuple:
    """Everything a ledger check reports (the whole dict, the executed log, ok)."""
    c = check(log, led, **kw)
    assert isinstance(c, LedgerCheck)
    return (c.to_dict(), c.executed_log, c.ok)


def assert_same(ref: _ReferenceLedger, new: Ledger, logs: Iterable[MechanismLog] = (), accountant: str | None = "rdp"):
    """Every reading of the two ledgers agrees, bit for bit."""
    old_draws, new_draws = list(ref.draws()), list(new.draws())
    assert [repr(d) for d in new_draws] == [repr(d) for d in old_draws]   # types too: the pins hash reprs
    assert new_draws == old_draws and list(new) == old_draws
    assert len(new) == len(ref) and new.groups() == ref.groups()
    assert new.usage() == ref.usage()
    for g in set(GROUPS) | set(ref.groups()):
        for s in (None,) + SCALES:
            a, b = ref.per_user_counts(g, scale=s), new.per_user_counts(g, scale=s)
            assert a.dtype == b.dtype and np.array_equal(a, b), (g, s)
        for m in MECHANISMS:
            for s in SCALES:
                a, b = ref.per_user_norms(g, m, s), new.per_user_norms(g, m, s)
                assert a.dtype == b.dtype and a.shape == b.shape and a.tobytes() == b.tobytes(), (g, m, s)
    for log in logs:
        assert _outcome(new.executed_log, log) == _outcome(ref.executed_log, log)
        assert shape_problems(log, new) == _reference_shape_problems(log, ref)
        for acc in {accountant, "basic"}:
            old = _outcome(_check, _reference_check, log, ref, delta=1e-6, accountant=acc)
            assert _outcome(_check, check_ledger, log, new, delta=1e-6, accountant=acc) == old


class Tee:
    """Forwards every record to both ledgers (the planted privatizers record through it)."""

    def __init__(self) -> None:
        self.ref, self.new = _ReferenceLedger(), Ledger()

    def record(self, **kw) -> None:
        self.ref.record(**kw)
        self.new.record(**kw)


# --------------------------------------------------------------------------- random ledgers
keys = st.tuples(st.sampled_from(GROUPS), st.sampled_from(MECHANISMS), st.sampled_from(SCALES),
                 st.sampled_from(SHAPES), st.sampled_from((1, 3)))
one_record = st.tuples(st.just("record"), keys, st.integers(1, 40), st.integers(0, 6), st.booleans(), st.integers(0, 9))
a_run = st.tuples(st.just("shifted"), keys, st.integers(1, 30), st.integers(0, 4), st.integers(1, 12), st.booleans())
bulk = st.tuples(st.just("many"), st.lists(st.tuples(keys, st.integers(1, 30), st.integers(0, 3)), min_size=0, max_size=12))
single_users = st.tuples(st.just("run"), keys, st.integers(1, 30), st.integers(0, 15))
#: draws of one key whose intervals almost continue each other: the next lo is the last + 0, 1 (often) or 2, the width
#: changes or not; the first ``split`` by record(), the rest by one record_many (the join conditions of the columns)
steps = st.lists(st.tuples(st.sampled_from((0, 1, 1, 1, 2)), st.sampled_from((0, 0, 1, 2))), min_size=1, max_size=12)
jitter = st.tuples(st.just("jitter"), keys, st.integers(1, 20), steps, st.integers(0, 12))
ops = st.lists(st.one_of(one_record, a_run, bulk, single_users, jitter), max_size=25)


def _weights(seed: int, n: int, scale_kind: int) -> np.ndarray:
    r = np.random.default_rng(seed)
    return r.normal(size=n) * (10.0 ** (scale_kind - 2))


def apply(op, ref: _ReferenceLedger, new: Ledger) -> None:
    """One operation on both ledgers: the reference records draw by draw, the new ledger uses the bulk calls
    where the operation is a bulk one (the same draws in the same order)."""
    kind = op[0]
    if kind == "record":
        (g, m, s, shape, batch), lo, width, weighted, seed = op[1:]
        w = _weights(seed, width + 1, seed % 5) if weighted else None
        for led in (ref, new):
            led.record(group=g, users=(lo, lo + width), mechanism=m, scale=s, shape=shape, batch=batch, weights=w)
    elif kind == "shifted":   # consecutive draws (lo + i, hi + i) of one key: one run in the columns
        (g, m, s, shape, batch), lo, width, n, via_many = op[1:]
        los = np.arange(lo, lo + n)
        for u in los.tolist():
            ref.record(group=g, users=(u, u + width), mechanism=m, scale=s, shape=shape, batch=batch)
        if via_many:
            new.record_many(new.key(group=g, mechanism=m, scale=s, shape=shape, batch=batch), los, los + width)
        else:
            for u in los.tolist():
                new.record(group=g, users=(u, u + width), mechanism=m, scale=s, shape=shape, batch=batch)
    elif kind == "many":      # a chunk whose draws alternate between keys, one key index per draw
        items = op[1]
        idx, los, his = [], [], []
        for (g, m, s, shape, batch), lo, width in items:
            ref.record(group=g, users=(lo, lo + width), mechanism=m, scale=s, shape=shape, batch=batch)
            idx.append(new.key(group=g, mechanism=m, scale=s, shape=shape, batch=batch))
            los.append(lo)
            his.append(lo + width)
        new.record_many(np.array(idx, dtype=np.int64), np.array(los, dtype=np.int64), np.array(his, dtype=np.int64))
    elif kind == "run":       # one draw for each single user first..last
        (g, m, s, shape, batch), first, extra = op[1:]
        for u in range(first, first + extra + 1):
            ref.record(group=g, users=(u, u), mechanism=m, scale=s, shape=shape, batch=batch)
        new.record_run(new.key(group=g, mechanism=m, scale=s, shape=shape, batch=batch), first, first + extra)
    elif kind == "jitter":
        (g, m, s, shape, batch), lo, moves, split = op[1:]
        los, his = [], []
        for dlo, width in moves:
            lo += dlo
            los.append(lo)
            his.append(lo + width)
        for j, (a, b) in enumerate(zip(los, his, strict=True)):
            ref.record(group=g, users=(a, b), mechanism=m, scale=s, shape=shape, batch=batch)
            if j < split:
                new.record(group=g, users=(a, b), mechanism=m, scale=s, shape=shape, batch=batch)
        new.record_many(new.key(group=g, mechanism=m, scale=s, shape=shape, batch=batch), los[split:], his[split:])
    else:
        raise AssertionError(kind)


decl_group = st.tuples(st.sampled_from(MECHANISMS), st.sampled_from(SCALES), st.sampled_from((0.5, 1.0, 2.0)),
                       st.sampled_from(("tree", "repeated", "single")), st.integers(1, 40),
                       st.sampled_from((None, 3, 4, 6)))


@st.composite
def declared_logs(draw):
    """A log naming some of the groups (an undeclared group must be refused alike), each with a random mechanism,
    scale, sensitivity, structure and dimension."""
    names = draw(st.lists(st.sampled_from(GROUPS), unique=True, min_size=1, max_size=3))
    groups = []
    for name in names:
        mech, scale, sens, kind, n, dim = draw(decl_group)
        structure = {"tree": Structure.tree, "repeated": Structure.repeated}.get(kind, lambda n: Structure.single())(n)
        groups.append(ReleaseGroup(name, mech, scale, Sensitivity(NORM[mech], sens), structure, dim))
    return MechanismLog("random", "joint", tuple(groups), claim=Claim(1.0, 1e-6))


def _logs_for(ref: _ReferenceLedger, extra: list[MechanismLog]) -> list[MechanismLog]:
    """The random logs plus one that declares every group as it ran (mechanism of its first draw), so that
    ``ok`` itself is compared on ledgers that pass as well as on ledgers that are refused."""
    first: dict[str, Draw] = {}
    for d in ref.draws():
        first.setdefault(d.group, d)
    if not first:
        return extra
    fitting = MechanismLog("fitting", "joint", tuple(
        ReleaseGroup(g, d.mechanism, d.scale, Sensitivity(NORM[d.mechanism], 1.0), Structure.tree(64),
                     independent_values(d.mechanism, d.shape)) for g, d in sorted(first.items())), claim=Claim(1.0, 1e-6))
    return extra + [fitting]


@settings(max_examples=150)
@given(ops, ops, st.booleans(), st.lists(declared_logs(), max_size=2))
def test_random_ledgers_read_as_the_reference(first, second, extend_self, logs):
    ref, new = _ReferenceLedger(), Ledger()
    for op in first:
        apply(op, ref, new)
    assert_same(ref, new)
    # extend by a second ledger built the same way (the merged per-seed ledgers of private-lsvi-ucb), or by itself
    ref2, new2 = _ReferenceLedger(), Ledger()
    for op in second:
        apply(op, ref2, new2)
    if extend_self:
        ref.extend(ref)
        new.extend(new)
    ref.extend(ref2)
    new.extend(new2)
    assert_same(ref2, new2)
    assert_same(ref, new, _logs_for(ref, logs))
    # recording goes on after an extension (the open runs of both pieces), then pickling (process pools)
    for op in second[:3]:
        apply(op, ref, new)
    back = pickle.loads(pickle.dumps(new))
    assert_same(ref, back, _logs_for(ref, logs))


@settings(max_examples=100)
@given(keys, st.integers(1, 20), steps, st.integers(0, 12), st.integers(0, 12))
def test_an_extension_continues_or_breaks_the_runs_like_the_reference(key, lo, moves, cut, split):
    """One key's near-continuous draws cut into two ledgers, the second extending the first: the first draws of the
    second ledger join the first's open run exactly when the records would have."""
    g, m, s, shape, batch = key
    ref, head, tail = _ReferenceLedger(), Ledger(), Ledger()
    for j, (dlo, width) in enumerate(moves):
        lo += dlo
        ref.record(group=g, users=(lo, lo + width), mechanism=m, scale=s, shape=shape, batch=batch)
        part = head if j < cut else tail
        if j < split:
            part.record(group=g, users=(lo, lo + width), mechanism=m, scale=s, shape=shape, batch=batch)
        else:
            part.record_many(part.key(group=g, mechanism=m, scale=s, shape=shape, batch=batch), [lo], [lo + width])
    head.extend(tail)
    assert_same(ref, head)


@settings(max_examples=100)
@given(ops, ops, ops, st.lists(declared_logs(), max_size=2))
def test_a_chain_reads_as_the_ledger_that_extended_its_parts(first, second, third, logs):
    """Ledger.chain (private-lsvi-ucb: one shared tree ledger, one small y ledger per seed) reads, on every
    reading and through check_ledger, as the reference that recorded the parts one after the other; a ledger
    extended by the chain, and the chain after pickling, too."""
    ref = _ReferenceLedger()
    parts = []
    for part_ops in (first, second, third):
        piece_ref, piece = _ReferenceLedger(), Ledger()
        for op in part_ops:
            apply(op, piece_ref, piece)
        ref.extend(piece_ref)
        parts.append(piece)
    view = Ledger.chain(parts[0], Ledger.chain(parts[1], parts[2]))   # a chain may hold a chain
    assert_same(ref, view, _logs_for(ref, logs))
    assert_same(ref, pickle.loads(pickle.dumps(view)))
    copied = Ledger()
    copied.extend(view)
    assert_same(ref, copied)


def test_a_chain_refuses_records_and_a_part_that_grew():
    shared, own = Ledger(), Ledger()
    shared.record(group="g", users=(1, 3), mechanism="gaussian", scale=1.0, shape=(2,))
    own.record(group="y", users=(2, 2), mechanism="gaussian", scale=2.0, shape=(2,))
    view = Ledger.chain(shared, own)
    assert len(view) == 2 and view.groups() == ["g", "y"]
    with pytest.raises(PrivacctError, match="read-only"):
        view.record(group="g", users=(1, 1), mechanism="gaussian", scale=1.0, shape=(2,))
    with pytest.raises(PrivacctError, match="read-only"):
        view.extend(own)
    with pytest.raises(PrivacctError, match="read-only"):   # a stacked counter's records too
        view.record_groups(["g"], users=(1, 1), mechanism="gaussian", scale=1.0, shape=(2,), weights=[np.ones(1)])
    own.record(group="y", users=(3, 3), mechanism="gaussian", scale=2.0, shape=(2,))
    with pytest.raises(PrivacctError, match="recorded after the chain"):
        view.per_user_counts("y")
    with pytest.raises(PrivacctError, match="joins ledgers"):
        Ledger.chain(shared, [own])


def test_a_chain_holds_no_copy_of_its_parts_draws():
    """The view's own memory does not grow with its parts' draws (the 100-seed private-lsvi-ucb target)."""
    shared = Ledger()
    k = shared.key(group="gram", mechanism="gaussian", scale=1.0, shape=(4, 4))
    lo = np.arange(1, 20001, dtype=np.int64)
    shared.record_many(k, lo, lo + np.arange(20000) % 7)   # runs that do not join: ~24 B each
    held_shared = _bytes_held(lambda: _copy_of(shared))[1]
    own = Ledger()
    own.record(group="y", users=(5, 5), mechanism="gaussian", scale=2.0, shape=(4,))
    _, held_view = _bytes_held(lambda: Ledger.chain(shared, own))
    assert held_view < held_shared / 20, (held_view, held_shared)


def _copy_of(led: Ledger) -> Ledger:
    out = Ledger()
    out.extend(led)
    return out


# --------------------------------------------------------------------------- fixed cases
def _ldp_keys(led: Ledger, n_groups: int = 10) -> list[int]:
    return [led.key(group=f"g{j}", mechanism="gaussian" if j % 2 else "symmetric-gaussian-matrix", scale=1.5,
                    shape=(5,) if j % 2 else (5, 5), batch=1) for j in range(n_groups)]


def _ldp_record(led, K: int, n_groups: int = 10) -> None:
    """The local-model pattern of ldp-ucrl-vtr: every episode k, one message per group over users (k, k)."""
    for k in range(1, K + 1):
        for j in range(n_groups):
            led.record(group=f"g{j}", users=(k, k), mechanism="gaussian" if j % 2 else "symmetric-gaussian-matrix",
                       scale=1.5, shape=(5,) if j % 2 else (5, 5), batch=1)


def test_bulk_records_equal_the_records_they_stand_for():
    K, G = 300, 10
    ref = _ReferenceLedger()
    _ldp_record(ref, K, G)
    # the same draws in the same order: one record per message; a 128-episode chunk at a time, one key index per draw
    one_by_one, chunked = Ledger(), Ledger()
    _ldp_record(one_by_one, K, G)
    keys = np.array(_ldp_keys(chunked, G))
    for start in range(1, K + 1, 128):
        eps = np.arange(start, min(start + 128, K + 1))
        chunked.record_many(np.tile(keys, eps.size), np.repeat(eps, G), np.repeat(eps, G))
    log = MechanismLog("ldp", "local", tuple(
        ReleaseGroup(f"g{j}", "gaussian" if j % 2 else "symmetric-gaussian-matrix", 1.5,
                     Sensitivity("l2" if j % 2 else "frobenius-upper", 1.0), Structure.single(), 5 if j % 2 else 15)
        for j in range(G)), claim=Claim(1.0, 1e-6))
    for new in (one_by_one, chunked):
        assert_same(ref, new, [log], accountant=None)
    assert check_ledger(log, chunked).ok and check_ledger(log, chunked).executed_counts == {f"g{j}": 1 for j in range(G)}
    # record_run: group by group (key-major order), the same as records group by group
    ref_major, runs = _ReferenceLedger(), Ledger()
    for j, key in enumerate(_ldp_keys(runs, G)):
        runs.record_run(key, 1, K)
        for k in range(1, K + 1):
            ref_major.record(group=f"g{j}", users=(k, k), mechanism="gaussian" if j % 2 else "symmetric-gaussian-matrix",
                             scale=1.5, shape=(5,) if j % 2 else (5, 5), batch=1)
    assert_same(ref_major, runs, [log], accountant=None)


def test_redrawn_noise_over_single_users_is_counted():
    """Two runs over overlapping users (a local randomizer that reports twice): users 5..8 are in two draws."""
    led = Ledger()
    key = led.key(group="local", mechanism="laplace", scale=3.0, shape=(6,))
    led.record_run(key, 1, 8)
    led.record_run(key, 5, 12)
    assert led.per_user_counts("local").tolist() == [1] * 4 + [2] * 4 + [1] * 4
    log = MechanismLog("l", "local", (ReleaseGroup("local", "laplace", 3.0, Sensitivity("l1", 2.0), Structure.single(),
                                                   dimension=6),), claim=Claim(1.0, 0.0))
    chk = check_ledger(log, led)
    assert not chk.ok and chk.executed_counts == {"local": 2} and chk.executed_epsilon == pytest.approx(2 * chk.declared_epsilon)


def _bytes_held(build) -> tuple[object, int]:
    """(the object ``build()`` returns, the bytes allocated in privacct/ledger.py still live after it)."""
    tracemalloc.start()
    try:
        obj = build()
        snap = tracemalloc.take_snapshot()
    finally:
        tracemalloc.stop()
    return obj, sum(s.size for s in snap.statistics("filename") if s.traceback[0].filename.endswith("privacct/ledger.py"))


def test_local_model_draws_cost_about_a_byte():
    """200,000 interleaved single-user draws (10 groups x 20,000 episodes): the order byte each, one run per group
    (the old ledger: about 120 bytes per draw)."""
    K = 20_000

    def build():
        led = Ledger()
        _ldp_record(led, K)
        return led

    led, held = _bytes_held(build)
    assert len(led) == 10 * K
    assert held / len(led) < 2.5, held
    assert all(len(led._rn[k]) == 0 and led._on[k] == K for k in range(10))   # one open run per key, nothing else


def test_tree_draws_cost_one_run_each():
    """Tree-counter draws rarely continue a run: 24 bytes and an order byte per draw (the columns grow by doubling)."""
    from privacct.mechanisms import TreeCounter
    from privacct.rng import spawn_generators

    def build():
        led = Ledger()
        tc = TreeCounter(3, leaves=4096, mechanism="laplace", scale=1.0, rngs=spawn_generators(0, 1), ledger=led,
                         group="c")
        for _ in range(4096):
            tc.add(np.zeros((1, 3)))
        return led

    led, held = _bytes_held(build)
    assert len(led) == 4096 and held / len(led) < 60, held


@pytest.mark.parametrize("strategy", ["sqrt-toeplitz", "blt"])
def test_weighted_counter_keeps_per_user_sums_not_rows(strategy):
    """A factorized counter records K weighted draws, draw t with t weights (a reversed prefix of one coefficient
    array): O(K) bytes in the ledger (two per-user sums per (group, mechanism, scale)), not the K^2 / 2 weights;
    and the same check as the reference, through the counter's own code path."""
    from privacct.counters.counter import FactorizedCounter
    from privacct.rng import spawn_generators

    K = 1500

    def build():
        tee = Tee()
        c = FactorizedCounter((2,), strategy=strategy, leaves=K, mechanism="gaussian", scale=1.0,
                              rngs=spawn_generators(0, 1), ledger=tee, group="g")
        for _ in range(K):
            c.add(np.ones((1, 2)))
        return tee, c

    (tee, c), held = _bytes_held(build)     # the reference's lists live in this module, not in privacct/ledger.py
    assert held < 64 * K, held              # the weights themselves would be 8 K^2 / 2 = 9 MB
    log = MechanismLog("c", "joint", (ReleaseGroup("g", "gaussian", 1.0, Sensitivity("l2", 1.0), c.structure, 2),),
                       claim=Claim(1.0, 1e-6))
    assert_same(tee.ref, tee.new, [log], accountant=None)
    assert check_ledger(log, tee.new).ok


def test_refusals_record_nothing():
    led = Ledger()
    key = led.key(group="g", mechanism="laplace", scale=1.0, shape=(2,))
    led.record(group="w", users=(1, 3), mechanism="gaussian", scale=1.0, shape=(2,), weights=[1.0, 0.5, 0.25])
    weighted = len(led._keys) - 1
    led.record_run(key, 1, 3)
    before = (list(led.draws()), led.per_user_counts("g").tolist(), led.per_user_norms("w", "gaussian", 1.0).tolist())
    bad = [
        (lambda: led.record_many(weighted, [4], [4]), "weighted key"),
        (lambda: led.record_run(weighted, 4, 5), "weighted key"),
        (lambda: led.record_many(99, [4], [4]), "key must be"),
        (lambda: led.record_many(True, [4], [4]), "key must be"),
        (lambda: led.record_many(1.0, [4], [4]), "key must be"),
        (lambda: led.record_many([key, 99], [4, 5], [4, 5]), "key must be"),
        (lambda: led.record_many([key], [4, 5], [4, 5]), "one index per draw"),
        (lambda: led.record_many(key, [4, 5], [4]), "hi must be"),
        (lambda: led.record_many(key, [0, 5], [4, 5]), "user numbers"),
        (lambda: led.record_many(key, [4, 5], [4, 4]), "lo <= hi"),
        (lambda: led.record_many(key, [4.0], [4.0]), "integers"),
        (lambda: led.record_many(key, [True], [True]), "integers"),
        (lambda: led.record_many(key, np.array([2**63 + 5], dtype=np.uint64), [5]), "at most"),
        (lambda: led.record_many(key, [[4]], [[4]]), "1-D"),
        (lambda: led.record_run(key, 0, 3), "first"),
        (lambda: led.record_run(key, 5, 4), "first"),
        (lambda: led.record(group="g", users=(3, 2), mechanism="laplace", scale=1.0, shape=(2,)), "users"),
        (lambda: led.record(group="g", users=(1, 2**60), mechanism="laplace", scale=1.0, shape=(2,)), "users"),
        (lambda: led.record(group="g", users=(1, 2), mechanism="poisson", scale=1.0, shape=(2,)), "mechanism"),
        (lambda: led.record(group="w", users=(1, 2), mechanism="gaussian", scale=1.0, shape=(2,), weights=[1.0]),
         "weights"),
        (lambda: led.record(group="w", users=(1, 2), mechanism="gaussian", scale=1.0, shape=(2,),
                            weights=[1.0, np.nan]), "weights"),
    ]
    for s in (0.0, -1.0, np.nan, np.inf):
        bad.append((lambda s=s: led.record(group="g", users=(1, 1), mechanism="laplace", scale=s, shape=(2,)), "scale"))
        bad.append((lambda s=s: led.key(group="g", mechanism="laplace", scale=s, shape=(2,)), "scale"))
    for call, words in bad:
        with pytest.raises(PrivacctError, match=words):
            call()
    assert (list(led.draws()), led.per_user_counts("g").tolist(),
            led.per_user_norms("w", "gaussian", 1.0).tolist()) == before
    led.record_many(key, [], [])          # an empty chunk records nothing
    led.record_many(np.array([], dtype=np.int64), [], [])
    assert list(led.draws()) == before[0]


def test_many_keys_widen_the_order_column():
    """300 keys (a scale per draw): the key index no longer fits a byte; every draw still reads back."""
    ref, new = _ReferenceLedger(), Ledger()
    for i in range(300):
        for led in (ref, new):
            led.record(group="g", users=(i + 1, i + 2), mechanism="laplace", scale=1.0 + i / 1000, shape=(1,))
    assert new._order.dtype == np.uint16
    assert_same(ref, new)


# --------------------------------------------------------------------------- the planted privatizers
def _privatizer_cases():
    from privacct.audits.mutants import CONTROLS, MUTANTS, LearnerMutant

    out = [pytest.param(m, id=f"mutant-{n}") for n, m in MUTANTS.items() if not isinstance(m, LearnerMutant)]
    return out + [pytest.param(m, id=f"control-{n}") for n, m in CONTROLS.items() if not isinstance(m, LearnerMutant)]


@pytest.mark.parametrize("m", _privatizer_cases())
def test_planted_privatizers_check_as_with_the_reference(m):
    """Every planted mutant and correct control of privacct.audits.mutants, one seed as check_mutant runs it: the
    same check (claim delta, tightest accountant), the same shape problems, the same refusals."""
    p = m.privatizer
    tee = Tee()
    p.run("A", np.random.default_rng(np.random.SeedSequence(0)), 1, ledger=tee)
    log = p.build_log()
    assert_same(tee.ref, tee.new)
    assert shape_problems(log, tee.new) == _reference_shape_problems(log, tee.ref)
    old = _outcome(_check, _reference_check, log, tee.ref, delta=m.claim.delta)
    assert _outcome(_check, check_ledger, log, tee.new, delta=m.claim.delta) == old
