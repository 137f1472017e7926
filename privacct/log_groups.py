"""Release groups, the part of a mechanism log below the log itself (docs/accounting.md#mechanism-logs).

:class:`ReleaseGroup` and its fields (:class:`Sensitivity`, :class:`Structure`, :class:`PaperStatement`), the
constants they are checked against and the strict field checks they share with the log and its readings
(:func:`check_text`, :func:`check_choice`, :func:`_object`). The semantics are :mod:`privacct.log`'s module
docstring; everything here is re-exported there (``from privacct.log import Structure`` stays the way to import
it). This module exists so that :mod:`privacct.log` (the log) and :mod:`privacct.log_readings` (its readings)
both build on it without importing each other, and so that a factorized structure asks the counter registry
(:mod:`privacct.counters.registry`, which imports nothing of the log) about its strategy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Mapping

from .counters.base import MAX_BLT_BUFFERS, tree_depth
from .counters.registry import NAMES, get_strategy, strategy_names
from .errors import MAX_COUNT, PrivacctError, check_count, check_positive, shown

MECHANISMS = ("laplace", "gaussian", "symmetric-gaussian-matrix")
NORMS = ("l1", "l2", "frobenius-upper")
# Which sensitivity norm each mechanism's privacy analysis needs.
MECHANISM_NORMS = {
    "laplace": ("l1",),
    "gaussian": ("l2",),
    "symmetric-gaussian-matrix": ("frobenius-upper", "l2"),
}
STRUCTURE_KINDS = ("single", "repeated", "tree", "adaptive", "factorized")
#: The counting strategies of a ``factorized`` structure: the counter registry's names, a live view
#: (privacct.counters.registry: a strategy registered later is in it).
FACTORIZED_STRATEGIES = NAMES

# Bounds of the strict parser (privacct.schema states the same numbers).
MAX_NAME_CHARS = 200                # log name, group names, parameter keys
MAX_TEXT_CHARS = 10_000             # derivation, description, equation, source, string parameters
MAX_GROUPS = 1000                   # release groups in one log

_SURROGATE = re.compile("[\ud800-\udfff]")


def check_text(name: str, value: object, *, max_chars: int = MAX_TEXT_CHARS, min_chars: int = 0) -> str:
    """``value`` if it is a str of ``min_chars``..``max_chars`` characters without lone surrogates."""
    if not isinstance(value, str):
        raise PrivacctError(f"{name} must be a string, got {shown(value)}")
    if not min_chars <= len(value) <= max_chars:
        what = "a non-empty string" if min_chars else "a string"
        raise PrivacctError(f"{name} must be {what} of at most {max_chars} characters, got {len(value)} characters")
    if _SURROGATE.search(value):
        raise PrivacctError(f"{name} holds a lone surrogate (\\ud800-\\udfff), which is not valid Unicode text")
    return value


def check_choice(name: str, value: object, choices: tuple[str, ...]) -> str:
    if not isinstance(value, str) or value not in choices:
        raise PrivacctError(f"{name} must be one of {', '.join(choices)}, got {shown(value)}")
    return value


@dataclass(frozen=True)
class Structure:
    """How many releases of a group contain one user's data.

    ``kind`` is one of ``single``, ``repeated``, ``tree``, ``adaptive``; ``count`` is required
    for ``repeated`` (>= 1), ``leaves`` for ``tree`` (K >= 1), ``max_count`` for ``adaptive``;
    each at most :data:`privacct.errors.MAX_COUNT` (2^53).
    """

    kind: str
    count: int | None = None
    leaves: int | None = None
    max_count: int | None = None
    # factorized structure only (see the delimited block at the end of this class)
    strategy: str | None = None
    buffers: tuple[tuple[float, float], ...] | None = None

    def __post_init__(self) -> None:
        check_choice("structure.kind", self.kind, STRUCTURE_KINDS)
        if self.kind == "factorized" or self.strategy is not None or self.buffers is not None:
            self._check_factorized()
            return
        needed = {"single": None, "repeated": "count", "tree": "leaves", "adaptive": "max_count"}[self.kind]
        for name in ("count", "leaves", "max_count"):
            value = getattr(self, name)
            if name == needed:
                if value is None:
                    raise PrivacctError(f"structure.{name} is required for kind {self.kind!r} (an integer in [1, {MAX_COUNT}])")
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
        if self.kind == "factorized":
            return self._factorized_rows_per_user()
        return int(self.max_count)  # type: ignore[arg-type]

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"kind": self.kind}
        for name in ("count", "leaves", "max_count"):
            if getattr(self, name) is not None:
                d[name] = getattr(self, name)
        if self.kind == "factorized":
            d.update(self._factorized_dict())
        return d

    @classmethod
    def from_dict(cls, d: Any, where: str = "structure") -> "Structure":
        d = _object(d, where, {"kind", "count", "leaves", "max_count", "strategy", "params"}, required=("kind",))
        extra = _factorized_fields(d, where)
        try:
            return cls(d["kind"], count=d.get("count"), leaves=d.get("leaves"), max_count=d.get("max_count"), **extra)
        except PrivacctError as e:
            raise PrivacctError(str(e).replace("structure", where, 1)) from None

    # ---- factorized structure (continual counting; docs/counters.md) -------------------------
    # A counter over K = ``leaves`` steps releasing the prefix sums as L (R x + z), A = L R; the
    # strategy names the factorization, ``buffers`` the (theta, omega) pairs of a ``blt``.
    # What a user costs is derived from the strategy's object (privacct.counters.registry), never typed in.
    @classmethod
    def factorized(cls, strategy: str, leaves: int, params: Mapping[str, Any] | None = None) -> "Structure":
        """``factorized(strategy, leaves=K, params)``; ``params`` is ``{"buffers": [{"theta": t,
        "omega": w}, ...]}`` for ``blt`` (or a sequence of (theta, omega) pairs) and absent otherwise."""
        buffers = None
        if params is not None:
            if not isinstance(params, Mapping) or set(params) != {"buffers"}:
                raise PrivacctError("structure.params must be an object with exactly one field, buffers")
            buffers = _buffer_pairs(params["buffers"], "structure.params.buffers")
        return cls("factorized", leaves=leaves, strategy=strategy, buffers=buffers)

    def _check_factorized(self) -> None:
        if self.kind != "factorized":
            name = "strategy" if self.strategy is not None else "params"
            raise PrivacctError(f"structure.{name} is not allowed for kind {self.kind!r}")
        for name in ("count", "max_count"):
            if getattr(self, name) is not None:
                raise PrivacctError(f"structure.{name} is not allowed for kind 'factorized'")
        if self.strategy is None:
            raise PrivacctError(f"structure.strategy is required for kind 'factorized' (one of {', '.join(FACTORIZED_STRATEGIES)})")
        check_choice("structure.strategy", self.strategy, strategy_names())
        if self.leaves is None:
            raise PrivacctError(f"structure.leaves is required for kind 'factorized' (an integer in [1, {MAX_COUNT}])")
        object.__setattr__(self, "leaves", check_count("structure.leaves", self.leaves))
        if get_strategy(self.strategy).takes_buffers:
            if self.buffers is None:
                raise PrivacctError(f"structure.params is required for strategy {self.strategy!r} "
                                    f"(buffers: 1 to {MAX_BLT_BUFFERS} objects {{theta in (0, 1), omega > 0}})")
            object.__setattr__(self, "buffers", _buffer_pairs(self.buffers, "structure.params.buffers"))
        elif self.buffers is not None:
            raise PrivacctError(f"structure.params is not allowed for strategy {self.strategy!r}")

    def _factorized_rows_per_user(self) -> int:
        """Releases per user as the accountants see them, from the strategy: the tree depth for the trees (user 1
        is in floor(log2 K) + 1 nodes, each a 0/1 entry of her column), and 1 for a Toeplitz R (the whole vector
        R x + z is one release whose sensitivity is multiplied by the column norm,
        :meth:`ReleaseGroup.sensitivity_multiplier`; docs/counters.md#accounting)."""
        return get_strategy(self.strategy).rows_per_user(int(self.leaves))  # type: ignore[arg-type]

    def _factorized_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"strategy": self.strategy}
        if self.buffers is not None:
            d["params"] = {"buffers": [{"theta": t, "omega": w} for t, w in self.buffers]}
        return d


def _buffer_pairs(value: Any, where: str, *, objects_only: bool = False) -> tuple[tuple[float, float], ...]:
    """BLT buffers as (theta, omega) pairs: 1 to MAX_BLT_BUFFERS, theta in (0, 1), omega > 0 finite.
    From JSON (``objects_only``) every buffer is an object {theta, omega}, as the schema says."""
    if isinstance(value, (str, bytes, Mapping)) or not isinstance(value, (list, tuple)):
        raise PrivacctError(f"{where} must be a list of 1 to {MAX_BLT_BUFFERS} buffers, got {shown(value)}")
    if not 1 <= len(value) <= MAX_BLT_BUFFERS:
        raise PrivacctError(f"{where} must hold 1 to {MAX_BLT_BUFFERS} buffers, got {len(value)}")
    out = []
    for i, b in enumerate(value):
        if isinstance(b, Mapping):
            b = _object(b, f"{where}[{i}]", {"theta", "omega"}, required=("theta", "omega"))
            theta, omega = b["theta"], b["omega"]
        elif isinstance(b, (list, tuple)) and len(b) == 2 and not objects_only:
            theta, omega = b
        else:
            raise PrivacctError(f"{where}[{i}] must be an object {{theta, omega}}, got {shown(b)}")
        theta = check_positive(f"{where}[{i}].theta", theta)
        if not theta < 1.0:
            raise PrivacctError(f"{where}[{i}].theta must be in (0, 1), got {shown(theta)}")
        out.append((theta, check_positive(f"{where}[{i}].omega", omega)))
    return tuple(out)


def _factorized_fields(d: Mapping, where: str) -> dict[str, Any]:
    """strategy and params of a structure object, checked under their paths."""
    out: dict[str, Any] = {}
    if "strategy" in d:
        out["strategy"] = d["strategy"]
    if "params" in d:
        p = _object(d["params"], f"{where}.params", {"buffers"}, required=("buffers",))
        out["buffers"] = _buffer_pairs(p["buffers"], f"{where}.params.buffers", objects_only=True)
    return out
# ---- end of the factorized structure ------------------------------------------------------------


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
        check_choice("sensitivity.norm", self.norm, NORMS)
        object.__setattr__(self, "value", check_positive("sensitivity.value", self.value))
        check_text("sensitivity.derivation", self.derivation)

    def to_dict(self) -> dict[str, Any]:
        return {"norm": self.norm, "value": self.value, "derivation": self.derivation}


#: How a paper's proof composes the per-user releases of one group (:attr:`PaperStatement.composition`):
#: ``squares-added``, zCDP composition (rho = sum_k Delta_k^2 / (2 sigma^2)), what the toolkit derives;
#: ``sensitivities-added``, the releases' sensitivities summed into one Delta = sum_k Delta_k and the
#: Gaussian variance set linearly from it (sigma^2 = Delta / rho, e.g. seed 004's Lemma 15), so that by the
#: paper's argument the group costs rho = sum_k Delta_k / sigma^2. For Laplace noise both are basic composition.
COMPOSITION_RULES = ("squares-added", "sensitivities-added")


@dataclass(frozen=True)
class PaperStatement:
    """What the paper printed for a release group, kept beside the toolkit's own derivation.

    ``sensitivity``: the sensitivity the paper's proof uses (e.g. H where replace-one gives 2H);
    ``per_user_count``: the number of releases per user the paper's proof uses (e.g. ln K
    where a binary tree gives floor(log2 K) + 1); ``equation``: where it is printed;
    ``composition`` (optional, one of :data:`COMPOSITION_RULES`): how the proof composes the group's
    releases, when it says so (absent: the paper's argument is read as zCDP composition);
    ``composition_equation``: where that rule is printed (e.g. "Lemma 15").
    """

    sensitivity: float | None = None
    per_user_count: float | None = None
    equation: str = ""
    composition: str | None = None
    composition_equation: str = ""

    def __post_init__(self) -> None:
        if self.sensitivity is not None:
            object.__setattr__(self, "sensitivity", check_positive("paper.sensitivity", self.sensitivity))
        if self.per_user_count is not None:
            object.__setattr__(self, "per_user_count", check_positive("paper.per_user_count", self.per_user_count))
        check_text("paper.equation", self.equation)
        if self.composition is not None:
            check_choice("paper.composition", self.composition, COMPOSITION_RULES)
        check_text("paper.composition_equation", self.composition_equation)

    def to_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"equation": self.equation}
        if self.sensitivity is not None:
            d["sensitivity"] = self.sensitivity
        if self.per_user_count is not None:
            d["per_user_count"] = self.per_user_count
        if self.composition is not None:
            d["composition"] = self.composition
        if self.composition_equation:
            d["composition_equation"] = self.composition_equation
        return d


def paper_statement_from_dict(d, where: str) -> "PaperStatement":
    """The ``paper`` object of a release group (or of a reading's group), strictly parsed."""
    p = _object(d, where, {"sensitivity", "per_user_count", "equation", "composition", "composition_equation"})
    return PaperStatement(
        None if "sensitivity" not in p else check_positive(f"{where}.sensitivity", p["sensitivity"]),
        None if "per_user_count" not in p else check_positive(f"{where}.per_user_count", p["per_user_count"]),
        check_text(f"{where}.equation", p.get("equation", "")),
        None if "composition" not in p else check_choice(f"{where}.composition", p["composition"], COMPOSITION_RULES),
        check_text(f"{where}.composition_equation", p.get("composition_equation", "")))


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
        check_text("release_groups[].name", self.name, max_chars=MAX_NAME_CHARS, min_chars=1)
        where = f"release group {shown(self.name)}"
        check_choice(f"{where}: mechanism", self.mechanism, MECHANISMS)
        object.__setattr__(self, "noise_scale", check_positive(f"{where}: noise_scale", self.noise_scale))
        if not isinstance(self.sensitivity, Sensitivity):
            raise PrivacctError(f"{where}: sensitivity must be a Sensitivity")
        if not isinstance(self.structure, Structure):
            raise PrivacctError(f"{where}: structure must be a Structure")
        if self.paper is not None and not isinstance(self.paper, PaperStatement):
            raise PrivacctError(f"{where}: paper must be a PaperStatement or None")
        if self.sensitivity.norm not in MECHANISM_NORMS[self.mechanism]:
            raise PrivacctError(
                f"{where}: sensitivity.norm for {self.mechanism} must be "
                f"{' or '.join(MECHANISM_NORMS[self.mechanism])}, got {self.sensitivity.norm!r}"
            )
        if self.dimension is not None:
            object.__setattr__(self, "dimension", check_count(f"{where}: dimension", self.dimension))
        check_text(f"{where}: description", self.description)

    @property
    def per_user_count(self) -> int:
        return self.structure.per_user_count()

    @property
    def sensitivity_multiplier(self) -> float:
        """What one user's change of one step is multiplied by in a release of this group: 1, or
        for a factorized Toeplitz strategy the largest column norm of R (l1 for Laplace, l2
        otherwise), an upper bound derived from the strategy (its object's ``release_multiplier``,
        privacct.counters.registry)."""
        s = self.structure
        if s.kind != "factorized":
            return 1.0
        return get_strategy(s.strategy).release_multiplier(s, self.mechanism)

    @property
    def ratio(self) -> float:
        """Sensitivity over noise scale: Laplace eps0 = Delta_1 / b; Gaussian mu = Delta_2 / sigma
        (times :attr:`sensitivity_multiplier`)."""
        return self.sensitivity.value * self.sensitivity_multiplier / self.noise_scale

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
        d = _object(d, where, {"name", "mechanism", "noise_scale", "sensitivity", "structure", "dimension",
                               "description", "paper"},
                    required=("name", "mechanism", "noise_scale", "sensitivity", "structure"))
        # Every field is checked under its path (release_groups[3].noise_scale) before the
        # constructor re-checks the same rules.
        name = check_text(f"{where}.name", d["name"], max_chars=MAX_NAME_CHARS, min_chars=1)
        mechanism = check_choice(f"{where}.mechanism", d["mechanism"], MECHANISMS)
        noise_scale = check_positive(f"{where}.noise_scale", d["noise_scale"])
        sens = _object(d["sensitivity"], f"{where}.sensitivity", {"norm", "value", "derivation"}, required=("norm", "value"))
        norm = check_choice(f"{where}.sensitivity.norm", sens["norm"], NORMS)
        sensitivity = Sensitivity(norm, check_positive(f"{where}.sensitivity.value", sens["value"]),
                                  check_text(f"{where}.sensitivity.derivation", sens.get("derivation", "")))
        if norm not in MECHANISM_NORMS[mechanism]:
            raise PrivacctError(f"{where}.sensitivity.norm for {mechanism} must be "
                                f"{' or '.join(MECHANISM_NORMS[mechanism])}, got {norm!r}")
        structure = Structure.from_dict(d["structure"], f"{where}.structure")
        dimension = None if "dimension" not in d else check_count(f"{where}.dimension", d["dimension"])
        description = check_text(f"{where}.description", d.get("description", ""))
        paper = None if "paper" not in d else paper_statement_from_dict(d["paper"], f"{where}.paper")
        return cls(name, mechanism, noise_scale, sensitivity, structure, dimension, description, paper)


def _object(d: Any, where: str, allowed: set[str], *, required: tuple[str, ...] = (), nullable: tuple[str, ...] = (),
            top: bool = False) -> Mapping:
    """``d`` if it is a mapping with only ``allowed`` keys, all ``required`` ones and no null
    value except in ``nullable`` (an optional field is absent, never null)."""
    if not isinstance(d, Mapping):
        what = "a mechanism log must be a JSON object" if top else f"{where} must be an object"
        raise PrivacctError(f"{what}, got {shown(d)}")
    if not all(isinstance(k, str) for k in d):
        raise PrivacctError(f"{where}: every key must be a string")
    extra = sorted(set(d) - allowed)
    if extra:
        raise PrivacctError(f"{where}: unknown field(s) {', '.join(map(shown, extra[:5]))}; allowed: {', '.join(sorted(allowed))}")
    prefix = "" if top else f"{where}."
    for key in required:
        if key not in d:
            raise PrivacctError(f"{prefix}{key} is missing")
    for key, value in d.items():
        if value is None and key not in nullable:
            raise PrivacctError(f"{prefix}{key} must not be null (leave an optional field out instead)")
    return d


__all__ = ["COMPOSITION_RULES", "FACTORIZED_STRATEGIES", "MAX_BLT_BUFFERS", "MAX_GROUPS", "MAX_NAME_CHARS", "MAX_TEXT_CHARS",
           "MECHANISMS", "MECHANISM_NORMS", "NORMS", "PaperStatement", "ReleaseGroup", "STRUCTURE_KINDS", "Sensitivity",
           "Structure", "check_choice", "check_text", "paper_statement_from_dict", "tree_depth"]
