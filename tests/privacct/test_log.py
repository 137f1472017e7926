"""Mechanism logs: JSON round trip, validation errors naming the field, derived tree depth."""

import json
import math
from pathlib import Path

import jsonschema
import pytest

from privacct.errors import PrivacctError
from privacct.log import (Claim, MechanismLog, PaperStatement, ReleaseGroup, Sensitivity, Structure,
                          tree_depth)
from privacct.schema import log_schema

EXAMPLES = sorted((Path(__file__).parents[2] / "privacct" / "examples").glob("*.json"))


def _log(**kw):
    g = ReleaseGroup("g", "gaussian", 2.0, Sensitivity("l2", 1.0, "why"), Structure.tree(100),
                     paper=PaperStatement(0.5, 4.6, "eq. (1)"))
    base = dict(name="x", privacy_model="joint", release_groups=(g,), parameters={"K": 100, "grid": [1, 2]},
                claim=Claim(1.0, 1e-6))
    base.update(kw)
    return MechanismLog(**base)


@pytest.mark.parametrize("leaves,depth", [(1, 1), (2, 2), (3, 2), (7, 3), (8, 4), (1000, 10), (1024, 11), (20000, 15), (10**5, 17), (10**6, 20)])
def test_tree_depth_is_floor_log2_plus_one(leaves, depth):
    assert tree_depth(leaves) == depth == math.floor(math.log2(leaves)) + 1


def test_json_round_trip_is_exact():
    log = _log()
    again = MechanismLog.from_json(log.to_json())
    assert again == log
    assert hash(again) == hash(log)
    assert again.to_json() == log.to_json()
    assert again.params == {"K": 100, "grid": [1, 2]}


@pytest.mark.parametrize("path", EXAMPLES, ids=[p.name for p in EXAMPLES])
def test_examples_load_round_trip_and_match_schema(path):
    data = json.loads(path.read_text())
    jsonschema.validate(data, log_schema())
    log = MechanismLog.from_dict(data)
    assert MechanismLog.from_json(log.to_json()) == log


def test_examples_cover_every_mechanism_and_both_models():
    logs = [MechanismLog.load(p) for p in EXAMPLES]
    mechs = {g.mechanism for lg in logs for g in lg.release_groups}
    assert mechs == {"laplace", "gaussian", "symmetric-gaussian-matrix"}
    assert {lg.privacy_model for lg in logs} == {"joint", "local"}
    assert any(g.structure.kind == "tree" for lg in logs if lg.privacy_model == "joint" for g in lg.release_groups)


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d["release_groups"][0].update(noise_scale=0), "noise_scale"),
    (lambda d: d["release_groups"][0].update(noise_scale=-1.0), "noise_scale"),
    (lambda d: d["release_groups"][0]["sensitivity"].update(value=0), "sensitivity.value"),
    (lambda d: d["release_groups"][0].update(mechanism="cauchy"), "mechanism"),
    (lambda d: d["release_groups"][0].update(structure={"kind": "forest"}), "structure.kind"),
    (lambda d: d["release_groups"][0].update(structure={"kind": "tree"}), "structure.leaves"),
    (lambda d: d["release_groups"][0].update(structure={"kind": "tree", "leaves": 10, "count": 3}), "count"),
    (lambda d: d["release_groups"][0].update(structure={"kind": "repeated", "count": 0}), "count"),
    (lambda d: d["release_groups"][0]["sensitivity"].update(norm="l1"), "sensitivity.norm"),
    (lambda d: d.update(claim={"epsilon": 0, "delta": 0.1}), "claim.epsilon"),
    (lambda d: d.update(claim={"epsilon": 1, "delta": 1.0}), "claim.delta"),
    (lambda d: d.update(privacy_model="central"), "privacy_model"),
    (lambda d: d.update(neighbouring="swap"), "neighbouring"),
    (lambda d: d.pop("release_groups"), "release_groups"),
    (lambda d: d.update(release_groups=[]), "release_groups"),
    (lambda d: d.update(extra=1), "extra"),
    (lambda d: d.update(schema_version=2), "schema_version"),
])
def test_validation_errors_name_the_field(mutate, field):
    d = _log().to_dict()
    mutate(d)
    with pytest.raises(PrivacctError, match=field.replace(".", r"\.")):
        MechanismLog.from_dict(d)


def test_non_json_and_non_finite_numbers_are_refused():
    with pytest.raises(PrivacctError, match="not a JSON document"):
        MechanismLog.from_json("{nope")
    text = _log().to_json().replace('"noise_scale": 2.0', '"noise_scale": NaN')
    with pytest.raises(PrivacctError, match="NaN"):
        MechanismLog.from_json(text)


def test_save_writes_nothing_on_failure(tmp_path):
    with pytest.raises(PrivacctError):
        _log(parameters={"bad": float("inf")})
    assert list(tmp_path.iterdir()) == []


def test_per_user_count_is_derived_never_typed():
    assert Structure.tree(20000).per_user_count() == 15
    assert Structure.single().per_user_count() == 1
    assert Structure.repeated(7).per_user_count() == 7
    assert Structure.adaptive(12).per_user_count() == 12
    with pytest.raises(PrivacctError, match="count"):
        Structure.from_dict({"kind": "tree", "leaves": 8, "count": 4})


# --------------------------------------------------------------------------- strict parsing
def _text(mutate=None, base=None):
    d = (base or _log()).to_dict()
    if mutate:
        mutate(d)
    return json.dumps(d)


@pytest.mark.parametrize("text,field", [
    ('{"a": 1, "a": 2}', "duplicate key 'a'"),
    (_text().replace('"name": "x"', '"name": "x", "name": "y"', 1), "duplicate key 'name'"),
    ("[" * 100_000 + "]" * 100_000, "nested deeper than 32"),
    ('{"p": ' + "[" * 40 + "]" * 40 + "}", "nested deeper than 32"),
    (_text().replace('"noise_scale": 2.0', '"noise_scale": 1e999'), "beyond the floating-point range"),
    (_text().replace('"noise_scale": 2.0', '"noise_scale": Infinity'), "non-finite number Infinity"),
    (_text().replace('"noise_scale": 2.0', '"noise_scale": ' + "9" * 5000), "integer literal of 5000 digits"),
    (_text().replace('"name": "x"', '"name": "\\ud800"'), "lone surrogate"),
    (_text().replace('"K": 100', '"K": "\\udfffx"'), "lone surrogate"),
])
def test_strict_json_refusals_are_one_line(text, field):
    with pytest.raises(PrivacctError, match=field) as e:
        MechanismLog.from_json(text)
    assert "\n" not in str(e.value)


@pytest.mark.parametrize("mutate,field", [
    (lambda d: d.update(source=5), "source must be a string"),
    (lambda d: d.update(source=None), "source must not be null"),
    (lambda d: d["release_groups"][0].update(description=["x"]), "description must be a string"),
    (lambda d: d["release_groups"][0].update(description=None), "description must not be null"),
    (lambda d: d.update(schema_version=True), "schema_version must be 1"),
    (lambda d: d.update(schema_version="1"), "schema_version must be 1"),
    (lambda d: d["release_groups"][0].update(dimension=True), "dimension must be an integer"),
    (lambda d: d["release_groups"][0].update(dimension=2.5), "dimension must be an integer"),
    (lambda d: d["release_groups"][0].update(dimension="3"), "dimension must be an integer"),
    (lambda d: d["release_groups"][0].update(dimension=2**53 + 1), "dimension must be an integer in \\[1, 9007199254740992\\]"),
    (lambda d: d["release_groups"][0]["paper"].update(equation=7), "paper.equation must be a string"),
    (lambda d: d["release_groups"][0]["paper"].update(sensitivity="2"), "paper.sensitivity must be a number"),
    (lambda d: d["release_groups"][0]["paper"].update(per_user_count=False), "paper.per_user_count must be a number"),
    (lambda d: d["release_groups"][0].update(paper=None), "paper must not be null"),
    (lambda d: d["release_groups"][0].update(paper=[]), "paper must be an object"),
    (lambda d: d["release_groups"][0].update(noise_scale=True), "noise_scale must be a number"),
    (lambda d: d["release_groups"][0].update(noise_scale=10**320), "noise_scale must be a finite number"),
    (lambda d: d["release_groups"][0].update(structure={"kind": "repeated", "count": 10**30}), "structure.count must be an integer"),
    (lambda d: d["release_groups"][0].update(structure={"kind": "repeated", "count": None}), "count must not be null"),
    (lambda d: d.update(name="n" * 201), "name must be a non-empty string of at most 200"),
    (lambda d: d["release_groups"][0].update(name=""), "name must be a non-empty string"),
    (lambda d: d["release_groups"][0].update(mechanism=["laplace"]), "mechanism must be one of"),
    (lambda d: d.update(release_groups=[d["release_groups"][0]] * 1001), "at most 1000|1 to 1000"),
    (lambda d: d.update(parameters={"k" * 201: 1}), "parameters key must be a non-empty string|at most 200"),
    (lambda d: d.update(claim={"epsilon": 1, "delta": 1e-6, "extra": 0}), "claim: unknown field"),
])
def test_every_field_is_typed(mutate, field):
    with pytest.raises(PrivacctError, match=field):
        MechanismLog.from_json(_text(mutate))


def test_an_integral_float_is_an_integer_and_unicode_names_are_kept():
    d = _log().to_dict()
    d["release_groups"][0]["structure"] = {"kind": "tree", "leaves": 100.0}
    d["name"] = "caf\u00e9 \u65e5\u672c \u2028 \n"
    log = MechanismLog.from_json(json.dumps(d))
    assert log.release_groups[0].structure.leaves == 100 and isinstance(log.release_groups[0].structure.leaves, int)
    assert log.name == d["name"] and MechanismLog.from_json(log.to_json()) == log
    assert log.to_json().isascii()


def test_missing_and_unreadable_files_name_the_path(tmp_path):
    with pytest.raises(PrivacctError, match="cannot read log file '.*nope.json': no such file"):
        MechanismLog.load(tmp_path / "nope.json")
    with pytest.raises(PrivacctError, match="it is a directory"):
        MechanismLog.load(tmp_path)
    bad = tmp_path / "latin1.json"
    bad.write_bytes(b'{"name": "caf\xe9"}')
    with pytest.raises(PrivacctError, match="not UTF-8 text"):
        MechanismLog.load(bad)


# ---- factorized structure (docs/counters.md) ----------------------------------------------------
@pytest.mark.parametrize("d,match", [
    ({"kind": "factorized", "leaves": 8}, "structure.strategy is required"),
    ({"kind": "factorized", "strategy": "dyadic", "leaves": 8}, "structure.strategy must be one of"),
    ({"kind": "factorized", "strategy": "tree"}, "structure.leaves is required"),
    ({"kind": "factorized", "strategy": "blt", "leaves": 8}, "structure.params is required"),
    ({"kind": "factorized", "strategy": "tree", "leaves": 8, "params": {"buffers": [{"theta": 0.5, "omega": 1}]}},
     "params is not allowed"),
    ({"kind": "tree", "leaves": 8, "strategy": "tree"}, "strategy is not allowed for kind 'tree'"),
    ({"kind": "factorized", "strategy": "blt", "leaves": 8, "params": {"buffers": [{"theta": 1.0, "omega": 1}]}},
     r"theta must be in \(0, 1\)"),
    ({"kind": "factorized", "strategy": "blt", "leaves": 8, "params": {"buffers": [[0.5, 1.0]]}}, r"buffers\[0\] must be an object"),
    ({"kind": "factorized", "strategy": "blt", "leaves": 8, "params": {"buffers": [{"theta": 0.5, "omega": 1}] * 9}},
     "1 to 8 buffers"),
])
def test_factorized_structure_refusals_name_the_field(d, match):
    with pytest.raises(PrivacctError, match=match):
        Structure.from_dict(d)


def test_factorized_structure_round_trip_and_derived_counts():
    blt = Structure.factorized("blt", 100, {"buffers": [{"theta": 0.9, "omega": 0.25}]})
    for s in (Structure.factorized("tree", 100), Structure.factorized("tree-honaker", 100),
              Structure.factorized("sqrt-toeplitz", 100), blt):
        assert Structure.from_dict(s.to_dict()) == s
    assert Structure.factorized("tree-honaker", 100).per_user_count() == 7          # floor(log2 100) + 1 nodes
    assert blt.per_user_count() == 1                                              # one release R x + z
    g = ReleaseGroup("g", "gaussian", 2.0, Sensitivity("l2", 3.0), blt)
    col = [1.0] + [0.25 * 0.9 ** (k - 1) for k in range(1, 100)]
    exact = math.sqrt(math.fsum(c * c for c in col))
    assert exact <= g.sensitivity_multiplier <= exact * (1 + 1e-5)
    assert g.ratio == pytest.approx(3.0 * exact / 2.0, rel=1e-5)
