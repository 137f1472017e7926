"""The one results schema (privacct/schemas/results.schema.json) is shipped, is a valid JSON Schema,
and ``privacct run``'s summary.json follows it (report.json: tests/audits/test_report.py)."""

import json

import pytest

from privacct.results import RESULTS_SCHEMA, results_schema


def test_schema_file_is_shipped_and_valid():
    import jsonschema

    assert RESULTS_SCHEMA.is_file()
    jsonschema.Draft202012Validator.check_schema(results_schema())


@pytest.mark.parametrize("privacy", ["jdp", "none"])
def test_run_summary_follows_the_results_schema(tmp_path, privacy):
    import jsonschema

    from privacct.algorithms.contract import RunConfig
    from privacct.algorithms.runner import run_experiment

    cfg = RunConfig("ucb-vi", privacy=privacy, epsilon=1.0, delta=0.0, episodes=5, horizon=3)
    run_experiment(cfg, n_seeds=2, out_dir=tmp_path, progress=False)
    summary = json.loads((tmp_path / "summary.json").read_text())
    jsonschema.Draft202012Validator(results_schema()).validate(summary)
    assert (summary["accounted_epsilon"] is None) == (privacy == "none")


def test_no_output_uses_an_old_key_name():
    from pathlib import Path

    root = Path(__file__).resolve().parents[2]
    for folder in ("privacct", "algorithms", "audits"):
        for f in (root / folder).rglob("*.py"):
            text = f.read_text(encoding="utf-8")
            for old in ('"certified_epsilon"', '"epsilon_claim"'):
                assert old not in text, (f, old)
