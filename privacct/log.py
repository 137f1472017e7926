"""Mechanism logs: the declarative, versioned JSON description of every noisy release.

A :class:`MechanismLog` is one document per algorithm configuration (DESIGN.md, "MechanismLog").
It names the privacy model (``joint`` = central/JDP, ``local`` = LDP), the neighbouring relation
(``replace-one-user`` by default, ``add-remove`` allowed), the algorithm's parameters, an optional
claim (epsilon, delta) and a list of :class:`ReleaseGroup`.

Semantics of a release group (what the accountants assume):

* ``sensitivity.value`` is the *joint* sensitivity, under the log's neighbouring relation, of
  everything one user changes in **one** release of the group (all coordinates together), in the
  stated norm: ``l1`` for Laplace, ``l2`` for Gaussian, ``frobenius-upper`` (the l2 norm of the
  upper-triangle vectorisation, diagonal included) for symmetric Gaussian matrix noise.
* ``noise_scale`` is the Laplace scale b or the Gaussian standard deviation sigma, per coordinate.
* ``structure`` says how many releases of the group contain one user's data; the accountant
  derives that count (:meth:`Structure.per_user_count`), it is never typed in for trees:
  ``single`` (1), ``repeated(count)``, ``tree(leaves=K)`` (binary counter, floor(log2 K) + 1
  nodes per user) and ``adaptive(max_count)`` (low-switching: a hard cap that holds surely).
* ``dimension`` (optional) is the number of independent noise values in one release (for a
  symmetric d x d matrix, d(d+1)/2); the ledger check compares every draw against it.
* ``paper`` optionally records what the paper printed (its sensitivity, its per-user count, and
  the equation), so that a report can say *why* a printed setting misses its claim.

Releases of different groups, and the per-user releases within a group, compose adaptively.
"""

from __future__ import annotations

import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .errors import PrivacctError, check_count, check_delta, check_positive

SCHEMA_VERSION = 1

PRIVACY_MODELS = ("joint", "local")
NEIGHBOURING = ("replace-one-user", "add-remove")
MECHANISMS = ("laplace", "gaussian", "symmetric-gaussian-matrix")
NORMS = ("l1", "l2", "frobenius-upper")
# Which sensitivity norm each mechanism's privacy analysis needs.
MECHANISM_NORMS = {
    "laplace": ("l1",),
    "gaussian": ("l2",),
    "symmetric-gaussian-matrix": ("frobenius-upper", "l2"),
}
STRUCTURE_KINDS = ("single", "repeated", "tree", "adaptive")


def tree_depth(leaves: int) -> int:
    """Nodes of a K-leaf binary counter that contain one leaf: floor(log2 K) + 1.

    Chan, Shi, Song (2011), binary mechanism; Kairouz et al. (2021, arXiv 2103.00039, App. D)
    give the same depth D = floor(log2 K) + 1 = ceil(log2(K + 1)) for the online tree in which only
    complete dyadic intervals ending at or before K are ever noised. Exact integer arithmetic
    (``int.bit_length``), no floating-point log.
    """
    k = check_count("leaves", leaves)
    return k.bit_length()


@dataclass(frozen=True)
class Structure:
    """How many releases of a group contain one user's data.

    ``kind`` is one of ``single``, ``repeated``, ``tree``, ``adaptive``; ``count`` is required
    for ``repeated`` (>= 1), ``leaves`` for ``tree`` (K >= 1), ``max_count`` for ``adaptive``.
    """

    kind: str
    count: int | None = None
    leaves: int | None = None
    max_count: int | None = None

    def __post_init__(self) -> None:
        if self.kind not in STRUCTURE_KINDS:
            raise PrivacctError(f"structure.kind must be one of {', '.join(STRUCTURE_KINDS)}, got {self.kind!r}")
        needed = {"single": None, "repeated": "count", "tree": "leaves", "adaptive": "max_count"}[self.kind]
        for name in ("count", "leaves", "max_count"):
            value = getattr(self, name)
            if name == needed:
                if value is None:
                    raise PrivacctError(f"structure.{name} is required for kind {self.kind!r} (an integer >= 1)")
                object.__setattr__(self, name, check_count(f"structure.{name}", value))
            elif value is not None:
                raise PrivacctError(f"structure.{name} is not allowed for kind {self.kind!r}")

    @classmethod
    def single(cls) -> "Structure":
        return cls("single")

    @classmethod
    def repeated(cls, count: int) -> "Structure":
        return cls("repeated", count=count)

    @classmethod
    def tree(cls, leaves: int) -> "Structure":
        return cls("tree", leaves=leaves)

    @classmethod
    def adaptive(cls, max_count: int) -> "Structure":
        return cls("adaptive", max_count=max_count)

    def per_user_count(self) -> int:
        """Number of releases in this group that contain one user's data (derived, worst user)."""
        if self.kind == "single":
            return 1
        if self.kind == "repeated":
            return int(self.count)  # type: ignore[arg-type]
        if self.kind == "tree":
            return tree_depth(int(self.leaves))  # type: ignore[arg-type]
        return int(self.max_count)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        for name in ("count", "leaves", "max_count"):
            if getattr(self, name) is not None:
                d[name] = getattr(self, name)
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str = "structure") -> "Structure":
        if not isinstance(d, Mapping):
            raise PrivacctError(f"{where} must be an object with a 'kind' field")
        _no_extra(d, {"kind", "count", "leaves", "max_count"}, where)
        if "kind" not in d:
            raise PrivacctError(f"{where}.kind is missing (one of {', '.join(STRUCTURE_KINDS)})")
        try:
            return cls(d["kind"], count=d.get("count"), leaves=d.get("leaves"), max_count=d.get("max_count"))
        except PrivacctError as e:
            raise PrivacctError(str(e).replace("structure", where, 1)) from None


@dataclass(frozen=True)
class Sensitivity:
    """Joint sensitivity of one release under the log's neighbouring relation.

    ``norm`` in {l1, l2, frobenius-upper}; ``value`` > 0 and finite; ``derivation`` is one line
    saying why (which paper, which equation, which clipping makes it hold).
    """

    norm: str
    value: float
    derivation: str = ""

    def __post_init__(self) -> None:
        if self.norm not in NORMS:
            raise PrivacctError(f"sensitivity.norm must be one of {', '.join(NORMS)}, got {self.norm!r}")
        object.__setattr__(self, "value", check_positive("sensitivity.value", self.value))
        if not isinstance(self.derivation, str):
            raise PrivacctError("sensitivity.derivation must be a string")

    def to_dict(self) -> dict[str, Any]:
        return {"norm": self.norm, "value": self.value, "derivation": self.derivation}


@dataclass(frozen=True)
class PaperStatement:
    """What the paper printed for a release group, kept beside the toolkit's own derivation.

    ``sensitivity``: the sensitivity the paper's proof uses (e.g. H where replace-one gives 2H);
    ``per_user_count``: the number of releases per user the paper's proof uses (e.g. ln K
    where a binary tree gives floor(log2 K) + 1); ``equation``: where it is printed.
    """

    sensitivity: float | None = None
    per_user_count: float | None = None
    equation: str = ""

    def __post_init__(self) -> None:
        if self.sensitivity is not None:
            object.__setattr__(self, "sensitivity", check_positive("paper.sensitivity", self.sensitivity))
        if self.per_user_count is not None:
            object.__setattr__(self, "per_user_count", check_positive("paper.per_user_count", self.per_user_count))

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"equation": self.equation}
        if self.sensitivity is not None:
            d["sensitivity"] = self.sensitivity
        if self.per_user_count is not None:
            d["per_user_count"] = self.per_user_count
        return d


@dataclass(frozen=True)
class ReleaseGroup:
    """One family of noisy statistics released with the same mechanism, scale and structure."""

    name: str
    mechanism: str
    noise_scale: float
    sensitivity: Sensitivity
    structure: Structure
    dimension: int | None = None
    description: str = ""
    paper: PaperStatement | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise PrivacctError("release_groups[].name must be a non-empty string")
        if self.mechanism not in MECHANISMS:
            raise PrivacctError(
                f"release group {self.name!r}: mechanism must be one of {', '.join(MECHANISMS)}, got {self.mechanism!r}"
            )
        object.__setattr__(self, "noise_scale", check_positive(f"release group {self.name!r}: noise_scale", self.noise_scale))
        if self.sensitivity.norm not in MECHANISM_NORMS[self.mechanism]:
            raise PrivacctError(
                f"release group {self.name!r}: sensitivity.norm for {self.mechanism} must be "
                f"{' or '.join(MECHANISM_NORMS[self.mechanism])}, got {self.sensitivity.norm!r}"
            )
        if self.dimension is not None:
            object.__setattr__(self, "dimension", check_count(f"release group {self.name!r}: dimension", self.dimension))

    @property
    def per_user_count(self) -> int:
        return self.structure.per_user_count()

    @property
    def ratio(self) -> float:
        """Sensitivity over noise scale: Laplace eps0 = Delta_1 / b; Gaussian mu = Delta_2 / sigma."""
        return self.sensitivity.value / self.noise_scale

    def with_noise_scale(self, noise_scale: float) -> "ReleaseGroup":
        return ReleaseGroup(self.name, self.mechanism, noise_scale, self.sensitivity, self.structure,
                            self.dimension, self.description, self.paper)

    def with_structure(self, structure: Structure) -> "ReleaseGroup":
        return ReleaseGroup(self.name, self.mechanism, self.noise_scale, self.sensitivity, structure,
                            self.dimension, self.description, self.paper)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "name": self.name,
            "mechanism": self.mechanism,
            "noise_scale": self.noise_scale,
            "sensitivity": self.sensitivity.to_dict(),
            "structure": self.structure.to_dict(),
        }
        if self.dimension is not None:
            d["dimension"] = self.dimension
        if self.description:
            d["description"] = self.description
        if self.paper is not None:
            d["paper"] = self.paper.to_dict()
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str) -> "ReleaseGroup":
        if not isinstance(d, Mapping):
            raise PrivacctError(f"{where} must be an object")
        _no_extra(d, {"name", "mechanism", "noise_scale", "sensitivity", "structure", "dimension", "description", "paper"}, where)
        for key in ("name", "mechanism", "noise_scale", "sensitivity", "structure"):
            if key not in d:
                raise PrivacctError(f"{where}.{key} is missing")
        sens = d["sensitivity"]
        if not isinstance(sens, Mapping):
            raise PrivacctError(f"{where}.sensitivity must be an object with norm, value, derivation")
        _no_extra(sens, {"norm", "value", "derivation"}, f"{where}.sensitivity")
        for key in ("norm", "value"):
            if key not in sens:
                raise PrivacctError(f"{where}.sensitivity.{key} is missing")
        paper = d.get("paper")
        if paper is not None:
            if not isinstance(paper, Mapping):
                raise PrivacctError(f"{where}.paper must be an object")
            _no_extra(paper, {"sensitivity", "per_user_count", "equation"}, f"{where}.paper")
        try:
            return cls(
                name=d["name"],
                mechanism=d["mechanism"],
                noise_scale=d["noise_scale"],
                sensitivity=Sensitivity(sens["norm"], sens["value"], sens.get("derivation", "")),
                structure=Structure.from_dict(d["structure"], f"{where}.structure"),
                dimension=d.get("dimension"),
                description=d.get("description", ""),
                paper=None if paper is None else PaperStatement(paper.get("sensitivity"), paper.get("per_user_count"), paper.get("equation", "")),
            )
        except PrivacctError as e:
            msg = str(e)
            raise PrivacctError(msg if msg.startswith(where) else f"{where}: {msg}") from None


@dataclass(frozen=True)
class Claim:
    """A claimed (epsilon, delta): epsilon > 0 finite, delta in [0, 1)."""

    epsilon: float
    delta: float = 0.0

    def __post_init__(self) -> None:
        object.__setattr__(self, "epsilon", check_positive("claim.epsilon", self.epsilon))
        object.__setattr__(self, "delta", check_delta("claim.delta", self.delta, allow_zero=True))

    def to_dict(self) -> dict[str, Any]:
        return {"epsilon": self.epsilon, "delta": self.delta}


@dataclass(frozen=True)
class MechanismLog:
    """A declared mechanism log (schema version :data:`SCHEMA_VERSION`). Frozen and hashable."""

    name: str
    privacy_model: str
    release_groups: tuple[ReleaseGroup, ...]
    neighbouring: str = "replace-one-user"
    parameters: tuple[tuple[str, Any], ...] = field(default_factory=tuple)
    claim: Claim | None = None
    source: str = ""
    schema_version: int = SCHEMA_VERSION

    def __post_init__(self) -> None:
        if not isinstance(self.name, str) or not self.name:
            raise PrivacctError("name must be a non-empty string")
        if self.privacy_model not in PRIVACY_MODELS:
            raise PrivacctError(f"privacy_model must be one of {', '.join(PRIVACY_MODELS)}, got {self.privacy_model!r}")
        if self.neighbouring not in NEIGHBOURING:
            raise PrivacctError(f"neighbouring must be one of {', '.join(NEIGHBOURING)}, got {self.neighbouring!r}")
        if self.schema_version != SCHEMA_VERSION:
            raise PrivacctError(f"schema_version must be {SCHEMA_VERSION}, got {self.schema_version!r}")
        groups = tuple(self.release_groups)
        if not groups:
            raise PrivacctError("release_groups must hold at least one release group")
        names = [g.name for g in groups]
        if len(set(names)) != len(names):
            raise PrivacctError("release_groups[].name must be unique within a log")
        object.__setattr__(self, "release_groups", groups)
        params = self.parameters
        if isinstance(params, Mapping):
            params = tuple(sorted(params.items()))
        params = tuple((str(k), _freeze(v)) for k, v in params)
        object.__setattr__(self, "parameters", params)

    @property
    def params(self) -> dict[str, Any]:
        """The parameters as a plain dict (K, H, S, A, d, ...)."""
        return {k: _thaw(v) for k, v in self.parameters}

    def group(self, name: str) -> ReleaseGroup:
        for g in self.release_groups:
            if g.name == name:
                return g
        raise PrivacctError(f"no release group named {name!r}")

    def replace_groups(self, groups: tuple[ReleaseGroup, ...] | list[ReleaseGroup]) -> "MechanismLog":
        return MechanismLog(self.name, self.privacy_model, tuple(groups), self.neighbouring,
                            self.parameters, self.claim, self.source, self.schema_version)

    def with_claim(self, claim: Claim | None) -> "MechanismLog":
        return MechanismLog(self.name, self.privacy_model, self.release_groups, self.neighbouring,
                            self.parameters, claim, self.source, self.schema_version)

    def scaled_noise(self, factor: float) -> "MechanismLog":
        """The same log with every group's noise scale multiplied by ``factor`` > 0."""
        factor = check_positive("factor", factor)
        return self.replace_groups([g.with_noise_scale(g.noise_scale * factor) for g in self.release_groups])

    # ---- JSON -----------------------------------------------------------------------------
    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {
            "schema_version": self.schema_version,
            "name": self.name,
            "privacy_model": self.privacy_model,
            "neighbouring": self.neighbouring,
            "parameters": self.params,
        }
        if self.source:
            d["source"] = self.source
        d["claim"] = None if self.claim is None else self.claim.to_dict()
        d["release_groups"] = [g.to_dict() for g in self.release_groups]
        return d

    def to_json(self, indent: int | None = 2) -> str:
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, d: Any) -> "MechanismLog":
        if not isinstance(d, Mapping):
            raise PrivacctError("a mechanism log must be a JSON object")
        _no_extra(d, {"schema_version", "name", "privacy_model", "neighbouring", "parameters", "source", "claim", "release_groups"}, "log")
        for key in ("schema_version", "name", "privacy_model", "release_groups"):
            if key not in d:
                raise PrivacctError(f"{key} is missing")
        groups = d["release_groups"]
        if not isinstance(groups, list):
            raise PrivacctError("release_groups must be a list")
        claim = d.get("claim")
        if claim is not None:
            if not isinstance(claim, Mapping) or "epsilon" not in claim:
                raise PrivacctError("claim must be null or an object with epsilon (> 0) and delta (in [0, 1))")
            _no_extra(claim, {"epsilon", "delta"}, "claim")
            claim = Claim(claim["epsilon"], claim.get("delta", 0.0))
        params = d.get("parameters", {})
        if not isinstance(params, Mapping):
            raise PrivacctError("parameters must be an object")
        return cls(
            name=d["name"],
            privacy_model=d["privacy_model"],
            release_groups=tuple(ReleaseGroup.from_dict(g, f"release_groups[{i}]") for i, g in enumerate(groups)),
            neighbouring=d.get("neighbouring", "replace-one-user"),
            parameters=params,
            claim=claim,
            source=d.get("source", ""),
            schema_version=d["schema_version"],
        )

    @classmethod
    def from_json(cls, text: str) -> "MechanismLog":
        try:
            data = json.loads(text, parse_constant=_refuse_constant)
        except json.JSONDecodeError as e:
            raise PrivacctError(f"not a JSON document: {e.msg} at line {e.lineno} column {e.colno}") from None
        return cls.from_dict(data)

    @classmethod
    def load(cls, path: str | Path) -> "MechanismLog":
        p = Path(path)
        try:
            text = p.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as e:
            raise PrivacctError(f"cannot read log file {str(p)!r}: {e.__class__.__name__}") from None
        return cls.from_json(text)

    def save(self, path: str | Path) -> None:
        text = self.to_json()  # serialise first: nothing is written if this fails
        Path(path).write_text(text + "\n", encoding="utf-8")


def _refuse_constant(name: str) -> float:
    raise PrivacctError(f"non-finite number {name} is not allowed in a mechanism log")


def _no_extra(d: Mapping, allowed: set[str], where: str) -> None:
    extra = sorted(set(d) - allowed)
    if extra:
        raise PrivacctError(f"{where}: unknown field(s) {', '.join(map(repr, extra))}; allowed: {', '.join(sorted(allowed))}")


def _freeze(v: Any) -> Any:
    if isinstance(v, float) and not math.isfinite(v):
        raise PrivacctError(f"parameters must be finite, got {v!r}")
    if isinstance(v, Mapping):
        return tuple(sorted((str(k), _freeze(x)) for k, x in v.items())) + (("__mapping__", True),)
    if isinstance(v, (list, tuple)):
        return ("__list__",) + tuple(_freeze(x) for x in v)
    return v


def _thaw(v: Any) -> Any:
    if isinstance(v, tuple) and v and v[0] == "__list__":
        return [_thaw(x) for x in v[1:]]
    if isinstance(v, tuple) and v and v[-1] == ("__mapping__", True):
        return {k: _thaw(x) for k, x in v[:-1]}
    return v
