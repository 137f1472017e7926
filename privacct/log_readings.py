"""Named readings of an ambiguous paper setting, carried by a :class:`privacct.log.MechanismLog`
(its optional ``readings`` field; docs/accounting.md#readings).

A :class:`Reading` overrides the noise scale, sensitivity, structure or paper statement of some
release groups (:class:`GroupOverride`); :meth:`privacct.log.MechanismLog.under_reading` gives the
log under one reading. Parsing is as strict as the rest of the log (privacct/log.py): unknown keys,
overrides of groups the log does not have, two overrides of one group, duplicate names and an
override that changes nothing are refused with the field named.

This module builds on the release groups (privacct/log_groups.py), not on the log: privacct/log.py imports it,
never the other way round.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from .errors import PrivacctError, check_positive, shown
from .log_groups import (MAX_GROUPS, MAX_NAME_CHARS, NORMS, PaperStatement, ReleaseGroup, Sensitivity, Structure, _object,
                         check_choice, check_text, paper_statement_from_dict)

#: Readings one log may carry.
MAX_READINGS = 64


@dataclass(frozen=True)
class GroupOverride:
    """What one reading changes in one release group: any of ``noise_scale``, ``sensitivity``,
    ``structure`` and ``paper`` (the printed statement under this reading); the rest is the
    declared group's."""

    group: str
    noise_scale: float | None = None
    sensitivity: Sensitivity | None = None
    structure: Structure | None = None
    paper: PaperStatement | None = None

    def __post_init__(self) -> None:
        check_text("readings[].overrides[].group", self.group, max_chars=MAX_NAME_CHARS, min_chars=1)
        if self.noise_scale is not None:
            object.__setattr__(self, "noise_scale", check_positive("readings[].overrides[].noise_scale", self.noise_scale))
        for name, cls in (("sensitivity", Sensitivity), ("structure", Structure), ("paper", PaperStatement)):
            value = getattr(self, name)
            if value is not None and not isinstance(value, cls):
                raise PrivacctError(f"readings[].overrides[].{name} must be a {cls.__name__} or None")
        if self.noise_scale is None and self.sensitivity is None and self.structure is None and self.paper is None:
            raise PrivacctError(f"readings[].overrides[] of group {shown(self.group)} changes nothing "
                                "(give noise_scale, sensitivity, structure or paper)")

    def apply(self, g: ReleaseGroup) -> ReleaseGroup:
        return ReleaseGroup(g.name, g.mechanism, g.noise_scale if self.noise_scale is None else self.noise_scale,
                            self.sensitivity or g.sensitivity, self.structure or g.structure, g.dimension,
                            g.description, self.paper or g.paper)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"group": self.group}
        if self.noise_scale is not None:
            d["noise_scale"] = self.noise_scale
        for name in ("sensitivity", "structure", "paper"):
            if getattr(self, name) is not None:
                d[name] = getattr(self, name).to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str) -> "GroupOverride":
        d = _object(d, where, {"group", "noise_scale", "sensitivity", "structure", "paper"}, required=("group",))
        group = check_text(f"{where}.group", d["group"], max_chars=MAX_NAME_CHARS, min_chars=1)
        scale = None if "noise_scale" not in d else check_positive(f"{where}.noise_scale", d["noise_scale"])
        sens = None
        if "sensitivity" in d:
            s = _object(d["sensitivity"], f"{where}.sensitivity", {"norm", "value", "derivation"}, required=("norm", "value"))
            sens = Sensitivity(check_choice(f"{where}.sensitivity.norm", s["norm"], NORMS),
                               check_positive(f"{where}.sensitivity.value", s["value"]),
                               check_text(f"{where}.sensitivity.derivation", s.get("derivation", "")))
        structure = None if "structure" not in d else Structure.from_dict(d["structure"], f"{where}.structure")
        paper = None if "paper" not in d else paper_statement_from_dict(d["paper"], f"{where}.paper")
        try:
            return cls(group, scale, sens, structure, paper)
        except PrivacctError as e:
            raise PrivacctError(str(e).replace("readings[].overrides[]", where, 1)) from None


@dataclass(frozen=True)
class Reading:
    """One reading of an ambiguous paper setting (docs/accounting.md, "Readings").

    ``name``: short and unique within the log (e.g. "A", "ln K, 6H - 3"); ``description``: what is
    read how, and what it is consistent with; ``supported_by``: non-empty exactly when the paper's
    own privacy proof supports this reading, and then the equations and why; ``overrides``: what
    changes, at most one per group (none: the log as declared is this reading).
    """

    name: str
    description: str = ""
    supported_by: str = ""
    overrides: tuple[GroupOverride, ...] = ()

    def __post_init__(self) -> None:
        check_text("readings[].name", self.name, max_chars=MAX_NAME_CHARS, min_chars=1)
        check_text("readings[].description", self.description)
        check_text("readings[].supported_by", self.supported_by)
        if isinstance(self.overrides, (str, bytes, Mapping)):
            raise PrivacctError("readings[].overrides must be a sequence of GroupOverride")
        overrides = tuple(self.overrides)
        if len(overrides) > MAX_GROUPS:
            raise PrivacctError(f"readings[].overrides must hold at most {MAX_GROUPS} overrides, got {len(overrides)}")
        if not all(isinstance(o, GroupOverride) for o in overrides):
            raise PrivacctError("readings[].overrides must hold GroupOverride objects")
        names = [o.group for o in overrides]
        if len(set(names)) != len(names):
            raise PrivacctError(f"reading {shown(self.name)}: at most one override per group")
        object.__setattr__(self, "overrides", overrides)

    def apply(self, groups: tuple[ReleaseGroup, ...]) -> tuple[ReleaseGroup, ...]:
        by_group = {o.group: o for o in self.overrides}
        return tuple(by_group[g.name].apply(g) if g.name in by_group else g for g in groups)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"name": self.name}
        if self.description:
            d["description"] = self.description
        if self.supported_by:
            d["supported_by"] = self.supported_by
        d["overrides"] = [o.to_dict() for o in self.overrides]
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str) -> "Reading":
        d = _object(d, where, {"name", "description", "supported_by", "overrides"}, required=("name",))
        name = check_text(f"{where}.name", d["name"], max_chars=MAX_NAME_CHARS, min_chars=1)
        overrides = d.get("overrides", [])
        if not isinstance(overrides, list) or len(overrides) > MAX_GROUPS:
            raise PrivacctError(f"{where}.overrides must be a list of at most {MAX_GROUPS} overrides, got {shown(overrides)}")
        return cls(name, check_text(f"{where}.description", d.get("description", "")),
                   check_text(f"{where}.supported_by", d.get("supported_by", "")),
                   tuple(GroupOverride.from_dict(o, f"{where}.overrides[{j}]") for j, o in enumerate(overrides)))


def _check_readings(readings: Any, groups: tuple[ReleaseGroup, ...]) -> tuple[Reading, ...]:
    """The readings as a tuple, checked against the log's groups: unique names, overrides of
    existing groups only, and every overridden group valid (e.g. the norm suits the mechanism)."""
    if isinstance(readings, (str, bytes, Mapping)):
        raise PrivacctError("readings must be a sequence of readings")
    out = tuple(readings)
    if len(out) > MAX_READINGS:
        raise PrivacctError(f"readings must hold at most {MAX_READINGS} readings, got {len(out)}")
    if not all(isinstance(r, Reading) for r in out):
        raise PrivacctError("readings must hold Reading objects")
    names = [r.name for r in out]
    if len(set(names)) != len(names):
        raise PrivacctError("readings[].name must be unique within a log")
    by_name = {g.name: g for g in groups}
    for i, r in enumerate(out):
        for j, o in enumerate(r.overrides):
            where = f"readings[{i}].overrides[{j}]"
            if o.group not in by_name:
                raise PrivacctError(f"{where}.group must name a release group of the log, got {shown(o.group)}")
            try:
                o.apply(by_name[o.group])
            except PrivacctError as e:
                raise PrivacctError(f"{where}: {e}") from None
    return out


def _readings_from(readings: Any) -> tuple[Reading, ...]:
    if not isinstance(readings, list):
        raise PrivacctError(f"readings must be a list of readings, got {shown(readings)}")
    if len(readings) > MAX_READINGS:
        raise PrivacctError(f"readings must hold at most {MAX_READINGS} readings, got {len(readings)}")
    return tuple(Reading.from_dict(r, f"readings[{i}]") for i, r in enumerate(readings))


__all__ = ["GroupOverride", "MAX_READINGS", "Reading"]
