"""privacct.interop: dp_accounting DpEvent trees to mechanism logs and back (docs/interop.md).

The property: a converted log accounts (privacct's tightest epsilon, what `privacct verify`
reports, and its pld accountant) as dp_accounting's own PLDAccountant accounts the original event,
to within the PLD's discretisation, and never below it by more than that; the round trip
event -> log -> event accounts the same (docs/interop.md#agreement)."""

from __future__ import annotations

import math
import re
from pathlib import Path

import attr
import dp_accounting as dpa
from dp_accounting import dp_event as E
import pytest
from dp_accounting.pld import PLDAccountant
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from privacct.accounting import get_accountant, tightest_epsilon
from privacct.accounting.base import releases
from privacct.accounting.pld import PLD
from privacct.errors import MAX_COUNT, PrivacctError
from privacct.interop import SUPPORTED_EVENTS, dp_event_from_log, log_from_dp_event
from privacct.log import Claim, MechanismLog, ReleaseGroup, Sensitivity, Structure, tree_depth

ROOT = Path(__file__).parents[2]
EX = ROOT / "privacct" / "examples"
H = 1e-4  # dp_accounting's value_discretization_interval in these tests

G, L = dpa.GaussianDpEvent, dpa.LaplaceDpEvent


def dp_epsilon(event, delta: float) -> float:
    acc = PLDAccountant(value_discretization_interval=H)
    acc.compose(event)
    return float(acc.get_epsilon(delta))


def flat(event, mult: int = 1, out: dict | None = None) -> dict:
    """{(type name, noise multiplier): per-user count} of an event tree (test oracle, written
    independently of privacct.interop)."""
    out = {} if out is None else out
    if isinstance(event, dpa.SelfComposedDpEvent):
        flat(event.event, mult * event.count, out)
    elif isinstance(event, dpa.ComposedDpEvent):
        for e in event.events:
            flat(e, mult, out)
    elif isinstance(event, (G, L)):
        key = (type(event).__name__, event.noise_multiplier)
        out[key] = out.get(key, 0) + mult
    return out


def groups(log: MechanismLog) -> list[tuple]:
    return [(g.name, g.mechanism, g.noise_scale, g.sensitivity.norm, g.sensitivity.value, g.structure.to_dict())
            for g in log.release_groups]


def one_line(e: pytest.ExceptionInfo) -> str:
    text = str(e.value)
    assert "\n" not in text and text
    return text


# ---- event -> log ------------------------------------------------------------------------------
def test_gaussian():
    log = log_from_dp_event(G(2.0), sensitivity=0.5, privacy_model="joint")
    assert groups(log) == [("gaussian-1", "gaussian", 1.0, "l2", 0.5, {"kind": "single"})]
    assert log.neighbouring == "add-remove" and log.privacy_model == "joint" and log.claim is None
    # one Gaussian of ratio 1/2: exact analytic Gaussian against dp_accounting's pessimistic PLD
    eps = tightest_epsilon(log, delta=1e-6)[1]
    assert dp_epsilon(G(2.0), 1e-6) - H <= eps <= dp_epsilon(G(2.0), 1e-6) + 1e-9


def test_laplace():
    log = log_from_dp_event(L(4.0), sensitivity=2.0, privacy_model="local", claim=(0.25, 0.0))
    assert groups(log) == [("laplace-1", "laplace", 8.0, "l1", 2.0, {"kind": "single"})]
    assert tightest_epsilon(log, delta=0.0) == ("basic", 0.25)  # eps0 = Delta_1 / b = 1 / noise_multiplier
    assert log.claim == Claim(0.25, 0.0)


def test_self_composed():
    log = log_from_dp_event(dpa.SelfComposedDpEvent(G(3.0), 7), sensitivity=1.0, privacy_model="joint")
    assert groups(log) == [("gaussian-1", "gaussian", 3.0, "l2", 1.0, {"kind": "repeated", "count": 7})]
    name, eps = tightest_epsilon(log, delta=1e-5)
    assert name == "analytic-gaussian" and eps == pytest.approx(dp_epsilon(dpa.SelfComposedDpEvent(G(3.0), 7), 1e-5), abs=H)


def test_composed_nested_merges_identical_leaves_and_names_groups_in_order():
    inner = dpa.ComposedDpEvent([G(2.0), L(5.0), dpa.NoOpDpEvent()])
    event = dpa.SelfComposedDpEvent(dpa.ComposedDpEvent([G(2.0), dpa.SelfComposedDpEvent(inner, 2), G(3.0)]), 3)
    log = log_from_dp_event(event, sensitivity=1.0, privacy_model="joint")
    assert groups(log) == [
        ("gaussian-1", "gaussian", 2.0, "l2", 1.0, {"kind": "repeated", "count": 3 + 6}),
        ("laplace-2", "laplace", 5.0, "l1", 1.0, {"kind": "repeated", "count": 6}),
        ("gaussian-3", "gaussian", 3.0, "l2", 1.0, {"kind": "repeated", "count": 3}),
    ]
    assert "event.event.events[1].event.events[1]" in log.group("laplace-2").description
    # deterministic: the same event gives the same bytes
    assert log.to_json() == log_from_dp_event(event, sensitivity=1.0, privacy_model="joint").to_json()


def test_mixed_laplace_and_gaussian_with_one_sensitivity_per_norm():
    event = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(L(5.0), 4), dpa.SelfComposedDpEvent(G(3.0), 2)])
    log = log_from_dp_event(event, sensitivity={"l1": 2.0, "l2": 0.5}, privacy_model="local")
    assert groups(log) == [("laplace-1", "laplace", 10.0, "l1", 2.0, {"kind": "repeated", "count": 4}),
                           ("gaussian-2", "gaussian", 1.5, "l2", 0.5, {"kind": "repeated", "count": 2})]
    eps, ref = tightest_epsilon(log, delta=1e-6)[1], dp_epsilon(event, 1e-6)
    assert ref - H <= eps <= ref + 3 * H


def test_frobenius_upper_makes_symmetric_gaussian_matrices():
    log = log_from_dp_event(dpa.SelfComposedDpEvent(G(4.0), 3), sensitivity=2.0, privacy_model="joint",
                            norm="frobenius-upper", neighbouring="replace-one-user")
    assert groups(log) == [("gaussian-1", "symmetric-gaussian-matrix", 8.0, "frobenius-upper", 2.0,
                            {"kind": "repeated", "count": 3})]
    assert log.neighbouring == "replace-one-user"
    assert dp_event_from_log(log) == dpa.SelfComposedDpEvent(G(4.0), 3)


@pytest.mark.parametrize("model", ["joint", "local"])
def test_both_privacy_models_account_alike(model):
    event = dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(G(2.5), 4), L(8.0)])
    log = log_from_dp_event(event, sensitivity=1.0, privacy_model=model)
    assert log.privacy_model == model
    other = log_from_dp_event(event, sensitivity=1.0, privacy_model="local" if model == "joint" else "joint")
    assert tightest_epsilon(log, delta=1e-6) == tightest_epsilon(other, delta=1e-6)
    assert MechanismLog.from_json(log.to_json()) == log  # a valid log: the strict parser reads it back


def test_noise_scale_is_rounded_toward_less_noise():
    log = log_from_dp_event(G(1.5), sensitivity=0.3, privacy_model="joint")
    from fractions import Fraction

    g = log.release_groups[0]
    assert Fraction(g.noise_scale) <= Fraction(1.5) * Fraction(0.3)
    back = dp_event_from_log(log)
    assert Fraction(back.noise_multiplier) <= Fraction(g.noise_scale) / Fraction(0.3)
    assert back.noise_multiplier <= 1.5 and back.noise_multiplier == pytest.approx(1.5, rel=1e-15)


# ---- refusals ----------------------------------------------------------------------------------
@attr.s(frozen=True, slots=True, auto_attribs=True)
class SubclassedGaussian(dpa.GaussianDpEvent):
    """A subclass may mean something else (e.g. a sampled variant): refused, not read as Gaussian."""


UNSUPPORTED = [
    E.PoissonSampledDpEvent(0.01, G(1.0)),
    E.SampledWithReplacementDpEvent(1000, 10, G(1.0)),
    E.SampledWithoutReplacementDpEvent(1000, 10, G(1.0)),
    E.NonPrivateDpEvent(),
    E.UnsupportedDpEvent(),
    E.RandomizedResponseDpEvent(0.5, 2),
    E.DiscreteLaplaceDpEvent(0.5, 1),
    E.ZCDpEvent(0.5),
    E.SingleEpochTreeAggregationDpEvent(1.0, 8),
    SubclassedGaussian(1.0),
]


@pytest.mark.parametrize("event", UNSUPPORTED, ids=lambda e: type(e).__name__)
def test_unsupported_events_are_refused_naming_the_type_and_the_supported_ones(event):
    nested = dpa.ComposedDpEvent([G(2.0), dpa.SelfComposedDpEvent(event, 2)])
    with pytest.raises(PrivacctError) as e:
        log_from_dp_event(nested, sensitivity=1.0, privacy_model="joint")
    text = one_line(e)
    assert f"event.events[1].event: event type {type(event).__name__} is not supported" in text
    assert all(name in text for name in SUPPORTED_EVENTS)


@pytest.mark.parametrize("kwargs, needle", [
    (dict(sensitivity=0), "sensitivity must be a finite number > 0, got 0"),
    (dict(sensitivity=-1.0), "sensitivity must be a finite number > 0"),
    (dict(sensitivity=math.nan), "sensitivity must be a finite number > 0"),
    (dict(sensitivity=math.inf), "sensitivity must be a finite number > 0"),
    (dict(sensitivity="1"), "sensitivity must be a number > 0, got '1'"),
    (dict(sensitivity=True), "sensitivity must be a number > 0, got True"),
    (dict(sensitivity={"l1": 1.0, "linf": 2.0}), "sensitivity as a mapping must have keys among l1, l2, frobenius-upper"),
    (dict(sensitivity={}), "sensitivity as a mapping must have keys among"),
    (dict(sensitivity={"l2": 1.0, "frobenius-upper": 1.0}), "sensitivity may give l2 or frobenius-upper"),
    (dict(sensitivity={"l1": 1.0, "l2": 0.0}), "sensitivity['l2'] must be a finite number > 0"),
    (dict(sensitivity={"l1": 1.0}, norm="l1"), "norm must be None when sensitivity is a mapping"),
    (dict(privacy_model="central"), "privacy_model must be one of joint, local, got 'central'"),
    (dict(name=""), "name must be a non-empty string"),
    (dict(name=3), "name must be a string, got 3"),
    (dict(name="x" * 201), "name must be a non-empty string of at most 200 characters"),
    (dict(claim=(0.0, 1e-6)), "claim.epsilon must be a finite number > 0"),
    (dict(claim=(1.0, 1.0)), "claim.delta must be in [0, 1)"),
    (dict(claim="1,1e-6"), "claim must be None, a privacct.log.Claim or a pair (epsilon > 0, delta in [0, 1))"),
    (dict(neighbouring="replace-one"), "neighbouring must be one of replace-one-user, add-remove, got 'replace-one'"),
    (dict(norm="linf"), "norm must be one of l1, l2, frobenius-upper, got 'linf'"),
    (dict(norm="l2"), "event.events[1]: LaplaceDpEvent needs an l1 sensitivity"),
    (dict(norm="l1"), "event.events[0]: GaussianDpEvent needs an l2 (or frobenius-upper) sensitivity"),
    (dict(sensitivity={"l1": 1.0}), "event.events[0]: GaussianDpEvent needs an l2"),
    (dict(sensitivity=1e300, event=G(1e10)), "event: noise_multiplier 10000000000.0 x sensitivity 1e+300 is beyond"),
    (dict(sensitivity=1e-300, event=G(1e-30)), "is beyond the floating-point range"),
])
def test_every_argument_is_checked_with_one_line_naming_it(kwargs, needle):
    kw = dict(event=dpa.ComposedDpEvent([G(2.0), L(3.0)]), sensitivity=1.0, privacy_model="joint")
    kw.update(kwargs)
    with pytest.raises(PrivacctError) as e:
        log_from_dp_event(kw.pop("event"), **kw)
    assert needle in one_line(e)


def _cycle():
    events: list = []
    c = dpa.ComposedDpEvent(events)
    events.append(c)
    return c


@pytest.mark.parametrize("event, needle", [
    (G(0.0), "event.noise_multiplier must be a finite number > 0, got 0.0"),
    (dpa.ComposedDpEvent([L(math.nan)]), "event.events[0].noise_multiplier must be a finite number > 0"),
    (dpa.ComposedDpEvent([G(math.inf)]), "event.events[0].noise_multiplier must be a finite number > 0"),
    (G("2"), "event.noise_multiplier must be a number > 0"),
    (dpa.SelfComposedDpEvent(G(1.0), 0), f"event.count must be an integer in [1, {MAX_COUNT}], got 0"),
    (dpa.SelfComposedDpEvent(G(1.0), 2.5), "event.count must be an integer in [1,"),
    (dpa.SelfComposedDpEvent(G(1.0), MAX_COUNT + 1), "event.count must be an integer in [1,"),
    (dpa.SelfComposedDpEvent(dpa.SelfComposedDpEvent(G(1.0), 2**30), 2**30), "the nested counts multiply to more than"),
    (dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(G(1.0), MAX_COUNT), G(1.0)]), "composed more than"),
    (dpa.ComposedDpEvent([]), "event releases nothing"),
    (dpa.ComposedDpEvent([dpa.NoOpDpEvent(), dpa.NoOpDpEvent()]), "event releases nothing"),
    (dpa.ComposedDpEvent("ab"), "event.events must be a list of DpEvents"),
    (dpa.ComposedDpEvent([G(1.0 + i / 1e4) for i in range(1001)]), "event has 1001 distinct leaves; a log holds at most 1000"),
    ({"noise_multiplier": 1.0}, "event must be a dp_accounting DpEvent, got a value of type dict"),
    (None, "event must be a dp_accounting DpEvent, got None"),
])
def test_malformed_events_are_refused_with_one_line(event, needle):
    with pytest.raises(PrivacctError) as e:
        log_from_dp_event(event, sensitivity=1.0, privacy_model="local")
    assert needle in one_line(e)


def test_a_composed_event_holding_itself_is_refused_not_looped_over(monkeypatch):
    import privacct.interop as interop

    monkeypatch.setattr(interop, "MAX_EVENT_NODES", 1000)  # the same walk, a smaller bound (fast)
    with pytest.raises(PrivacctError) as e:
        log_from_dp_event(_cycle(), sensitivity=1.0, privacy_model="local")
    assert "event must be a tree of at most 1000 events (this one is larger, or a ComposedDpEvent holds itself)" in one_line(e)
    assert interop.log_from_dp_event(dpa.SelfComposedDpEvent(dpa.ComposedDpEvent([G(2.0)] * 998), 2),
                                     sensitivity=1.0, privacy_model="local").release_groups[0].per_user_count == 1996


# ---- log -> event ------------------------------------------------------------------------------
def test_log_to_event_for_trees_adaptive_and_symmetric_matrices():
    log = MechanismLog.load(EX / "gram-tree-and-switching.json")
    ev = dp_event_from_log(log)
    # Gram: symmetric matrix, tree of 10^4 leaves -> 14 nodes per user, sigma / Delta = 234 / 2;
    # responses: adaptive(max_count = 50), accounted by privacct exactly as repeated(50)
    assert ev == dpa.ComposedDpEvent([dpa.SelfComposedDpEvent(G(117.0), tree_depth(10_000)),
                                      dpa.SelfComposedDpEvent(G(15.549999999999999), 50)])
    assert 15.549999999999999 < 311.0 / 20.0  # the largest float at or below 311/20: never more noise
    assert tree_depth(10_000) == 14
    delta = log.claim.delta
    eps, ref = tightest_epsilon(log, delta=delta)[1], dp_epsilon(ev, delta)
    assert ref - H <= eps <= ref + 3 * H


def test_log_to_event_laplace_single_and_repeated():
    log = MechanismLog.load(EX / "laplace-repeated.json")
    assert dp_event_from_log(log) == dpa.SelfComposedDpEvent(L(5.0), 5)   # b / Delta_1 = 10 / 2
    one = log.replace_groups([log.release_groups[0].with_structure(Structure.single())])
    assert dp_event_from_log(one) == L(5.0)


def test_log_to_event_agrees_on_the_seed_002_tree_log():
    log = MechanismLog.load(EX / "seed002-ucbvi-jdp-paper.json")
    ev = dp_event_from_log(log)
    assert len(ev.events) == 3 and all(e.count == 15 for e in ev.events)
    eps, ref = get_accountant("pld").epsilon(log, delta=1e-6), dp_epsilon(ev, 1e-6)
    assert ref - H <= tightest_epsilon(log, delta=1e-6)[1] and eps <= ref + (2 + 45) * PLD().interval(releases(log))


def test_factorized_groups_are_refused_with_one_line():
    log = MechanismLog.load(EX / "gaussian-factorized.json")
    with pytest.raises(PrivacctError) as e:
        dp_event_from_log(log)
    text = one_line(e)
    assert "release group 'sum of phi*y': a factorized counter (sqrt-toeplitz) has no DpEvent" in text
    assert "supported structures: single, repeated, tree, adaptive" in text


def test_log_to_event_refuses_what_is_not_a_log_and_unrepresentable_ratios():
    with pytest.raises(PrivacctError, match="log must be a privacct.log.MechanismLog, got dict"):
        dp_event_from_log({"release_groups": []})
    g = ReleaseGroup("tiny", "gaussian", 1e-300, Sensitivity("l2", 1e300), Structure.single())
    with pytest.raises(PrivacctError) as e:
        dp_event_from_log(MechanismLog("x", "joint", (g,)))
    assert "release group 'tiny': noise_scale / sensitivity" in one_line(e)


# ---- the agreement property ---------------------------------------------------------------------
LEAVES = st.one_of(
    st.builds(G, st.sampled_from([2.0, 3.0]) | st.floats(2.0, 8.0)),
    st.builds(L, st.sampled_from([4.0, 10.0]) | st.floats(3.0, 30.0)),
    st.just(dpa.NoOpDpEvent()),
)
EVENTS = st.recursive(LEAVES, lambda children: st.one_of(
    st.builds(lambda es: dpa.ComposedDpEvent(list(es)), st.lists(children, min_size=1, max_size=3)),
    st.builds(dpa.SelfComposedDpEvent, children, st.integers(1, 3))), max_leaves=4)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])
@given(event=EVENTS, sensitivity=st.floats(0.05, 20.0), model=st.sampled_from(["joint", "local"]),
       neighbouring=st.sampled_from([None, "replace-one-user"]), delta=st.sampled_from([1e-3, 1e-5, 1e-7]))
def test_converted_logs_account_as_dp_accounting_does(event, sensitivity, model, neighbouring, delta):
    leaves = flat(event)
    assume(leaves)
    mu2 = sum(c / nm**2 for (t, nm), c in leaves.items() if t == "GaussianDpEvent")
    n_lap = sum(c for (t, _), c in leaves.items() if t == "LaplaceDpEvent")
    assume(mu2 <= 4.0 and n_lap <= 40 and max(leaves.values()) <= 27)

    log = log_from_dp_event(event, sensitivity=sensitivity, privacy_model=model, neighbouring=neighbouring)
    assert sorted(g.per_user_count for g in log.release_groups) == sorted(leaves.values())
    ref = dp_epsilon(event, delta)
    tight = tightest_epsilon(log, delta=delta)[1]
    pld = get_accountant("pld").epsilon(log, delta=delta)
    # both are upper bounds; dp_accounting's pessimistic PLD exceeds the exact value by at most its
    # discretisation, so privacct never falls below it by more than that ...
    assert tight >= ref - H - 1e-9 * ref
    # ... and privacct's PLD exceeds it by at most its own grid: one interval of margin, one for the
    # merged Gaussian, one per composed Laplace release (privacct/accounting/pld.py)
    h = PLD().interval(releases(log))
    assert tight <= pld <= ref + (2 + n_lap) * h + 1e-9 * ref

    back = dp_event_from_log(log)
    # the round trip: the same leaves and counts, noise multipliers at most 2 ulps lower ...
    got = flat(back)
    assert sorted(got.values()) == sorted(leaves.values())
    for (t, nm), c in leaves.items():
        match = [k for k, v in got.items() if k[0] == t and v == c and k[1] <= nm and math.isclose(k[1], nm, rel_tol=1e-15)]
        assert match, ((t, nm, c), got)
    # ... and the same accounting in dp_accounting
    assert dp_epsilon(back, delta) == pytest.approx(ref, abs=H)


def test_the_docs_example_runs(capsys):
    text = (ROOT / "docs" / "interop.md").read_text(encoding="utf-8")
    blocks = re.findall(r"```python\n(.*?)```", text, re.S)
    assert len(blocks) == 1
    exec(compile(blocks[0], "docs/interop.md", "exec"), {})
    out = capsys.readouterr().out
    assert "gaussian-1" in out and "laplace-2" in out and "dp_accounting PLD" in out
