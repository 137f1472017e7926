"""The strategy registry (issue 22 item 3): every list of names derives from it, and a strategy registered in a test
(conftest.py's ``prefix-noise``, one file's worth) appears in each of them, in the log schema, the CLI's choices, the
comparisons and the accountants, with no other edit; unregistered, it is gone from all of them.

The CLI's choices are not captured at import: ``privacct.cli.STRATEGY_CHOICES`` and the learners' ``COUNTERS`` are
the registry's live view (:data:`privacct.counters.registry.NAMES`), and each parser reads it (``choices=list(...)``)
when it is built, so a parser built after a registration offers the new name."""

from __future__ import annotations

import argparse
import io
import json
import math

import numpy as np
import pytest

import privacct.cli as cli
from privacct.calibrate import calibrate_noise
from privacct.counters.base import CounterStrategy
from privacct.counters.compare import candidates_for, compare
from privacct.counters.counter import FactorizedCounter
from privacct.counters.registry import NAMES, get_strategy, register, strategies, strategy_names, unregister
from privacct.counters.strategies import STRATEGIES, Strategy, column_norm
from privacct.errors import PrivacctError
from privacct.log import FACTORIZED_STRATEGIES, MechanismLog, ReleaseGroup, Sensitivity, Structure
from privacct.rng import spawn_generators
from privacct.schema import log_schema

BUILTIN = ("tree", "tree-honaker", "sqrt-toeplitz", "blt")   # the order of every report, pinned
TOY = "prefix-noise"


def _schema_names(schema) -> list[str]:
    """The strategies the schema's factorized-structure branches allow."""
    names: list[str] = []

    def walk(v):
        if isinstance(v, dict):
            if v.get("properties", {}).get("kind") == {"const": "factorized"}:
                s = v["properties"]["strategy"]
                names.extend(s.get("enum", [s.get("const")]))
            for x in v.values():
                walk(x)
        elif isinstance(v, list):
            for x in v:
                walk(x)
    walk(schema)
    return sorted(set(names))          # the structure appears in release groups and in readings


def _choices(parser, command: str, option: str):
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices[command]
    return next(a for a in sub._actions if option in a.option_strings).choices


def _account(*args) -> dict:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(["account", "--mechanism", "gaussian", "--noise-scale", "2", "--delta", "1e-5", "--json", *args],
                   stdout=out, stderr=err)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue())


def test_builtin_names_in_order_and_every_list_is_the_registry():
    assert strategy_names() == BUILTIN
    assert FACTORIZED_STRATEGIES is NAMES and STRATEGIES is NAMES and cli.STRATEGY_CHOICES is NAMES
    assert NAMES == BUILTIN and list(NAMES) == list(BUILTIN) and NAMES[1] == "tree-honaker" and len(NAMES) == 4
    for name in BUILTIN:
        impl = get_strategy(name)
        assert isinstance(impl, CounterStrategy) and impl.name == name and impl.summary
    assert [s.name for s in strategies()] == list(BUILTIN)
    assert _schema_names(log_schema()) == sorted(BUILTIN)
    assert candidates_for("laplace") == ("tree", "tree-honaker")
    assert candidates_for("gaussian") == candidates_for("symmetric-gaussian-matrix") == ("tree", "tree-honaker", "blt")
    assert [n for n in BUILTIN if get_strategy(n).takes_buffers] == ["blt"]
    assert [n for n in BUILTIN if Strategy(n).step_cost_growth] == ["sqrt-toeplitz"]
    assert [n for n in BUILTIN if Strategy(n).is_binary_tree] == ["tree"] and Strategy.of(Structure.tree(5)).is_binary_tree
    assert [n for n in BUILTIN if get_strategy(n).draws_per_step != 1.0] == ["tree-honaker"]


def test_a_registered_strategy_is_in_every_list_without_other_edits(toy):
    from privacct.algorithms.tabular import learner as tabular

    names = BUILTIN + (TOY,)
    assert strategy_names() == names and NAMES == names and tuple(FACTORIZED_STRATEGIES) == names
    assert TOY in STRATEGIES and TOY in tabular.COUNTERS          # names bound at import follow: a live view
    parser = cli.build_parser()                                   # choices are read when the parser is built
    assert TOY in _choices(parser, "calibrate", "--strategy") and TOY in _choices(parser, "account", "--strategy")
    assert TOY in _choices(parser, "run", "--counter")
    assert _schema_names(log_schema()) == sorted(names)
    assert TOY not in candidates_for("gaussian")                  # tight chooses among a strategy only if it says so


def test_a_registered_strategy_is_accounted_calibrated_and_run(toy):
    K = 16
    l2 = math.nextafter(math.sqrt(K), math.inf)                   # sqrt(K), raised one ulp as every l2 norm is
    s = Structure.factorized(TOY, K)
    assert s.per_user_count() == 1 and column_norm(s, "l2") == l2 and column_norm(s, "l1") == K
    log = MechanismLog("t", "joint", (ReleaseGroup("g", "gaussian", 2.0, Sensitivity("l2", 1.0), s),))
    assert MechanismLog.from_json(log.to_json()) == log and log.release_groups[0].ratio == l2 / 2.0
    # one release at multiplier ||column 1 of R||: the accountants' figure is a single release of that sensitivity
    assert _account("--sensitivity", "1", "--counter-leaves", str(K), "--strategy", TOY)["epsilon"] == \
        _account("--sensitivity", repr(l2), "--count", "1")["epsilon"]
    figs = {f.strategy: f for f in compare(mechanism="gaussian", sensitivity=1.0, leaves=K, epsilon=1.0, delta=1e-5)}
    assert list(figs) == [*BUILTIN, TOY]
    single = calibrate_noise(mechanism="gaussian", sensitivity=l2, structure=Structure.single(), epsilon=1.0,
                             delta=1e-5)[0]
    assert figs[TOY].column_norm == l2 and figs[TOY].noise_scale == pytest.approx(single, rel=1e-12)
    c = FactorizedCounter(2, strategy=TOY, leaves=K, mechanism="gaussian", scale=1.0, rngs=spawn_generators(0, 1))
    for _ in range(K):
        c.add(np.ones((1, 2)))
    assert c.noise_variance() == 1.0 and c.exact_sum()[0, 0] == K


def test_an_unregistered_strategy_is_gone(toy_class):
    impl = register(toy_class())
    try:
        assert TOY in FACTORIZED_STRATEGIES and get_strategy(TOY) is impl
    finally:
        unregister(TOY)
    assert strategy_names() == BUILTIN and TOY not in FACTORIZED_STRATEGIES and TOY not in STRATEGIES
    assert TOY not in _choices(cli.build_parser(plugins=False), "calibrate", "--strategy")
    assert _schema_names(log_schema()) == sorted(BUILTIN)
    with pytest.raises(PrivacctError, match="structure.strategy must be one of tree, tree-honaker, sqrt-toeplitz, blt"):
        Structure.factorized(TOY, 4)
    with pytest.raises(PrivacctError, match="strategy must be one of"):
        get_strategy(TOY)


def test_registration_is_checked(toy_class, registered):
    registered(toy_class())
    with pytest.raises(PrivacctError, match="already registered"):
        register(toy_class())
    for name in ("blt", "", " spaced", "a\nb", "x" * 201, 7):
        bad = type("Bad", (toy_class,), {"name": name})
        with pytest.raises(PrivacctError):
            register(bad())
    with pytest.raises(PrivacctError, match="CounterStrategy instance"):
        register("tree")                                          # type: ignore[arg-type]
    for attr, value in (("uniform", 1), ("step_cost_growth", True), ("step_cost_growth", 2), ("draws_per_step", 0.5),
                        ("summary", None)):
        bad = type("Bad", (toy_class,), {"name": "bad", attr: value})
        with pytest.raises(PrivacctError):
            register(bad())
    with pytest.raises(TypeError):                                # an abstract method left out: not instantiable
        type("Half", (CounterStrategy,), {"name": "half", "summary": "", "uniform": False})()
    with pytest.raises(PrivacctError, match="built in"):
        unregister("tree")
    with pytest.raises(PrivacctError, match="was registered"):
        unregister("never")
    assert strategy_names() == BUILTIN + (TOY,)


def test_the_names_view_behaves_as_a_read_only_tuple():
    assert repr(NAMES) == repr(BUILTIN) and NAMES[-1] == "blt" and NAMES[:2] == BUILTIN[:2]
    assert ("x",) + NAMES == ("x",) + BUILTIN and NAMES + ("x",) == BUILTIN + ("x",)
    assert ", ".join(NAMES) == "tree, tree-honaker, sqrt-toeplitz, blt"
    assert 3 not in NAMES and None not in NAMES and "blt" in NAMES and NAMES != ("tree",)
    with pytest.raises(TypeError):
        hash(NAMES)
    with pytest.raises(TypeError):
        NAMES[0] = "x"                                            # type: ignore[index]
