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

from .errors import PrivacctError, check_delta, check_positive, printable, shown
# Release groups and their fields live one level down (privacct/log_groups.py), readings beside them
# (privacct/log_readings.py); both are re-exported here, the public import path.
from .log_groups import (COMPOSITION_RULES, FACTORIZED_STRATEGIES, MAX_BLT_BUFFERS, MAX_GROUPS, MAX_NAME_CHARS,
                         MAX_TEXT_CHARS, MECHANISM_NORMS, MECHANISMS, NORMS, STRUCTURE_KINDS, PaperStatement, ReleaseGroup,
                         Sensitivity, Structure, _object, _SURROGATE, check_choice, check_text, paper_statement_from_dict,
                         tree_depth)
from .log_readings import GroupOverride, Reading, _check_readings, _readings_from

SCHEMA_VERSION = 1

PRIVACY_MODELS = ("joint", "local")
NEIGHBOURING = ("replace-one-user", "add-remove")

# Bounds of the strict parser (privacct.schema states the same numbers; the names, texts and groups bounds are
# privacct.log_groups').
MAX_DOCUMENT_CHARS = 2**22          # characters of JSON text (4,194,304)
MAX_DOCUMENT_BYTES = 4 * MAX_DOCUMENT_CHARS  # bytes read at most (a character of UTF-8 takes at most 4)
MAX_DEPTH = 32                      # nesting of arrays and objects, the root object is level 1
MAX_INT_DIGITS = 400                # longer integer literals are refused before conversion
MAX_FLOAT = 1.7976931348623157e308  # every number of a log is finite

# A JSON string (skipped whole) or one bracket; used to bound nesting before json.loads recurses.
_DEPTH_TOKENS = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.S)


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


__all__ = [
    "COMPOSITION_RULES", "Claim", "FACTORIZED_STRATEGIES", "GroupOverride", "MAX_BLT_BUFFERS", "MAX_DEPTH",
    "MAX_DOCUMENT_BYTES", "MAX_DOCUMENT_CHARS", "MAX_FLOAT", "MAX_GROUPS", "MAX_INT_DIGITS", "MAX_NAME_CHARS",
    "MAX_TEXT_CHARS", "MECHANISMS", "MECHANISM_NORMS", "MechanismLog", "NEIGHBOURING", "NORMS", "PRIVACY_MODELS",
    "PaperStatement", "Reading", "ReleaseGroup", "SCHEMA_VERSION", "STRUCTURE_KINDS", "Sensitivity", "Structure",
    "check_choice", "check_text", "paper_statement_from_dict", "parse_json", "read_stream_text", "read_text", "tree_depth",
]
