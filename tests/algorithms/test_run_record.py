"""Issue 22 item 1: the run configuration is one record, validated once where it is made and passed whole.

One ``privacct run`` makes its RunConfig once, builds its declared log once (kept on the record:
``LearnerSpec.declared_log``) and calibrates what one build calibrates, each accountant once per log; the summary
serialises the record (``RunConfig.to_dict``). Builds and calibrations are counted on the functions' code, so a caller
that bound one under another name is counted too.
"""

from __future__ import annotations

import collections
import contextlib
import dataclasses
import json
import pickle
import sys

import pytest

from privacct.algorithms import registry, runner
from privacct.algorithms.contract import RUN_FIELDS, RunConfig
from privacct.cli import main


@contextlib.contextmanager
def executions(*functions):
    """Counter of the executions of each function's code (by ``__qualname__``) inside the block; a partial is counted
    as the function it wraps."""
    codes = {getattr(f, "func", f).__code__: getattr(f, "func", f).__qualname__ for f in functions}
    seen: collections.Counter = collections.Counter()

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in codes:
            seen[codes[frame.f_code]] += 1
    before = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield seen
    finally:
        sys.setprofile(before)


@pytest.fixture
def spec_builds(monkeypatch):
    """Every registered learner's ``build_log`` wrapped by a counter of the builds made through its spec (the
    contract), by learner name."""
    seen: collections.Counter = collections.Counter()

    def counting(name, build):
        def build_log(config):
            seen[name] += 1
            return build(config)
        return build_log
    wrapped = tuple((n, dataclasses.replace(s, build_log=counting(n, s.build_log))) for n, s in registry.learners().items())
    monkeypatch.setattr(registry, "_load", lambda: wrapped)
    return seen


@pytest.fixture
def validations(monkeypatch):
    """RunConfig validations (``__post_init__``) by the module that made the record (``RunConfig(...)`` or
    ``dataclasses.replace``)."""
    seen: collections.Counter = collections.Counter()
    original = RunConfig.__post_init__

    def counting(self):
        frame = sys._getframe(1)
        while frame.f_code.co_filename == "<string>" or frame.f_globals.get("__name__") == "dataclasses":
            frame = frame.f_back
        seen[frame.f_globals.get("__name__")] += 1
        original(self)
    monkeypatch.setattr(RunConfig, "__post_init__", counting)
    return seen


@pytest.fixture
def passed(monkeypatch):
    """The RunConfig ``privacct run`` passes to :func:`privacct.algorithms.runner.run_experiment`."""
    seen: list = []
    original = runner.run_experiment

    def recording(config, **kw):
        seen.append(config)
        return original(config, **kw)
    monkeypatch.setattr(runner, "run_experiment", recording)
    return seen


def _run(tmp_path, algorithm, privacy, calibration, *extra) -> dict:
    out = tmp_path / "out"
    argv = ["run", algorithm, "--privacy", privacy, "--calibration", calibration, "--episodes", "6", "--seeds", "2",
            "--out", str(out), "--quiet", *extra]
    assert main(argv) == 0
    return json.loads((out / "summary.json").read_text())


def _family(algorithm: str) -> str:
    fn = registry.get_learner(algorithm).run_batch
    return getattr(fn, "func", fn).__module__.rsplit(".", 1)[0]


#: One learner per family, each calibration.
RUNS = [("ucb-vi", "jdp", "tight"), ("ucb-vi", "ldp", "paper"), ("pp-ucrl-vtr", "jdp", "tight"),
        ("private-lsvi-ucb", "jdp", "paper")]


@pytest.mark.parametrize("algorithm, privacy, calibration", RUNS)
def test_one_run_makes_its_record_once_and_builds_its_log_once(tmp_path, spec_builds, validations, passed, algorithm,
                                                               privacy, calibration):
    """Before issue 22: 3 validations (the record, the constant set's copy, the delta's copy) and 2 builds through the
    spec (the command's check, the runner's) besides the family's own."""
    _run(tmp_path, algorithm, privacy, calibration)
    ours = {m: n for m, n in validations.items() if not m.startswith(_family(algorithm))}
    assert ours == {"privacct.algorithms.cli": 1}, "the command makes its RunConfig once; nothing re-spells it"
    assert spec_builds == {algorithm: 1}, "every step reads the log kept on the record it was passed"
    assert len(passed) == 1 and passed[0].algorithm == algorithm


EPSILON = 0.8125   # a claim no other test calibrates (the calibrator's cache starts empty for it)


@pytest.mark.parametrize("algorithm, privacy", [
    ("ucb-vi", "jdp"), ("pp-ucrl-vtr", "jdp"), ("private-lsvi-ucb", "jdp")])
def test_one_run_builds_and_calibrates_as_one_build_does(tmp_path, passed, algorithm, privacy):
    """Counted on the family's own builder (its run included) and on the calibrator, against one build of a record
    that differs from the run's only in the last digit of epsilon (no cache of either serves the other). Before issue
    22, ucb-vi JDP tight: 3 builds and 9 calibrate_log calls, one build's 3."""
    from privacct import calibrate

    spec = registry.get_learner(algorithm)
    with executions(spec.build_log, calibrate.calibrate_log) as one:
        spec.build_log(dataclasses.replace(_record(algorithm, privacy), epsilon=EPSILON * (1 + 1e-12)))
    with executions(spec.build_log, calibrate.calibrate_log) as seen:
        _run(tmp_path, algorithm, privacy, "tight", "--epsilon", repr(EPSILON))
    assert passed[0] == _record(algorithm, privacy)
    assert seen == one, "one build of the declared log, and only its calibrations"


def _record(algorithm: str, privacy: str) -> RunConfig:
    """The RunConfig ``privacct run ALGORITHM --privacy PRIVACY --calibration tight --episodes 6 --epsilon EPSILON``
    makes (default constants, the paper setting's delta)."""
    from privacct.algorithms.settings import paper_delta

    spec = registry.get_learner(algorithm)
    return RunConfig(algorithm, privacy, epsilon=EPSILON, delta=paper_delta(spec, privacy), calibration="tight",
                     episodes=6, **spec.constant_set().config_fields())


@pytest.mark.parametrize("algorithm, privacy", [("ucb-vi", "jdp"), ("private-lsvi-ucb", "jdp")])
def test_one_run_calibrates_each_log_once_per_accountant_asked(tmp_path, monkeypatch, algorithm, privacy):
    """Every calibration the run asks for (log, claim, accountant) is made once (a calibration's own probes of other
    accountants, its starting guesses, are not asked for by the run and are not counted)."""
    from privacct import calibrate

    asked: collections.Counter = collections.Counter()
    original = calibrate.calibration_factor
    depth = [0]

    def counting(log, *, epsilon, delta, accountant):
        if depth[0] == 0:
            asked[(log, epsilon, delta, accountant)] += 1
        depth[0] += 1
        try:
            return original(log, epsilon=epsilon, delta=delta, accountant=accountant)
        finally:
            depth[0] -= 1
    monkeypatch.setattr(calibrate, "calibration_factor", counting)
    _run(tmp_path, algorithm, privacy, "tight", "--epsilon", "0.8375")
    assert asked, "a tight run calibrates"
    assert max(asked.values()) == 1, sorted({k[3] for k, n in asked.items() if n > 1})


def test_the_summary_serialises_the_record_in_its_order(tmp_path, passed):
    s = _run(tmp_path, "ucb-vi", "jdp", "paper", "--option", "e_scale=0.5", "--horizon", "3")
    config = passed[0]
    assert list(s)[:13] == ["algorithm", "family", "privacy", "calibration", "epsilon", "delta", "episodes", "seeds",
                            "seed", "env", "horizon", "bonus_scale", "options"]   # unchanged since before issue 22
    assert {k: s[k] for k in RUN_FIELDS} == {**config.to_dict(), "env": "riverswim"}
    assert s["options"]["e_scale"] == 0.5 and s["horizon"] == 3 and (s["family"], s["seeds"], s["seed"]) == ("tabular", 2, 0)
    back = RunConfig(**{**{k: s[k] for k in RUN_FIELDS}, "env": None, "options": tuple(s["options"].items())})
    assert back == config


def test_the_kept_log_is_the_records_alone():
    """The log kept on a record is built once per builder, never compared, hashed or pickled with the record, and a
    record made from it by dataclasses.replace builds its own."""
    spec = registry.get_learner("ucb-vi")
    config = RunConfig("ucb-vi", "jdp", episodes=4, horizon=1)
    log = spec.declared_log(config)
    assert spec.declared_log(config) is log and log == spec.build_log(config)
    twin = dataclasses.replace(config)
    assert twin == config and hash(twin) == hash(config) and spec.declared_log(twin) is not log
    back = pickle.loads(pickle.dumps(config))
    assert back == config and "_declared_logs" not in vars(back)
    with pytest.raises(Exception, match="config.algorithm must be 'ucb-vi'"):
        spec.declared_log(RunConfig("ucb-po", "jdp", episodes=4))


def test_a_linear_mixture_log_cache_hit_makes_no_record(validations):
    """The linear-mixture log cache keys on :meth:`RunConfig.log_key`, a tuple derived once per record: a hit makes
    no RunConfig (before: a dataclasses.replace copy, validated, on every build); records that differ only in what
    no log reads (bonus_scale, a bonus-side option) share the key; the key rebuilds the neutralised record."""
    from privacct.algorithms.linear_mixture import learners as L

    spec = registry.get_learner("pp-ucrl-vtr")
    config = RunConfig("pp-ucrl-vtr", "jdp", delta=1e-5, episodes=4, horizon=3, env="riverswim-lm", bonus_scale=5.0,
                       options=(("on_non_pd", "error"), ("alpha", 0.02)))
    log = spec.build_log(config)
    validations.clear()
    assert all(spec.build_log(config) is log for _ in range(3)) and validations[L.__name__] == 0
    key = config.log_key(L._LOG_OPTIONS)
    assert config.log_key(L._LOG_OPTIONS) is key      # derived once
    assert dataclasses.replace(config, bonus_scale=1.0, options=(("alpha", 0.02),)).log_key(L._LOG_OPTIONS) == key
    assert RunConfig(**dict(key)) == dataclasses.replace(config, bonus_scale=1.0, options=(("alpha", 0.02),))
    assert dataclasses.replace(config, episodes=5).log_key(L._LOG_OPTIONS) != key
    back = pickle.loads(pickle.dumps(config))
    assert back == config and "_log_keys" not in vars(back)


def test_constant_sets_resolve_the_fields_the_record_is_made_with():
    spec = registry.get_learner("ucb-po")
    tuned = spec.constant_set("tuned")
    fields = tuned.config_fields(bonus_scale=None, options=[("eta", 2.0), ("e_scale", 0.1), ("eta", 3.0)])
    assert fields["bonus_scale"] == tuned.bonus_scale
    assert fields["options"] == tuple(sorted({**dict(tuned.options), "eta": 3.0, "e_scale": 0.1}.items()))
    base = RunConfig("ucb-po", options=(("eta", 3.0), ("e_scale", 0.1)))
    assert tuned.apply(base, keep_options=("eta", "e_scale")) == RunConfig("ucb-po", **fields)
