"""The JSON Schema (draft 2020-12) of a mechanism log, schema version 1 (``privacct schema``).

The schema says exactly what :meth:`privacct.log.MechanismLog.from_json` accepts, built from the
same constants (``tests/privacct/test_schema_agreement.py`` feeds one corpus to both and checks
they agree). Every field has one type, every object refuses unknown fields and null optional
fields, strings have length bounds and no lone surrogates, numbers stay within the float range,
counts within [1, 2^53], parameters nest at most :data:`privacct.log.MAX_DEPTH` levels (counting
from the log object), and the sensitivity norm must suit the mechanism (``if``/``then``).

Rules a JSON Schema cannot express, which the parser alone enforces:

* duplicate keys in an object (JSON Schema sees the parsed value, where a key appears once);
* the size of the document (:data:`privacct.log.MAX_DOCUMENT_CHARS` characters);
* the non-JSON constants ``NaN``, ``Infinity``, ``-Infinity`` (not JSON at all);
* release group names unique within a log (``uniqueItems`` compares whole items only);
* readings: names unique within a log, at most one override per group in a reading, every
  override naming a release group of the log, and an overridden sensitivity's norm suiting that
  group's mechanism (cross-references between parts of the document).
"""

from __future__ import annotations

from .counters.registry import strategies
from .errors import MAX_COUNT
from .log import (COMPOSITION_RULES, MAX_BLT_BUFFERS, MAX_DEPTH, MAX_DOCUMENT_CHARS, MAX_FLOAT, MAX_GROUPS, MAX_NAME_CHARS,
                  MAX_TEXT_CHARS, MECHANISM_NORMS, MECHANISMS, NEIGHBOURING, NORMS, PRIVACY_MODELS, SCHEMA_VERSION)
from .log_readings import MAX_READINGS

_NO_SURROGATE = "^[^\\ud800-\\udfff]*$"
_POS = {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_FLOAT}
_COUNT = {"type": "integer", "minimum": 1, "maximum": MAX_COUNT}
_TEXT = {"type": "string", "maxLength": MAX_TEXT_CHARS, "pattern": _NO_SURROGATE}
_NAME = {"type": "string", "minLength": 1, "maxLength": MAX_NAME_CHARS, "pattern": _NO_SURROGATE}
_KEY = {"maxLength": MAX_NAME_CHARS, "pattern": _NO_SURROGATE}

# Levels a parameter value may add: the log object is level 1, "parameters" level 2.
PARAMETER_LEVELS = MAX_DEPTH - 2


def _json_value_defs() -> dict:
    """value0 (scalars) ... valueN (containers nested at most N levels): bounded JSON values."""
    scalar = [{"type": "null"}, {"type": "boolean"}, {"type": "number", "minimum": -MAX_FLOAT, "maximum": MAX_FLOAT}, _TEXT]
    defs = {"value0": {"anyOf": scalar}}
    for n in range(1, PARAMETER_LEVELS + 1):
        inner = {"$ref": f"#/$defs/value{n - 1}"}
        defs[f"value{n}"] = {"anyOf": scalar + [
            {"type": "array", "items": inner},
            {"type": "object", "propertyNames": _KEY, "additionalProperties": inner},
        ]}
    return defs


# ---- factorized structure (docs/counters.md) -----------------------------------------------------
def _factorized_structures() -> list[dict]:
    """kind factorized: a strategy and K leaves; a strategy that takes buffers (``blt``) also its buffers (theta in
    (0, 1), omega > 0), one branch each. The strategies are the registry's (privacct.counters.registry)."""
    registered = strategies()
    plain = [s.name for s in registered if not s.takes_buffers]
    buffer = {"type": "object", "properties": {"theta": {"type": "number", "exclusiveMinimum": 0, "exclusiveMaximum": 1},
                                               "omega": _POS},
              "required": ["theta", "omega"], "additionalProperties": False}
    params = {"type": "object",
              "properties": {"buffers": {"type": "array", "minItems": 1, "maxItems": MAX_BLT_BUFFERS, "items": buffer}},
              "required": ["buffers"], "additionalProperties": False}
    return [
        {"type": "object", "properties": {"kind": {"const": "factorized"}, "strategy": {"enum": plain}, "leaves": _COUNT},
         "required": ["kind", "strategy", "leaves"], "additionalProperties": False,
         "description": "a continual counter over K steps released as L (R x + z); the per-user sensitivity multiplier "
                        "(largest column norm of R) is derived from the strategy, never typed in"},
    ] + [
        {"type": "object", "properties": {"kind": {"const": "factorized"}, "strategy": {"const": s.name}, "leaves": _COUNT,
                                          "params": params},
         "required": ["kind", "strategy", "leaves", "params"], "additionalProperties": False,
         "description": s.summary}
        for s in registered if s.takes_buffers
    ]
# ---- end of the factorized structure ------------------------------------------------------------


def log_schema() -> dict:
    structure = {
        "oneOf": [
            {"type": "object", "properties": {"kind": {"const": "single"}}, "required": ["kind"], "additionalProperties": False},
            {"type": "object", "properties": {"kind": {"const": "repeated"}, "count": _COUNT}, "required": ["kind", "count"],
             "additionalProperties": False},
            {"type": "object", "properties": {"kind": {"const": "tree"}, "leaves": _COUNT}, "required": ["kind", "leaves"],
             "additionalProperties": False,
             "description": "binary counter over K leaves; one user is in floor(log2 K)+1 nodes (derived, never typed in)"},
            {"type": "object", "properties": {"kind": {"const": "adaptive"}, "max_count": _COUNT}, "required": ["kind", "max_count"],
             "additionalProperties": False,
             "description": "low-switching releases; max_count is a hard cap that must hold surely"},
        ] + _factorized_structures()
    }
    norm_rules = [
        {"if": {"properties": {"mechanism": {"const": mech}}, "required": ["mechanism"]},
         "then": {"properties": {"sensitivity": {"properties": {"norm": {"enum": list(norms)}}}}}}
        for mech, norms in MECHANISM_NORMS.items()
    ]
    group = {
        "type": "object",
        "properties": {
            "name": _NAME,
            "mechanism": {"enum": list(MECHANISMS)},
            "noise_scale": {**_POS, "description": "Laplace b or Gaussian sigma, per coordinate"},
            "sensitivity": {
                "type": "object",
                "properties": {
                    "norm": {"enum": list(NORMS)},
                    "value": {**_POS, "description": "joint sensitivity of one release under the log's neighbouring relation"},
                    "derivation": _TEXT,
                },
                "required": ["norm", "value"],
                "additionalProperties": False,
            },
            "structure": structure,
            "dimension": {**_COUNT, "description": "independent noise values in one release"},
            "description": _TEXT,
            "paper": {
                "type": "object",
                "properties": {"sensitivity": _POS, "per_user_count": _POS, "equation": _TEXT,
                               "composition": {"enum": list(COMPOSITION_RULES),
                                               "description": "how the paper's proof composes the group's releases: "
                                                              "squares-added (zCDP, sum_k Delta_k^2 / (2 sigma^2)) or "
                                                              "sensitivities-added (sum_k Delta_k with the Gaussian variance "
                                                              "linear in it, sigma^2 = Delta / rho: the paper's cost is "
                                                              "sum_k Delta_k / sigma^2); optional"},
                               "composition_equation": {**_TEXT, "description": "where the paper prints that rule"}},
                "additionalProperties": False,
            },
        },
        "required": ["name", "mechanism", "noise_scale", "sensitivity", "structure"],
        "additionalProperties": False,
        "allOf": norm_rules,
        "description": "the mechanism/norm pairing: laplace needs l1, gaussian l2, symmetric-gaussian-matrix "
                       "frobenius-upper or l2; group names must be unique within a log (not expressible here)",
    }
    # ---- readings (the group's own sensitivity, structure and paper statement schemas) ----
    override = {
        "type": "object",
        "properties": {"group": _NAME, "noise_scale": _POS, "sensitivity": group["properties"]["sensitivity"],
                       "structure": structure, "paper": group["properties"]["paper"]},
        "required": ["group"],
        "minProperties": 2,
        "additionalProperties": False,
        "description": "what the reading changes in one release group (the group must exist in the log)",
    }
    reading = {
        "type": "object",
        "properties": {
            "name": _NAME,
            "description": _TEXT,
            "supported_by": {**_TEXT, "description": "non-empty exactly when the paper's own privacy proof supports "
                                                     "this reading: the equations and why"},
            "overrides": {"type": "array", "maxItems": MAX_GROUPS, "items": override},
        },
        "required": ["name"],
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://privacct.invalid/schema/mechanism-log/v1",
        "title": "privacct mechanism log",
        "description": "Also refused by the parser, beyond this schema: duplicate object keys, documents over "
                       f"{MAX_DOCUMENT_CHARS} characters, NaN/Infinity, and duplicate release group names.",
        "type": "object",
        "properties": {
            "schema_version": {"const": SCHEMA_VERSION},
            "name": _NAME,
            "privacy_model": {"enum": list(PRIVACY_MODELS)},
            "neighbouring": {"enum": list(NEIGHBOURING), "default": "replace-one-user"},
            "parameters": {"type": "object", "propertyNames": _KEY,
                           "additionalProperties": {"$ref": f"#/$defs/value{PARAMETER_LEVELS}"}},
            "source": _TEXT,
            "claim": {
                "oneOf": [
                    {"type": "null"},
                    {
                        "type": "object",
                        "properties": {"epsilon": _POS, "delta": {"type": "number", "minimum": 0, "exclusiveMaximum": 1}},
                        "required": ["epsilon"],
                        "additionalProperties": False,
                    },
                ]
            },
            "release_groups": {"type": "array", "minItems": 1, "maxItems": MAX_GROUPS, "items": group},
            "readings": {"type": "array", "maxItems": MAX_READINGS, "items": reading,
                         "description": "named readings of an ambiguous paper setting (optional)"},
        },
        "required": ["schema_version", "name", "privacy_model", "release_groups"],
        "additionalProperties": False,
        "$defs": _json_value_defs(),
    }
