"""Paper settings with provenance: the typed record of ``LearnerSpec.paper_settings``.

A :class:`PaperSetting` is one configuration at which ``privacct report`` checks a learner's privacy
claim. Every number on it says where it comes from (:class:`Provenance`):

* ``printed`` -- the paper prints it; the note gives the equation or section;
* ``choice`` -- privacct chose it, and the note says why (the paper prints none, prints a range,
  or its experiments leave it open);
* ``derived`` -- computed from other settings by a printed rule; the note gives the rule.

The fields that need a provenance are :data:`PROVENANCE_FIELDS` (``constants`` covers
``bonus_scale`` and ``options``). A report calls (eps, delta) "claimed" only when both are printed
(:attr:`PaperSetting.claim_printed`); otherwise it is "the toolkit's setting". ``repairs`` name
every change to the printed algorithm that the privacy figures rely on (e.g. the lower clip
Q >= 0 of seeds 001, 003 and 004, without which the sensitivity is not surely bounded), and
``baseline`` the non-private learner run at the same K and constants (None: this learner with
``privacy="none"``).

Untyped settings (plain dicts, as new learners may still declare them) are read by
:func:`as_paper_setting` with every provenance ``choice`` ("not recorded"): nothing is called
printed without a citation.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any, Mapping

from privacct.errors import PrivacctError

from .contract import ConfigFields, RunConfig

PRINTED, CHOICE, DERIVED = "printed", "choice", "derived"
PROVENANCE_KINDS = (PRINTED, CHOICE, DERIVED)
#: Every field of a setting whose provenance must be stated.
PROVENANCE_FIELDS = ("epsilon", "delta", "episodes", "env", "horizon", "constants")
_LABELS = {PRINTED: "printed", CHOICE: "toolkit's choice", DERIVED: "derived"}


@dataclass(frozen=True)
class Provenance:
    """Where one setting comes from: ``kind`` in :data:`PROVENANCE_KINDS`, ``note`` the equation or
    section (printed), the reason (choice) or the rule (derived); never empty."""

    kind: str
    note: str

    def __post_init__(self) -> None:
        if self.kind not in PROVENANCE_KINDS:
            raise PrivacctError(f"provenance.kind must be one of {', '.join(PROVENANCE_KINDS)}, got {self.kind!r}")
        if not isinstance(self.note, str) or not self.note.strip():
            raise PrivacctError("provenance.note must say where the value comes from (a non-empty string)")

    @property
    def label(self) -> str:
        return _LABELS[self.kind]

    def to_dict(self) -> dict[str, str]:
        return {"kind": self.kind, "label": self.label, "note": self.note}


def printed(note: str) -> Provenance:
    return Provenance(PRINTED, note)


def choice(note: str) -> Provenance:
    return Provenance(CHOICE, note)


def derived(note: str) -> Provenance:
    return Provenance(DERIVED, note)


@dataclass(frozen=True)
class Repair:
    """A change to the printed algorithm that the privacy figures rely on, and why it is needed."""

    name: str
    why: str

    def to_dict(self) -> dict[str, str]:
        return {"name": self.name, "why": self.why}


#: The algorithm of a setting declared without one (the loose form, before a LearnerSpec binds it to its learner).
UNBOUND = "(unbound paper setting)"


@dataclass(frozen=True, init=False)
class PaperSetting(ConfigFields):
    """One setting at which a paper's claim is checked (module docstring): ``config``, the learner's
    :class:`~privacct.algorithms.contract.RunConfig` at that setting with the printed constants (calibration
    ``paper``), plus ``provenance`` (one entry per :data:`PROVENANCE_FIELDS`), ``repairs``, ``baseline`` and
    ``baseline_note``. The configuration's fields read as the setting's own (``setting.epsilon``).

    Made from a RunConfig, ``PaperSetting(config, provenance, repairs=..., baseline=..., baseline_note=...)``, or in
    the loose form a family declares before its learners exist, ``PaperSetting(privacy, epsilon, delta, episodes,
    provenance, env=, horizon=, bonus_scale=, options=, repairs=, baseline=, baseline_note=)``: the same RunConfig,
    its algorithm set when a :class:`~privacct.algorithms.contract.LearnerSpec` takes the setting (:meth:`bound`)."""

    config: RunConfig
    provenance: tuple[tuple[str, Provenance], ...]
    repairs: tuple[Repair, ...] = ()
    baseline: str | None = None
    baseline_note: str = ""

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        first = args[0] if args else kwargs.get("config")
        config, provenance, repairs, baseline, baseline_note = (
            _record_form if isinstance(first, RunConfig) else _loose_form)(*args, **kwargs)
        if config.privacy not in ("jdp", "ldp"):
            raise PrivacctError(f"paper setting privacy must be jdp or ldp, got {config.privacy!r}")
        prov = dict(provenance.items() if isinstance(provenance, Mapping) else provenance)
        missing = [f for f in PROVENANCE_FIELDS if f not in prov]
        unknown = sorted(set(prov) - set(PROVENANCE_FIELDS))
        if missing or unknown:
            raise PrivacctError(f"paper setting provenance must name exactly {', '.join(PROVENANCE_FIELDS)}; "
                                f"missing {missing}, unknown {unknown}")
        if not all(isinstance(v, Provenance) for v in prov.values()):
            raise PrivacctError("paper setting provenance values must be Provenance records")
        for name, value in (("config", config), ("provenance", tuple((f, prov[f]) for f in PROVENANCE_FIELDS)),
                            ("repairs", tuple(repairs)), ("baseline", baseline), ("baseline_note", baseline_note)):
            object.__setattr__(self, name, value)

    def bound(self, algorithm: str) -> "PaperSetting":
        """This setting as ``algorithm``'s (its config's algorithm set; the setting itself when it already is)."""
        if self.config.algorithm == algorithm:
            return self
        return replace(self, config=replace(self.config, algorithm=algorithm))

    def provenance_of(self, name: str) -> Provenance:
        return dict(self.provenance)[name]

    @property
    def claim_printed(self) -> bool:
        """True when the paper prints both eps and delta of this setting (then it is a *claim*)."""
        return all(self.provenance_of(f).kind == PRINTED for f in ("epsilon", "delta"))

    def run_config(self, algorithm: str | None = None, *, calibration: str = "paper") -> RunConfig:
        """The setting's RunConfig for ``algorithm`` (default: the learner it is bound to) under ``calibration``: the
        record itself where nothing changes, so a caller passing it on shares its declared log."""
        config = self.bound(algorithm).config if algorithm is not None else self.config
        return config if config.calibration == calibration else replace(config, calibration=calibration)

    def to_dict(self) -> dict[str, Any]:
        setting = {k: v for k, v in self.config.to_dict().items() if k not in ("algorithm", "calibration")}
        return {**setting, "provenance": {k: v.to_dict() for k, v in self.provenance},
                "claim_printed": self.claim_printed, "repairs": [r.to_dict() for r in self.repairs],
                "baseline": self.baseline, "baseline_note": self.baseline_note}


def _record_form(config: RunConfig, provenance: Any, repairs: tuple[Repair, ...] = (), baseline: str | None = None,
                 baseline_note: str = "") -> tuple:
    return config, provenance, repairs, baseline, baseline_note


def _loose_form(privacy: str, epsilon: float, delta: float, episodes: int, provenance: Any, env: str | None = None,
                horizon: int | None = None, bonus_scale: float = 1.0, options=(), repairs: tuple[Repair, ...] = (),
                baseline: str | None = None, baseline_note: str = "") -> tuple:
    """A setting declared in the loose form (:class:`PaperSetting`): its RunConfig is made here, validated once
    (a refusal said as the paper setting's), for the learner the setting is later bound to."""
    try:
        config = RunConfig(UNBOUND, privacy=privacy, epsilon=epsilon, delta=delta, episodes=episodes, env=env,
                           horizon=horizon, bonus_scale=bonus_scale, options=tuple(tuple(o) for o in options))
    except PrivacctError as e:
        raise PrivacctError(f"paper setting {e}") from None
    return config, provenance, repairs, baseline, baseline_note


_NOT_RECORDED = "not recorded: the learner declares this setting as an untyped dict without provenance"


def as_paper_setting(s: PaperSetting | Mapping[str, Any], algorithm: str | None = None) -> PaperSetting:
    """``s`` itself, or an untyped dict read with every provenance ``choice`` ("not recorded"); with ``algorithm``,
    bound to that learner (:meth:`PaperSetting.bound`)."""
    if isinstance(s, PaperSetting):
        return s if algorithm is None else s.bound(algorithm)
    if not isinstance(s, Mapping):
        raise PrivacctError(f"a paper setting must be a PaperSetting or a dict, got {type(s).__name__}")
    d = dict(s)
    unknown = sorted(set(d) - {"privacy", "epsilon", "delta", "episodes", "env", "horizon", "bonus_scale", "options"})
    if unknown:
        raise PrivacctError(f"paper setting has unknown key(s) {', '.join(unknown)}")
    setting = PaperSetting(d["privacy"], d.get("epsilon", 1.0), d.get("delta", 0.0), d.get("episodes", 1000),
                           tuple((f, choice(_NOT_RECORDED)) for f in PROVENANCE_FIELDS), env=d.get("env"),
                           horizon=d.get("horizon"), bonus_scale=d.get("bonus_scale", 1.0),
                           options=tuple(tuple(o) for o in (d.get("options") or ())))
    return setting if algorithm is None else setting.bound(algorithm)


def paper_setting(spec, privacy: str) -> PaperSetting | None:
    """The learner's first paper setting under ``privacy`` (bound to it; an untyped dict read by
    :func:`as_paper_setting`), or None when it declares none: the setting whose delta is the claim's default
    (:func:`privacct.algorithms.defaults.default_delta`) and whose K, H, environment and constants a one-run audit
    runs by default (:func:`privacct.audits.one_run_learner.one_run_config`). The one place that rule lives."""
    for s in spec.paper_settings:
        s = as_paper_setting(s, spec.name)
        if s.privacy == privacy:
            return s
    return None


def paper_delta(spec, privacy: str) -> float | None:
    """The delta of the learner's first paper setting with this privacy model (:func:`paper_setting`; None if none)."""
    s = paper_setting(spec, privacy)
    return None if s is None else s.delta


__all__ = ["CHOICE", "DERIVED", "PRINTED", "PROVENANCE_FIELDS", "PROVENANCE_KINDS", "PaperSetting", "Provenance", "Repair",
           "UNBOUND",
           "as_paper_setting", "choice", "derived", "paper_delta", "paper_setting", "printed"]
