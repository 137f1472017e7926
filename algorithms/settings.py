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

from dataclasses import dataclass
from typing import Any, Mapping

from privacct.errors import PrivacctError, check_count, check_delta, check_positive

from .base import RunConfig

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


@dataclass(frozen=True)
class PaperSetting:
    """One setting at which a paper's claim is checked (module docstring). The RunConfig fields
    (privacy, epsilon, delta, episodes, env, horizon, bonus_scale, options) plus ``provenance``
    (one entry per :data:`PROVENANCE_FIELDS`), ``repairs`` and ``baseline``."""

    privacy: str
    epsilon: float
    delta: float
    episodes: int
    provenance: tuple[tuple[str, Provenance], ...]
    env: str | None = None
    horizon: int | None = None
    bonus_scale: float = 1.0
    options: tuple[tuple[str, Any], ...] = ()
    repairs: tuple[Repair, ...] = ()
    baseline: str | None = None
    baseline_note: str = ""

    def __post_init__(self) -> None:
        if self.privacy not in ("jdp", "ldp"):
            raise PrivacctError(f"paper setting privacy must be jdp or ldp, got {self.privacy!r}")
        object.__setattr__(self, "epsilon", check_positive("paper setting epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_delta("paper setting delta", self.delta, allow_zero=True))
        object.__setattr__(self, "episodes", check_count("paper setting episodes", self.episodes))
        prov = dict(self.provenance.items() if isinstance(self.provenance, Mapping) else self.provenance)
        missing = [f for f in PROVENANCE_FIELDS if f not in prov]
        unknown = sorted(set(prov) - set(PROVENANCE_FIELDS))
        if missing or unknown:
            raise PrivacctError(f"paper setting provenance must name exactly {', '.join(PROVENANCE_FIELDS)}; "
                                f"missing {missing}, unknown {unknown}")
        if not all(isinstance(v, Provenance) for v in prov.values()):
            raise PrivacctError("paper setting provenance values must be Provenance records")
        object.__setattr__(self, "provenance", tuple((f, prov[f]) for f in PROVENANCE_FIELDS))
        object.__setattr__(self, "options", tuple(tuple(o) for o in self.options))
        object.__setattr__(self, "repairs", tuple(self.repairs))

    def provenance_of(self, name: str) -> Provenance:
        return dict(self.provenance)[name]

    @property
    def claim_printed(self) -> bool:
        """True when the paper prints both eps and delta of this setting (then it is a *claim*)."""
        return all(self.provenance_of(f).kind == PRINTED for f in ("epsilon", "delta"))

    def run_config(self, algorithm: str, *, calibration: str = "paper") -> RunConfig:
        return RunConfig(algorithm=algorithm, privacy=self.privacy, epsilon=self.epsilon, delta=self.delta,
                         calibration=calibration, episodes=self.episodes, env=self.env, horizon=self.horizon,
                         bonus_scale=self.bonus_scale, options=self.options)

    def to_dict(self) -> dict[str, Any]:
        return {"privacy": self.privacy, "epsilon": self.epsilon, "delta": self.delta, "episodes": self.episodes,
                "env": self.env, "horizon": self.horizon, "bonus_scale": self.bonus_scale,
                "options": {k: v for k, v in self.options},
                "provenance": {k: v.to_dict() for k, v in self.provenance},
                "claim_printed": self.claim_printed, "repairs": [r.to_dict() for r in self.repairs],
                "baseline": self.baseline, "baseline_note": self.baseline_note}


_NOT_RECORDED = "not recorded: the learner declares this setting as an untyped dict without provenance"


def as_paper_setting(s: PaperSetting | Mapping[str, Any]) -> PaperSetting:
    """``s`` itself, or an untyped dict read with every provenance ``choice`` ("not recorded")."""
    if isinstance(s, PaperSetting):
        return s
    if not isinstance(s, Mapping):
        raise PrivacctError(f"a paper setting must be a PaperSetting or a dict, got {type(s).__name__}")
    d = dict(s)
    unknown = sorted(set(d) - {"privacy", "epsilon", "delta", "episodes", "env", "horizon", "bonus_scale", "options"})
    if unknown:
        raise PrivacctError(f"paper setting has unknown key(s) {', '.join(unknown)}")
    return PaperSetting(d["privacy"], d.get("epsilon", 1.0), d.get("delta", 0.0), d.get("episodes", 1000),
                        tuple((f, choice(_NOT_RECORDED)) for f in PROVENANCE_FIELDS), env=d.get("env"),
                        horizon=d.get("horizon"), bonus_scale=d.get("bonus_scale", 1.0),
                        options=tuple(tuple(o) for o in (d.get("options") or ())))


def paper_delta(spec, privacy: str) -> float | None:
    """The delta of the learner's first paper setting with this privacy model (None if none)."""
    for s in spec.paper_settings:
        s = as_paper_setting(s)
        if s.privacy == privacy:
            return s.delta
    return None


__all__ = ["CHOICE", "DERIVED", "PRINTED", "PROVENANCE_FIELDS", "PROVENANCE_KINDS", "PaperSetting", "Provenance", "Repair",
           "as_paper_setting", "choice", "derived", "paper_delta", "printed"]
