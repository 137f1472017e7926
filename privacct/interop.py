"""Interoperability with dp_accounting 0.6.0: its ``DpEvent`` trees to mechanism logs and back
(docs/interop.md).

* :func:`log_from_dp_event` turns a tree of ``GaussianDpEvent``, ``LaplaceDpEvent``,
  ``SelfComposedDpEvent`` and ``ComposedDpEvent`` (nested arbitrarily; ``NoOpDpEvent`` is dropped,
  it costs nothing) into a :class:`~privacct.log.MechanismLog`. Identical leaves (same type, same
  noise multiplier, compared exactly) become one ``repeated(count)`` group whose count is the sum
  over the tree of the product of the enclosing ``SelfComposedDpEvent`` counts; distinct leaves
  become groups named ``gaussian-1``, ``laplace-2``, ... in the order of their first appearance in
  a depth-first, left-to-right walk (docs/interop.md#what-converts).
* :func:`dp_event_from_log` turns a log whose groups are ``single``, ``repeated``, ``tree`` or
  ``adaptive`` into one ``DpEvent`` (docs/interop.md#from-a-log-to-a-dpevent).

The noise-multiplier convention is dp_accounting's (docs/interop.md#the-noise-multiplier):
``noise_multiplier = noise_scale / sensitivity`` (Gaussian: sigma / Delta_2; Laplace: b / Delta_1;
a symmetric Gaussian matrix: sigma / its frobenius-upper sensitivity, i.e. a Gaussian on the upper
triangle, docs/accounting.md#symmetric-gaussian-matrices). Every conversion rounds toward less
noise (a noise scale or noise multiplier is the largest float at or below the exact product or
quotient), so the converted side never accounts to less than the original.

Every other event type is refused with a :class:`~privacct.errors.PrivacctError` naming the type,
where it sits in the tree, and what is supported (docs/interop.md#what-is-refused).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from fractions import Fraction
from typing import Any

from dp_accounting import dp_event as _E

from .errors import MAX_COUNT, PrivacctError, check_count, check_positive, shown
from .log import (MAX_GROUPS, MAX_NAME_CHARS, NEIGHBOURING, NORMS, PRIVACY_MODELS, Claim,
                  MechanismLog, ReleaseGroup, Sensitivity, Structure, check_choice, check_text)

__all__ = ["SUPPORTED_EVENTS", "dp_event_from_log", "log_from_dp_event"]

#: The event types :func:`log_from_dp_event` converts (NoOpDpEvent is dropped: it releases nothing).
SUPPORTED_EVENTS = ("GaussianDpEvent", "LaplaceDpEvent", "SelfComposedDpEvent", "ComposedDpEvent", "NoOpDpEvent")

#: At most this many event nodes are walked (a ComposedDpEvent holding itself is refused, never looped over).
MAX_EVENT_NODES = 100_000

_LEAVES = {_E.GaussianDpEvent: "gaussian", _E.LaplaceDpEvent: "laplace"}

# Why the common unsupported types are refused (docs/interop.md#what-is-refused).
_WHY_NOT = {
    "PoissonSampledDpEvent": "privacct logs have no subsampling: a release group's count holds for every user",
    "SampledWithReplacementDpEvent": "privacct logs have no subsampling: a release group's count holds for every user",
    "SampledWithoutReplacementDpEvent": "privacct logs have no subsampling: a release group's count holds for every user",
    "TruncatedSubsampledGaussianDpEvent": "privacct logs have no subsampling: a release group's count holds for every user",
    "NonPrivateDpEvent": "it is not private: dp_accounting accounts it as infinite epsilon",
    "UnsupportedDpEvent": "it has no privacy description",
    "ZCDpEvent": "it states a zCDP guarantee, not a mechanism with a noise scale",
    "SingleEpochTreeAggregationDpEvent": "its per-user count depends on step_counts as dp_accounting reads them; "
                                         "state the tree as a log group (structure tree) instead",
}


def _supported_list() -> str:
    return ", ".join(SUPPORTED_EVENTS[:-1]) + " (NoOpDpEvent is dropped: it releases nothing)"


def _scale_down(a: float, b: float, *, divide: bool) -> float:
    """The largest float <= a * b (or a / b): the side with less noise, so accounting it never gives
    less than the exact value (docs/interop.md#the-noise-multiplier). a, b > 0 finite."""
    try:
        r = a / b if divide else a * b
    except (OverflowError, ZeroDivisionError):  # pragma: no cover - float division does not raise for finite b > 0
        return math.inf
    if r == 0.0 or math.isinf(r):
        return r
    exact = Fraction(a) / Fraction(b) if divide else Fraction(a) * Fraction(b)
    return math.nextafter(r, 0.0) if Fraction(r) > exact else r


def _event_type_error(event: object, path: str) -> PrivacctError:
    name = type(event).__name__
    if not isinstance(event, _E.DpEvent):
        return PrivacctError(f"{path} must be a dp_accounting DpEvent, got {shown(event)}; supported: {_supported_list()}")
    why = _WHY_NOT.get(name, "privacct has no release group that states it")
    return PrivacctError(f"{path}: event type {name} is not supported ({why}); supported: {_supported_list()}")


def _leaves(event: object) -> list[tuple[str, float, int, str, str]]:
    """(kind, noise multiplier, total count, path of first appearance, event type) per distinct leaf,
    in the order of first appearance in a depth-first, left-to-right walk."""
    order: list[tuple[str, float]] = []
    counts: dict[tuple[str, float], int] = {}
    first: dict[tuple[str, float], tuple[str, str]] = {}
    stack: list[tuple[object, int, str]] = [(event, 1, "event")]
    visited = 0
    while stack:
        node, mult, path = stack.pop()
        visited += 1
        if visited > MAX_EVENT_NODES:
            raise PrivacctError(f"event must be a tree of at most {MAX_EVENT_NODES} events "
                                "(this one is larger, or a ComposedDpEvent holds itself)")
        cls = type(node)
        if cls in _LEAVES:
            nm = check_positive(f"{path}.noise_multiplier", getattr(node, "noise_multiplier", None))
            key = (_LEAVES[cls], nm)
            if key not in counts:
                order.append(key)
                counts[key] = 0
                first[key] = (path, cls.__name__)
            counts[key] += mult
            if counts[key] > MAX_COUNT:
                raise PrivacctError(f"{path}: {cls.__name__}(noise_multiplier={nm!r}) is composed more than "
                                    f"{MAX_COUNT} times in total (a release count must be an integer in [1, {MAX_COUNT}])")
        elif cls is _E.SelfComposedDpEvent:
            count = check_count(f"{path}.count", node.count)
            total = mult * count
            if total > MAX_COUNT:
                raise PrivacctError(f"{path}.count: the nested counts multiply to more than {MAX_COUNT} "
                                    f"(a release count must be an integer in [1, {MAX_COUNT}])")
            stack.append((node.event, total, f"{path}.event"))
        elif cls is _E.ComposedDpEvent:
            events = node.events
            if isinstance(events, (str, bytes, Mapping)) or not isinstance(events, Sequence):
                raise PrivacctError(f"{path}.events must be a list of DpEvents, got {shown(events)}")
            # reversed: the stack pops the first event first (names follow the order of the list)
            for i in range(len(events) - 1, -1, -1):
                stack.append((events[i], mult, f"{path}.events[{i}]"))
        elif cls is _E.NoOpDpEvent:
            continue
        else:
            raise _event_type_error(node, path)
    return [(kind, nm, counts[(kind, nm)], *first[(kind, nm)]) for kind, nm in order]


def _claim(claim: object) -> Claim | None:
    if claim is None or isinstance(claim, Claim):
        return claim
    if isinstance(claim, (tuple, list)) and len(claim) == 2:
        return Claim(*claim)
    raise PrivacctError(f"claim must be None, a privacct.log.Claim or a pair (epsilon > 0, delta in [0, 1)), got {shown(claim)}")


def _sensitivities(sensitivity: object, norm: str | None) -> dict[str, float]:
    """{norm: value}: a number holds in every leaf's own norm (l1 and l2), or in ``norm`` alone;
    a mapping gives one value per norm."""
    if isinstance(sensitivity, Mapping):
        if norm is not None:
            raise PrivacctError("norm must be None when sensitivity is a mapping (its keys are the norms)")
        if not sensitivity or not all(isinstance(k, str) and k in NORMS for k in sensitivity):
            raise PrivacctError(f"sensitivity as a mapping must have keys among {', '.join(NORMS)} "
                                f"(l1 for Laplace leaves, l2 or frobenius-upper for Gaussian ones), got keys "
                                f"{', '.join(shown(k) for k in list(sensitivity)[:5]) or 'none'}")
        if "l2" in sensitivity and "frobenius-upper" in sensitivity:
            raise PrivacctError("sensitivity may give l2 or frobenius-upper for the Gaussian leaves, not both")
        return {k: check_positive(f"sensitivity[{k!r}]", v) for k, v in sensitivity.items()}
    value = check_positive("sensitivity", sensitivity)
    if norm is None:
        return {"l1": value, "l2": value}
    return {norm: value}


def _leaf_norm(kind: str, sens: Mapping[str, float]) -> str | None:
    """The norm a leaf's sensitivity is read in: l1 for Laplace; frobenius-upper (a symmetric
    Gaussian matrix) or l2 for Gaussian; None when ``sens`` has none of them."""
    for n in (("l1",) if kind == "laplace" else ("frobenius-upper", "l2")):
        if n in sens:
            return n
    return None


def log_from_dp_event(event: Any, *, sensitivity: float | Mapping[str, float], privacy_model: str,
                      name: str = "from-dp-event", claim: Claim | tuple[float, float] | None = None,
                      neighbouring: str | None = None, norm: str | None = None) -> MechanismLog:
    """The mechanism log of a dp_accounting event tree (docs/interop.md#from-a-dpevent-to-a-log).

    ``sensitivity`` is the sensitivity dp_accounting's noise multipliers are relative to, the whole
    difference one user makes under ``neighbouring``: a number > 0 (in each leaf's norm: l1 for
    Laplace, l2 for Gaussian, or in ``norm``), or a mapping ``{"l1": ..., "l2": ...}`` for an event
    mixing Laplace and Gaussian leaves of different sensitivities. Each leaf's noise scale is
    ``noise_multiplier * sensitivity`` (rounded down). ``privacy_model`` is ``joint`` or ``local``
    (the event does not say); ``neighbouring`` defaults to ``add-remove``, the relation of
    dp_accounting's default accountants; ``norm`` is ``l1`` (Laplace leaves only), ``l2`` or
    ``frobenius-upper`` (Gaussian leaves only; ``frobenius-upper`` makes them symmetric Gaussian
    matrices); None uses each leaf's own norm. ``claim`` is None, a Claim or (epsilon, delta).
    """
    check_choice("privacy_model", privacy_model, PRIVACY_MODELS)
    check_text("name", name, max_chars=MAX_NAME_CHARS, min_chars=1)
    neighbouring = "add-remove" if neighbouring is None else check_choice("neighbouring", neighbouring, NEIGHBOURING)
    if norm is not None:
        check_choice("norm", norm, NORMS)
    sens = _sensitivities(sensitivity, norm)
    claim = _claim(claim)
    leaves = _leaves(event)
    if not leaves:
        raise PrivacctError(f"event releases nothing (no GaussianDpEvent or LaplaceDpEvent in the tree); "
                            f"supported: {_supported_list()}")
    if len(leaves) > MAX_GROUPS:
        raise PrivacctError(f"event has {len(leaves)} distinct leaves; a log holds at most {MAX_GROUPS} release groups")
    groups = []
    for i, (kind, nm, count, path, type_name) in enumerate(leaves, 1):
        leaf_norm = _leaf_norm(kind, sens)
        if leaf_norm is None:
            needed = "l1" if kind == "laplace" else "l2 (or frobenius-upper)"
            raise PrivacctError(f"{path}: {type_name} needs an {needed} sensitivity, but sensitivity is given in "
                                f"{', '.join(sens)} only (see the arguments norm and sensitivity)")
        mechanism = "symmetric-gaussian-matrix" if leaf_norm == "frobenius-upper" else kind
        value = sens[leaf_norm]
        scale = _scale_down(nm, value, divide=False)
        if not 0.0 < scale < math.inf:
            raise PrivacctError(f"{path}: noise_multiplier {nm!r} x sensitivity {value!r} is beyond the floating-point "
                                "range (a noise scale must be a finite number > 0)")
        structure = Structure.single() if count == 1 else Structure.repeated(count)
        groups.append(ReleaseGroup(
            f"{kind}-{i}", mechanism, scale,
            Sensitivity(leaf_norm, value, "stated with the dp_accounting event: the sensitivity its noise multiplier "
                                          f"is relative to, under {neighbouring} (docs/interop.md#the-noise-multiplier)"),
            structure,
            description=f"dp_accounting {type_name}(noise_multiplier={nm!r}), {count} per user in all, first at {path}"))
    return MechanismLog(name, privacy_model, tuple(groups), neighbouring=neighbouring, claim=claim,
                        source="converted from a dp_accounting DpEvent by privacct.interop.log_from_dp_event")


def dp_event_from_log(log: MechanismLog) -> _E.DpEvent:
    """One dp_accounting event for a log's declared groups (docs/interop.md#from-a-log-to-a-dpevent).

    Each group becomes its leaf (``GaussianDpEvent`` for gaussian and symmetric-gaussian-matrix
    groups, ``LaplaceDpEvent`` for laplace ones) with ``noise_multiplier = noise_scale /
    sensitivity`` (rounded down), self-composed over the group's per-user count: 1 (``single``),
    ``count`` (``repeated``), the derived tree depth floor(log2 K) + 1 (``tree``, privacct.log.tree_depth)
    or ``max_count`` (``adaptive``: privacct accounts it exactly as repeated(max_count),
    docs/accounting.md#the-per-user-view). Several groups compose in a ``ComposedDpEvent`` in the
    log's order. ``factorized`` groups are refused. Account the event with dp_accounting's
    ADD_OR_REMOVE_ONE relation: the log's sensitivities are already the whole difference under its
    relation (docs/accounting.md#neighbouring-relations). Readings and the claim are not carried.
    """
    if not isinstance(log, MechanismLog):
        raise PrivacctError(f"log must be a privacct.log.MechanismLog, got {type(log).__name__}")
    events = []
    for g in log.release_groups:
        where = f"release group {shown(g.name)}"
        if g.structure.kind == "factorized":
            raise PrivacctError(f"{where}: a factorized counter ({g.structure.strategy}) has no DpEvent: privacct accounts it "
                                "by its strategy's column norm or tree depth (docs/counters.md#accounting), which no "
                                "dp_accounting event states; supported structures: single, repeated, tree, adaptive")
        nm = _scale_down(g.noise_scale, g.sensitivity.value, divide=True)
        if not 0.0 < nm < math.inf:
            raise PrivacctError(f"{where}: noise_scale / sensitivity = {g.noise_scale!r} / {g.sensitivity.value!r} is beyond "
                                "the floating-point range (a noise multiplier must be a finite number > 0)")
        leaf = _E.LaplaceDpEvent(nm) if g.mechanism == "laplace" else _E.GaussianDpEvent(nm)
        count = g.per_user_count
        events.append(leaf if count == 1 else _E.SelfComposedDpEvent(leaf, count))
    return events[0] if len(events) == 1 else _E.ComposedDpEvent(events)
