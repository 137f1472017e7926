"""The one results schema of ``privacct run`` (summary.json), the reproductions and ``privacct report``
(report.json): privacct/schemas/results.schema.json (docs/report.md#results-schema)."""

from __future__ import annotations

import json
from pathlib import Path

#: The shipped JSON Schema file.
RESULTS_SCHEMA = Path(__file__).with_name("schemas") / "results.schema.json"


def results_schema() -> dict:
    """The results JSON Schema (draft 2020-12) as a dict."""
    return json.loads(RESULTS_SCHEMA.read_text(encoding="utf-8"))


def check_results(rows) -> None:
    """Validate each result row (a run summary, a reproduction row, a report row) against the
    schema's ``result`` definition; raises jsonschema.ValidationError (jsonschema: the test extra)."""
    import jsonschema

    schema = results_schema()
    validator = jsonschema.Draft202012Validator({"$defs": schema["$defs"], "$ref": "#/$defs/result"})
    for row in rows:
        validator.validate(row)


__all__ = ["RESULTS_SCHEMA", "check_results", "results_schema"]
