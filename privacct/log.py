"""Mechanism logs: the declarative, versioned JSON description of every noisy release.

A :class:`MechanismLog` is one document per algorithm configuration (docs/accounting.md#mechanism-logs).
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
* ``factorized(strategy, leaves=K, params)``: a continual counter over K steps that releases
  ``L (R x + z)`` (docs/counters.md); ``sensitivity`` is that of one step's addition x_t, and the
  per-user sensitivity multiplier is derived from the strategy (the largest column norm of R: l2
  for Gaussian noise, l1 for Laplace, single participation), never typed in. The trees (0/1
  columns) are floor(log2 K) + 1 releases per user at multiplier 1; a Toeplitz strategy is one
  release R x + z at multiplier ||column 1 of R|| (:attr:`ReleaseGroup.sensitivity_multiplier`).
* ``dimension`` (optional) is the number of independent noise values in one release (for a
  symmetric d x d matrix, d(d+1)/2); the ledger check compares every draw against it.
* ``paper`` optionally records what the paper printed (its sensitivity, its per-user count, the
  equation and, optionally, the rule by which its proof composes the releases), so that a report
  can say *why* a printed setting misses its claim.

A log may carry named :class:`Reading` s of an ambiguous paper (``readings``): each reading
overrides the noise scale, sensitivity, structure or paper statement of some groups, and
:meth:`MechanismLog.under_reading` gives the log under that reading (docs/accounting.md,
"Readings").

Releases of different groups, and the per-user releases within a group, compose adaptively.

Parsing is strict (:meth:`MechanismLog.from_json`): the document is at most
:data:`MAX_DOCUMENT_CHARS` characters and :data:`MAX_DEPTH` levels deep (checked before any
recursion), duplicate object keys, the constants NaN/Infinity, numbers beyond the float range and
lone surrogates are refused, every field has one type (a boolean is not a number, an integral
float such as 3.0 is the integer 3 as in JSON Schema), unknown fields are refused, and strings
have length bounds. :func:`privacct.schema.log_schema` states exactly these rules, except the
ones a JSON Schema cannot express: duplicate keys, the document size, non-JSON constants, and
unique group names within a log.
"""

from __future__ import annotations

import io
import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from .errors import MAX_COUNT, PrivacctError, check_count, check_delta, check_positive, printable, shown

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
STRUCTURE_KINDS = ("single", "repeated", "tree", "adaptive", "factorized")

# Bounds of the strict parser (privacct.schema states the same numbers).
MAX_DOCUMENT_CHARS = 2**22          # characters of JSON text (4,194,304)
MAX_DOCUMENT_BYTES = 4 * MAX_DOCUMENT_CHARS  # bytes read at most (a character of UTF-8 takes at most 4)
MAX_DEPTH = 32                      # nesting of arrays and objects, the root object is level 1
MAX_NAME_CHARS = 200                # log name, group names, parameter keys
MAX_TEXT_CHARS = 10_000             # derivation, description, equation, source, string parameters
MAX_GROUPS = 1000                   # release groups in one log
MAX_INT_DIGITS = 400                # longer integer literals are refused before conversion
MAX_FLOAT = 1.7976931348623157e308  # every number of a log is finite

_SURROGATE = re.compile("[\ud800-\udfff]")
# A JSON string (skipped whole) or one bracket; used to bound nesting before json.loads recurses.
_DEPTH_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


def tree_depth(leaves: int) -> int:
    """Nodes of a K-leaf binary counter that contain one leaf: floor(log2 K) + 1.

    Chan, Shi, Song (2011), binary mechanism; Kairouz et al. (2021, arXiv 2103.00039, App. D)
    give the same depth D = floor(log2 K) + 1 = ceil(log2(K + 1)) for the online tree in which only
    complete dyadic intervals ending at or before K are ever noised. Exact integer arithmetic
    (``int.bit_length``), no floating-point log.
    """
    k = check_count("leaves", leaves)
    return k.bit_length()


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
    # What a user costs is derived from the strategy (privacct.counters.strategies), never typed in.
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
        check_choice("structure.strategy", self.strategy, FACTORIZED_STRATEGIES)
        if self.leaves is None:
            raise PrivacctError(f"structure.leaves is required for kind 'factorized' (an integer in [1, {MAX_COUNT}])")
        object.__setattr__(self, "leaves", check_count("structure.leaves", self.leaves))
        if self.strategy == "blt":
            if self.buffers is None:
                raise PrivacctError("structure.params is required for strategy 'blt' "
                                    f"(buffers: 1 to {MAX_BLT_BUFFERS} objects {{theta in (0, 1), omega > 0}})")
            object.__setattr__(self, "buffers", _buffer_pairs(self.buffers, "structure.params.buffers"))
        elif self.buffers is not None:
            raise PrivacctError(f"structure.params is not allowed for strategy {self.strategy!r}")

    def _factorized_rows_per_user(self) -> int:
        """Releases per user as the accountants see them: the tree depth for the trees (user 1 is
        in floor(log2 K) + 1 nodes, each a 0/1 entry of her column), and 1 for a Toeplitz R (the
        whole vector R x + z is one release whose sensitivity is multiplied by the column norm,
        :meth:`ReleaseGroup.sensitivity_multiplier`; docs/counters.md#accounting)."""
        if self.strategy in ("tree", "tree-honaker"):
            return tree_depth(int(self.leaves))  # type: ignore[arg-type]
        return 1

    def _factorized_dict(self) -> dict[str, Any]:
        d: dict[str, Any] = {"strategy": self.strategy}
        if self.buffers is not None:
            d["params"] = {"buffers": [{"theta": t, "omega": w} for t, w in self.buffers]}
        return d


FACTORIZED_STRATEGIES = ("tree", "tree-honaker", "sqrt-toeplitz", "blt")
MAX_BLT_BUFFERS = 8


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
        otherwise), an upper bound derived from the strategy (privacct.counters.strategies)."""
        s = self.structure
        if s.kind != "factorized" or s.strategy in ("tree", "tree-honaker"):
            return 1.0
        from .counters.strategies import column_norm, norm_for  # numpy only for factorized logs

        return column_norm(s, norm_for(self.mechanism))

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
    readings: tuple["Reading", ...] = ()

    def __post_init__(self) -> None:
        check_text("name", self.name, max_chars=MAX_NAME_CHARS, min_chars=1)
        check_choice("privacy_model", self.privacy_model, PRIVACY_MODELS)
        check_choice("neighbouring", self.neighbouring, NEIGHBOURING)
        if isinstance(self.schema_version, bool) or self.schema_version != SCHEMA_VERSION:
            raise PrivacctError(f"schema_version must be {SCHEMA_VERSION}, got {shown(self.schema_version)}")
        object.__setattr__(self, "schema_version", SCHEMA_VERSION)
        check_text("source", self.source)
        if self.claim is not None and not isinstance(self.claim, Claim):
            raise PrivacctError("claim must be a Claim or None")
        if isinstance(self.release_groups, (str, bytes, Mapping)):
            raise PrivacctError("release_groups must be a sequence of release groups")
        groups = tuple(self.release_groups)
        if not groups:
            raise PrivacctError("release_groups must hold at least one release group")
        if len(groups) > MAX_GROUPS:
            raise PrivacctError(f"release_groups must hold at most {MAX_GROUPS} release groups, got {len(groups)}")
        if not all(isinstance(g, ReleaseGroup) for g in groups):
            raise PrivacctError("release_groups must hold ReleaseGroup objects")
        names = [g.name for g in groups]
        if len(set(names)) != len(names):
            raise PrivacctError("release_groups[].name must be unique within a log")
        object.__setattr__(self, "release_groups", groups)
        object.__setattr__(self, "parameters", _freeze_parameters(self.parameters))
        object.__setattr__(self, "readings", _check_readings(self.readings, groups))

    @property
    def params(self) -> dict[str, Any]:
        """The parameters as a plain dict (K, H, S, A, d, ...)."""
        return {k: _thaw(v) for k, v in self.parameters}

    def group(self, name: str) -> ReleaseGroup:
        for g in self.release_groups:
            if g.name == name:
                return g
        raise PrivacctError(f"no release group named {shown(name)}")

    def replace_groups(self, groups: tuple[ReleaseGroup, ...] | list[ReleaseGroup]) -> "MechanismLog":
        """The same log with other groups; its readings are dropped (they describe the declared groups)."""
        return MechanismLog(self.name, self.privacy_model, tuple(groups), self.neighbouring,
                            self.parameters, self.claim, self.source, self.schema_version)

    def reading(self, name: str) -> "Reading":
        """The reading called ``name`` (PrivacctError naming the readings there are)."""
        for r in self.readings:
            if r.name == name:
                return r
        have = ", ".join(shown(r.name) for r in self.readings) or "none"
        raise PrivacctError(f"reading must name one of the log's readings ({have}), got {shown(name)}")

    def under_reading(self, name: str) -> "MechanismLog":
        """This log with reading ``name``'s overrides applied (and no readings of its own)."""
        return self.replace_groups(self.reading(name).apply(self.release_groups))

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
        if self.readings:
            d["readings"] = [r.to_dict() for r in self.readings]
        return d

    def to_json(self, indent: int | None = 2) -> str:
        """Strict JSON (ASCII, no NaN/Infinity); :meth:`from_json` reads it back to an equal log."""
        return json.dumps(self.to_dict(), indent=indent, allow_nan=False)

    @classmethod
    def from_dict(cls, d: Any) -> "MechanismLog":
        d = _object(d, "log", {"schema_version", "name", "privacy_model", "neighbouring", "parameters", "source", "claim",
                               "release_groups", "readings"}, required=("schema_version", "name", "privacy_model", "release_groups"),
                    nullable=("claim",), top=True)
        groups = d["release_groups"]
        if not isinstance(groups, list):
            raise PrivacctError(f"release_groups must be a list of release groups, got {shown(groups)}")
        if not 1 <= len(groups) <= MAX_GROUPS:
            raise PrivacctError(f"release_groups must hold 1 to {MAX_GROUPS} release groups, got {len(groups)}")
        claim = d.get("claim")
        if claim is not None:
            claim = _object(claim, "claim", {"epsilon", "delta"}, required=("epsilon",))
            claim = Claim(claim["epsilon"], claim.get("delta", 0.0))
        params = d.get("parameters", {})
        if not isinstance(params, Mapping):
            raise PrivacctError(f"parameters must be an object, got {shown(params)}")
        return cls(
            name=d["name"],
            privacy_model=d["privacy_model"],
            release_groups=tuple(ReleaseGroup.from_dict(g, f"release_groups[{i}]") for i, g in enumerate(groups)),
            neighbouring=d.get("neighbouring", "replace-one-user"),
            parameters=params,
            claim=claim,
            source=d.get("source", ""),
            schema_version=_schema_version(d["schema_version"]),
            readings=_readings_from(d.get("readings", [])),
        )

    @classmethod
    def from_json(cls, text: str) -> "MechanismLog":
        """Parse a log strictly (see the module docstring); any refusal is one PrivacctError."""
        return cls.from_dict(parse_json(text))

    @classmethod
    def load(cls, path: str | Path) -> "MechanismLog":
        """Read and parse a log file; an unreadable file is one PrivacctError naming the path."""
        return cls.from_json(read_text(path, what="log file"))

    def save(self, path: str | Path) -> None:
        text = self.to_json()  # serialise first: nothing is written if this fails
        Path(path).write_text(text + "\n", encoding="utf-8")



# ---- strict JSON ------------------------------------------------------------------------------
def read_text(path: str | Path, *, what: str = "file") -> str:
    """The UTF-8 text of ``path`` (at most :data:`MAX_DOCUMENT_CHARS` characters), or one
    PrivacctError naming the path and the reason (missing, a directory, unreadable, too large,
    not UTF-8)."""
    p = Path(path)
    name = shown(str(p))
    try:
        with open(p, "rb") as f:
            data = f.read(MAX_DOCUMENT_BYTES + 1)
    except FileNotFoundError:
        raise PrivacctError(f"cannot read {what} {name}: no such file") from None
    except IsADirectoryError:
        raise PrivacctError(f"cannot read {what} {name}: it is a directory") from None
    except PermissionError:
        raise PrivacctError(f"cannot read {what} {name}: permission denied") from None
    except (OSError, ValueError) as e:
        reason = getattr(e, "strerror", None) or e.__class__.__name__
        raise PrivacctError(f"cannot read {what} {name}: {reason}") from None
    return _bounded_text(data, what, name)


def read_stream_text(stream: Any, *, name: str = "standard input", what: str = "log") -> str:
    """The UTF-8 text of a binary stream (e.g. ``sys.stdin.buffer``) under the same bounds as
    :func:`read_text`: at most :data:`MAX_DOCUMENT_BYTES` + 1 bytes are ever read (an endless
    stream is refused, never drained), and the text goes to the same strict parser
    (:meth:`MechanismLog.from_json`). A text stream (no ``buffer``) is read the same way, in
    characters. Any failure is one PrivacctError naming ``name``."""
    shown_name = printable(name)  # a label such as "standard input", not quoted like a path
    try:
        data = stream.read(MAX_DOCUMENT_CHARS + 1 if isinstance(stream, io.TextIOBase) else MAX_DOCUMENT_BYTES + 1)
    except (OSError, ValueError) as e:
        reason = getattr(e, "strerror", None) or str(e) or e.__class__.__name__
        raise PrivacctError(f"cannot read {what} from {shown_name}: {reason}") from None
    if isinstance(data, str):
        if len(data) > MAX_DOCUMENT_CHARS:
            raise PrivacctError(f"cannot read {what} from {shown_name}: larger than {MAX_DOCUMENT_CHARS} characters")
        return data
    if not isinstance(data, (bytes, bytearray)):
        raise PrivacctError(f"cannot read {what} from {shown_name}: the stream returned {shown(data)}")
    return _bounded_text(bytes(data), what, f"from {shown_name}")


def _bounded_text(data: bytes, what: str, name: str) -> str:
    """``data`` (at most MAX_DOCUMENT_BYTES + 1 bytes read) decoded as UTF-8, or one PrivacctError."""
    if len(data) > MAX_DOCUMENT_BYTES:
        raise PrivacctError(f"cannot read {what} {name}: larger than {MAX_DOCUMENT_CHARS} characters")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise PrivacctError(f"cannot read {what} {name}: not UTF-8 text (invalid byte at offset {e.start})") from None


def parse_json(text: object) -> Any:
    """Strict JSON: size and depth bounded before parsing, no duplicate keys, no NaN/Infinity, no
    number beyond the float range, no lone surrogate in any string."""
    if not isinstance(text, str):
        raise PrivacctError(f"a mechanism log must be JSON text, got {shown(text)}")
    if len(text) > MAX_DOCUMENT_CHARS:
        raise PrivacctError(f"a mechanism log must be at most {MAX_DOCUMENT_CHARS} characters, got {len(text)}")
    _check_depth(text)
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicate_keys, parse_constant=_refuse_constant,
                          parse_float=_finite_float, parse_int=_bounded_int)
    except json.JSONDecodeError as e:
        raise PrivacctError(f"not a JSON document: {e.msg} at line {e.lineno} column {e.colno}") from None
    except RecursionError:  # pragma: no cover - _check_depth bounds the nesting first
        raise PrivacctError(f"not a JSON document: nested deeper than {MAX_DEPTH} levels") from None
    _check_strings(data, "log")
    return data


def _check_depth(text: str) -> None:
    depth = 0
    for m in _DEPTH_TOKENS.finditer(text):
        c = m.group()
        if c == "[" or c == "{":
            depth += 1
            if depth > MAX_DEPTH:
                raise PrivacctError(f"not a JSON document this parser accepts: nested deeper than {MAX_DEPTH} levels")
        elif c == "]" or c == "}":
            depth -= 1


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for k, v in pairs:
        if k in out:
            raise PrivacctError(f"duplicate key {shown(k)} in a JSON object (every key must appear once)")
        out[k] = v
    return out


def _refuse_constant(name: str) -> float:
    raise PrivacctError(f"non-finite number {name} is not allowed in a mechanism log")


def _finite_float(text: str) -> float:
    v = float(text)
    if not math.isfinite(v):
        raise PrivacctError(f"number {shown(text)} is beyond the floating-point range (|x| <= {MAX_FLOAT!r})")
    return v


def _bounded_int(text: str) -> int:
    if len(text.lstrip("-")) > MAX_INT_DIGITS:
        raise PrivacctError(f"integer literal of {len(text)} digits is beyond the floating-point range")
    return int(text)


def _check_strings(v: Any, where: str) -> None:
    if isinstance(v, str):
        if _SURROGATE.search(v):
            raise PrivacctError(f"{where}: a string holds a lone surrogate (\\ud800-\\udfff), which is not valid Unicode text")
    elif isinstance(v, dict):
        for k, x in v.items():
            _check_strings(k, where)
            _check_strings(x, where)
    elif isinstance(v, list):
        for x in v:
            _check_strings(x, where)


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


def _schema_version(v: Any) -> int:
    if isinstance(v, bool) or not isinstance(v, (int, float)) or v != SCHEMA_VERSION:
        raise PrivacctError(f"schema_version must be {SCHEMA_VERSION}, got {shown(v)}")
    return SCHEMA_VERSION


class _FrozenParameters(tuple):
    """Parameters already checked and frozen by :func:`_freeze_parameters` (not re-checked when a
    log is copied, e.g. by :meth:`MechanismLog.scaled_noise` during calibration)."""


def _freeze_parameters(params: Any) -> tuple[tuple[str, Any], ...]:
    if isinstance(params, _FrozenParameters):
        return params
    if isinstance(params, Mapping):
        items = list(params.items())
    elif isinstance(params, (tuple, list)):
        items = []
        for p in params:
            if not isinstance(p, (tuple, list)) or len(p) != 2:
                raise PrivacctError("parameters must be an object (or a sequence of (key, value) pairs)")
            items.append((p[0], _thaw(p[1])))
    else:
        raise PrivacctError(f"parameters must be an object, got {shown(params)}")
    out = []
    for k, v in items:
        check_text("parameters key", k, max_chars=MAX_NAME_CHARS)
        out.append((k, _freeze(v, f"parameters.{k}", 3)))
    keys = [k for k, _ in out]
    if len(set(keys)) != len(keys):
        raise PrivacctError("parameters: duplicate key")
    return _FrozenParameters(sorted(out, key=lambda kv: kv[0]))


def _freeze(v: Any, where: str, depth: int) -> Any:
    """A hashable copy of a JSON value (strict: finite numbers, bounded strings and nesting)."""
    if v is None or isinstance(v, bool):
        return v
    if isinstance(v, int):
        if abs(v) > MAX_FLOAT:
            raise PrivacctError(f"{where} must be a finite number within the floating-point range")
        return v
    if isinstance(v, float):
        if not math.isfinite(v):
            raise PrivacctError(f"parameters must be finite, got {v!r} at {where}")
        return v
    if isinstance(v, str):
        return check_text(where, v)
    if isinstance(v, (Mapping, list, tuple)):
        if depth > MAX_DEPTH:
            raise PrivacctError(f"{where}: parameters nested deeper than {MAX_DEPTH} levels (counting from the log object)")
        if isinstance(v, Mapping):
            items = []
            for k, x in v.items():
                check_text(f"{where} key", k, max_chars=MAX_NAME_CHARS)
                items.append((k, _freeze(x, f"{where}.{k}", depth + 1)))
            return tuple(sorted(items, key=lambda kv: kv[0])) + (("__mapping__", True),)
        return ("__list__",) + tuple(_freeze(x, f"{where}[{i}]", depth + 1) for i, x in enumerate(v))
    raise PrivacctError(f"{where} must be a JSON value (null, boolean, number, string, array or object), got {shown(v)}")


def _thaw(v: Any) -> Any:
    if isinstance(v, tuple) and v and v[0] == "__list__":
        return [_thaw(x) for x in v[1:]]
    if isinstance(v, tuple) and v and v[-1] == ("__mapping__", True):
        return {k: _thaw(x) for k, x in v[:-1]}
    return v


# Readings live in their own module (privacct/log_readings.py); imported last because it builds on
# the classes above (import Reading and GroupOverride from privacct.log_readings).
from .log_readings import Reading, _check_readings, _readings_from  # noqa: E402
