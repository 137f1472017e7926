"""The JSON Schema (draft 2020-12) of a mechanism log, schema version 1 (``privacct schema``).

The schema states the shape and ranges; :mod:`privacct.log` enforces the same rules (plus the
cross-field ones a schema cannot say well, e.g. which sensitivity norm each mechanism needs) and
is what the toolkit trusts.
"""

from __future__ import annotations

from .log import MECHANISMS, NEIGHBOURING, NORMS, PRIVACY_MODELS, SCHEMA_VERSION

_POS = {"type": "number", "exclusiveMinimum": 0}
_COUNT = {"type": "integer", "minimum": 1}


def log_schema() -> dict:
    structure = {
        "oneOf": [
            {"type": "object", "properties": {"kind": {"const": "single"}}, "required": ["kind"], "additionalProperties": False},
            {"type": "object", "properties": {"kind": {"const": "repeated"}, "count": _COUNT}, "required": ["kind", "count"], "additionalProperties": False},
            {"type": "object", "properties": {"kind": {"const": "tree"}, "leaves": _COUNT}, "required": ["kind", "leaves"], "additionalProperties": False,
             "description": "binary counter over K leaves; one user is in floor(log2 K)+1 nodes (derived, never typed in)"},
            {"type": "object", "properties": {"kind": {"const": "adaptive"}, "max_count": _COUNT}, "required": ["kind", "max_count"], "additionalProperties": False,
             "description": "low-switching releases; max_count is a hard cap that must hold surely"},
        ]
    }
    group = {
        "type": "object",
        "properties": {
            "name": {"type": "string", "minLength": 1},
            "mechanism": {"enum": list(MECHANISMS)},
            "noise_scale": {**_POS, "description": "Laplace b or Gaussian sigma, per coordinate"},
            "sensitivity": {
                "type": "object",
                "properties": {
                    "norm": {"enum": list(NORMS)},
                    "value": {**_POS, "description": "joint sensitivity of one release under the log's neighbouring relation"},
                    "derivation": {"type": "string"},
                },
                "required": ["norm", "value"],
                "additionalProperties": False,
            },
            "structure": structure,
            "dimension": _COUNT,
            "description": {"type": "string"},
            "paper": {
                "type": "object",
                "properties": {"sensitivity": _POS, "per_user_count": _POS, "equation": {"type": "string"}},
                "additionalProperties": False,
            },
        },
        "required": ["name", "mechanism", "noise_scale", "sensitivity", "structure"],
        "additionalProperties": False,
    }
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": "https://privacct.invalid/schema/mechanism-log/v1",
        "title": "privacct mechanism log",
        "type": "object",
        "properties": {
            "schema_version": {"const": SCHEMA_VERSION},
            "name": {"type": "string", "minLength": 1},
            "privacy_model": {"enum": list(PRIVACY_MODELS)},
            "neighbouring": {"enum": list(NEIGHBOURING), "default": "replace-one-user"},
            "parameters": {"type": "object"},
            "source": {"type": "string"},
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
            "release_groups": {"type": "array", "minItems": 1, "items": group},
        },
        "required": ["schema_version", "name", "privacy_model", "release_groups"],
        "additionalProperties": False,
    }
