"""The JSON Schema says exactly what the parser accepts.

One corpus of documents (mutations of the shipped examples: wrong types, nulls, out-of-range and
boundary numbers, unknown and missing fields, long and surrogate strings, nesting around the
depth bound, the mechanism/norm pairing) goes to both ``jsonschema`` (draft 2020-12) and
:meth:`MechanismLog.from_json`; they must agree on accept/refuse. The rules a schema cannot
express (privacct.schema's docstring) are kept out of the corpus, and are tested on their own.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from privacct.errors import PrivacctError
from privacct.log import MechanismLog
from privacct.schema import log_schema

EXAMPLES = sorted((Path(__file__).parents[2] / "privacct" / "examples").glob("*.json"))
BASE = [json.loads(p.read_text()) for p in EXAMPLES]
VALIDATOR = jsonschema.Draft202012Validator(log_schema())

VALUES = st.one_of(
    st.sampled_from([None, True, False, 0, -1, 1, 1.0, 2.5, 0.5, 1e-300, 1.7976931348623157e308, 2**53, 2**53 + 1, 9.0e15,
                     10**308, 10**309, "", "x", "laplace", "gaussian", "symmetric-gaussian-matrix", "l1", "l2",
                     "frobenius-upper", "single", "repeated", "tree", "adaptive", "joint", "local", "add-remove",
                     "replace-one-user", "n" * 200, "n" * 201, "t" * 10_000, "t" * 10_001, "\ud800", "a\udfff", "\n\x1b",
                     [], {}, [1, "a", None], {"kind": "single"}, {"kind": "repeated", "count": 3}, {"kind": "tree"},
                     {"epsilon": 1.0}, {"epsilon": 1.0, "delta": 1.0}, {"epsilon": 0}, {"norm": "l1", "value": 1},
                     "factorized", "tree-honaker", "sqrt-toeplitz", "blt", {"kind": "factorized", "strategy": "tree", "leaves": 4},
                     {"kind": "factorized", "strategy": "blt", "leaves": 4}, {"buffers": [{"theta": 0.5, "omega": 1}]},
                     {"buffers": [[0.5, 1.0]]}, {"buffers": []}, [{"theta": 0.5, "omega": 2.0}], [[0.5, 2.0]], [0.5, 2.0],
                     {"theta": 1, "omega": 1}, {"theta": 0.5, "omega": 0}, {"theta": 0.5}, [{"theta": 0.1, "omega": 1}] * 9,
                     "sensitivities-added", "squares-added", "Sensitivities-Added", "Lemma 15",
                     {"equation": "Lemma 15", "composition": "sensitivities-added"}]),
    st.integers(-3, 3),
    st.floats(-2.0, 2.0),
)


def _nested(depth: int):
    v = 1
    for _ in range(depth):
        v = [v]
    return v


@st.composite
def documents(draw):
    doc = copy.deepcopy(draw(st.sampled_from(BASE)))
    for _ in range(draw(st.integers(1, 3))):
        node = doc
        path = []
        while isinstance(node, (dict, list)) and node and draw(st.booleans()):
            key = draw(st.sampled_from(sorted(node) if isinstance(node, dict) else list(range(len(node)))))
            path.append(key)
            node = node[key]
        parent = doc
        for k in path[:-1]:
            parent = parent[k]
        op = draw(st.sampled_from(["set", "set", "delete", "add", "nest"]))
        if not path:
            if op == "add":
                doc[draw(st.sampled_from(["extra", "parameters", "source", "neighbouring", "claim"]))] = copy.deepcopy(draw(VALUES))
            continue
        key = path[-1]
        if op == "set":
            parent[key] = copy.deepcopy(draw(VALUES))  # never share (and later mutate) the strategy's own objects
        elif op == "delete" and isinstance(parent, dict):
            del parent[key]
        elif op == "add" and isinstance(parent, dict):
            parent[draw(st.sampled_from(["extra", "kind", "count", "leaves", "equation", "dimension", "paper", "strategy", "params",
                                         "buffers", "theta", "omega", "composition", "composition_equation"]))] = \
                copy.deepcopy(draw(VALUES))
        elif op == "nest":
            params = doc.get("parameters") if isinstance(doc.get("parameters"), dict) else {}
            params["deep"] = _nested(draw(st.integers(28, 32)))
            doc["parameters"] = params
    return doc


def _unique_names(doc) -> bool:
    groups = doc.get("release_groups") if isinstance(doc, dict) else None
    if not isinstance(groups, list):
        return True
    names = [g.get("name") for g in groups if isinstance(g, dict) and isinstance(g.get("name"), str)]
    return len(names) == len(set(names))


@settings(max_examples=300, deadline=None)
@given(doc=documents())
def test_schema_and_parser_agree(doc):
    _agree(doc)


FACTORIZED = [b for b in BASE if any(g["structure"]["kind"] == "factorized" for g in b["release_groups"])]


@st.composite
def factorized_documents(draw):
    """Mutations inside a factorized structure (kind, strategy, leaves, params, buffers, theta, omega)."""
    doc = copy.deepcopy(draw(st.sampled_from(FACTORIZED)))
    group = draw(st.sampled_from(doc["release_groups"]))
    for _ in range(draw(st.integers(1, 3))):
        node = group["structure"]
        if draw(st.booleans()) and isinstance(node.get("params"), dict) and isinstance(node["params"].get("buffers"), list):
            node = node["params"]["buffers"]
            if node and draw(st.booleans()):
                node = node[draw(st.integers(0, len(node) - 1))]
        if isinstance(node, list):
            if draw(st.booleans()) or not node:
                node.append(copy.deepcopy(draw(VALUES)))
            else:
                node[draw(st.integers(0, len(node) - 1))] = copy.deepcopy(draw(VALUES))
            continue
        if not isinstance(node, dict):
            continue
        key = draw(st.sampled_from(["kind", "strategy", "leaves", "params", "count", "theta", "omega", "buffers", "extra"]))
        if draw(st.sampled_from(["set", "set", "delete"])) == "delete":
            node.pop(key, None)
        else:
            node[key] = copy.deepcopy(draw(VALUES))
    return doc


@settings(max_examples=400, deadline=None)
@given(doc=factorized_documents())
def test_schema_and_parser_agree_on_factorized_structures(doc):
    _agree(doc)


PAPER_KEYS = ["sensitivity", "per_user_count", "equation", "composition", "composition_equation", "extra"]


@st.composite
def paper_statement_documents(draw):
    """Mutations inside a release group's paper statement (the optional composition rule among its fields)."""
    doc = copy.deepcopy(draw(st.sampled_from(BASE)))
    group = draw(st.sampled_from(doc["release_groups"]))
    paper = group.setdefault("paper", {"equation": "Sec. 4.2", "sensitivity": 15.0, "per_user_count": 132.9,
                                       "composition": "sensitivities-added", "composition_equation": "Lemma 15"})
    for _ in range(draw(st.integers(1, 3))):
        if not isinstance(paper, dict):
            break
        key = draw(st.sampled_from(PAPER_KEYS))
        if draw(st.sampled_from(["set", "set", "delete"])) == "delete":
            paper.pop(key, None)
        else:
            paper[key] = copy.deepcopy(draw(VALUES))
    return doc


@settings(max_examples=300, deadline=None)
@given(doc=paper_statement_documents())
def test_schema_and_parser_agree_on_paper_statements(doc):
    _agree(doc)


def test_the_composition_rule_is_in_the_schema_and_round_trips():
    from privacct.log import COMPOSITION_RULES, PaperStatement

    d = copy.deepcopy(BASE[0])
    g = d["release_groups"][0]
    for rule in COMPOSITION_RULES:
        g["paper"] = {"equation": "Sec. 4.2", "composition": rule, "composition_equation": "Lemma 15"}
        assert VALIDATOR.is_valid(d)
        back = MechanismLog.from_dict(d).release_groups[0].paper
        assert back == PaperStatement(equation="Sec. 4.2", composition=rule, composition_equation="Lemma 15")
        assert back.to_dict() == g["paper"]
    g["paper"] = {"composition": "sensitivities-summed"}
    assert not VALIDATOR.is_valid(d)
    with pytest.raises(PrivacctError, match="composition"):
        MechanismLog.from_dict(d)


def test_seed004_log_with_its_composition_rule_is_valid_under_the_schema():
    from privacct.algorithms.registry import get_learner
    from privacct.algorithms.settings import as_paper_setting

    spec = get_learner("private-lsvi-ucb")
    log = spec.build_log(as_paper_setting(spec.paper_settings[0]).run_config(spec.name))
    d = json.loads(log.to_json())
    assert d["release_groups"][-1]["paper"]["composition"] == "sensitivities-added"
    assert VALIDATOR.is_valid(d) and MechanismLog.from_json(log.to_json()) == log


def test_factorized_example_is_in_the_corpus():
    assert FACTORIZED and any(g["structure"].get("strategy") == "blt" for b in FACTORIZED for g in b["release_groups"])


def _agree(doc):
    if not _unique_names(doc):  # not expressible in JSON Schema (tested below)
        return
    text = json.dumps(doc)
    schema_ok = VALIDATOR.is_valid(json.loads(text))
    try:
        MechanismLog.from_json(text)
        parser_ok, why = True, ""
    except PrivacctError as e:
        parser_ok, why = False, str(e)
    assert schema_ok == parser_ok, (schema_ok, why, [e.message[:200] for e in VALIDATOR.iter_errors(json.loads(text))][:3])


def test_the_examples_and_the_depth_boundary():
    d = copy.deepcopy(BASE[0])
    for depth, ok in ((30, True), (31, False)):
        d["parameters"] = {"deep": _nested(depth)}  # log (1) > parameters (2) > 30 more levels = 32
        text = json.dumps(d)
        assert VALIDATOR.is_valid(json.loads(text)) is ok
        if ok:
            MechanismLog.from_json(text)
        else:
            with pytest.raises(PrivacctError, match="deeper than 32"):
                MechanismLog.from_json(text)


def test_rules_beyond_the_schema_are_enforced_by_the_parser():
    d = copy.deepcopy(BASE[0])
    d["release_groups"] = [d["release_groups"][0], copy.deepcopy(d["release_groups"][0])]
    assert VALIDATOR.is_valid(d)  # the schema cannot say "unique names"
    with pytest.raises(PrivacctError, match="unique"):
        MechanismLog.from_dict(d)
    text = json.dumps(BASE[0]).replace('"name"', '"name": "dup", "name"', 1)
    with pytest.raises(PrivacctError, match="duplicate key"):
        MechanismLog.from_json(text)
    with pytest.raises(PrivacctError, match="at most 4194304 characters"):
        MechanismLog.from_json(" " * (2**22 + 1))


def test_mechanism_norm_pairing_is_in_the_schema():
    d = copy.deepcopy(BASE[0])
    g = d["release_groups"][0]
    g["sensitivity"]["norm"] = "l2" if g["mechanism"] == "laplace" else "l1"
    assert not VALIDATOR.is_valid(d)
    with pytest.raises(PrivacctError, match="sensitivity.norm"):
        MechanismLog.from_dict(d)
