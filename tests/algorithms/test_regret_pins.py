"""Regression pins: today's regret curves, ledgers and audit observations, byte for byte (issue 14 item 1).

Every registered learner and privacy model runs a few small configurations at 3 seeds; the sha256 of
``regret.tobytes()``, of the final released statistics (``info["final_release"]``: regret alone only
changes when a decision flips, the statistics change with any bit of the arithmetic), of the ledger's draws (group, users, mechanism, scale, shape, batch, in order) and,
for private models, of an audited run's observation values, must equal the digests in
``regret_pins.json``. The pins were written against the code before any of issue 14's speed-ups, so a
compiled loop, a chunked noise schedule or a different factorisation that changes a single bit of any
learner's output fails here.

A change that is MEANT to change the bytes regenerates the file (and says why in its commit):
``python tests/algorithms/test_regret_pins.py --write``. The digests are of float64 arithmetic on one
machine's numpy/BLAS; a platform whose BLAS rounds differently gets its own pins the same way.
"""

from __future__ import annotations

import hashlib
import json
import sys
from pathlib import Path

import numpy as np
import pytest

from privacct.algorithms.base import AuditHook, RunConfig
from privacct.algorithms.registry import learners
from privacct.rng import spawn_sequences

PINS = Path(__file__).with_name("regret_pins.json")
SEEDS = 3
#: (label, overrides of the learner's test settings): the contract settings, a longer run that crosses
#: the mixture engine's 128-episode noise chunk, and the printed (paper) calibration at bonus 1.
CONFIGS = (
    ("test", {}),
    ("k130", {"episodes": 130}),
    ("paper", {"episodes": 24, "calibration": "paper", "bonus_scale": 1.0}),
)
#: Per family, a configuration whose statistics depend on every bit of the server's arithmetic (small bonus,
#: little noise: Q is not clipped to a constant, so V, phi_V and the released sums move with Sigma^{-1}).
FAMILY_CONFIGS = {
    "linear-mixture": (("sensitive", {"env": "hard-to-learn", "episodes": 40, "bonus_scale": 0.01, "epsilon": 50.0}),),
}


def _config(name: str, privacy: str, over: dict) -> RunConfig:
    kw = dict(learners()[name].test_settings)
    kw.update(over)
    delta = kw.pop("delta", 0.0)
    if privacy == "none":
        delta = 0.0
    eps = kw.pop("epsilon", 1.0)
    return RunConfig(name, privacy, epsilon=eps, delta=delta, calibration=kw.pop("calibration", "tight"), **kw)


def _sha(*arrays) -> str:
    h = hashlib.sha256()
    for a in arrays:
        h.update(np.ascontiguousarray(a).tobytes() if isinstance(a, np.ndarray) else repr(a).encode())
    return h.hexdigest()


def digests(name: str, privacy: str) -> dict[str, str]:
    spec = learners()[name]
    out: dict[str, str] = {}
    for label, over in CONFIGS + FAMILY_CONFIGS.get(spec.family, ()):
        cfg = _config(name, privacy, over)
        res = spec.run(cfg, spawn_sequences(2024, SEEDS))
        out[f"{label}/regret"] = _sha(np.asarray(res.regret, dtype=float))
        released = [np.asarray(res.info[k]) for k in ("final_release", "non_pd_events", "n_updates", "floor_events")
                    if k in res.info]
        if released:  # the final statistics carry every bit of the arithmetic, not only the decisions
            out[f"{label}/release"] = _sha(*released)
        if res.ledger is not None:
            out[f"{label}/ledger"] = _sha(*[tuple(d.__dict__.values()) for d in res.ledger.draws()])
    if privacy != "none":
        res = spec.run_observed(_config(name, privacy, {}), spawn_sequences(7, SEEDS), audit=AuditHook("B"))
        obs = res.observation
        out["audit/regret"] = _sha(np.asarray(res.regret, dtype=float))
        out["audit/observation"] = _sha(*[x for b in obs.blocks for x in (b.name, np.asarray(b.values, dtype=float))],
                                        np.asarray(obs.actions if obs.actions is not None else []))
    return out


ALL = [(n, p) for n, s in sorted(learners().items()) for p in s.privacy_models]


def platform_key() -> dict[str, str]:
    """What the bytes of float64 arithmetic depend on besides our code: numpy's version and the BLAS
    build and kernel it picked for this CPU (OpenBLAS chooses kernels by CPU family)."""
    import platform

    from threadpoolctl import threadpool_info

    np.dot(np.ones(2), np.ones(2))  # numpy's BLAS is loaded; scipy's own copy (if loaded) is not ours to key on
    blas = sorted(f"{i.get('internal_api')} {i.get('version')} {i.get('architecture')}" for i in threadpool_info()
                  if i.get("user_api") == "blas" and "numpy" in str(i.get("filepath", "")))
    return {"machine": platform.machine(), "numpy": np.__version__, "blas": "; ".join(blas)}


@pytest.fixture(scope="module")
def pins() -> dict:
    data = json.loads(PINS.read_text())
    here = platform_key()
    if data.get("_platform") != here:
        pytest.skip(f"the pins were written on {data.get('_platform')}, this platform is {here}: float64 bytes "
                    "differ between BLAS kernels and numpy releases; regenerate them here with "
                    "`python tests/algorithms/test_regret_pins.py --write` before a byte-changing refactor")
    return {k: v for k, v in data.items() if k != "_platform"}


def test_every_learner_and_privacy_model_is_pinned(pins):
    assert sorted(pins) == sorted(f"{n}/{p}" for n, p in ALL)


@pytest.mark.parametrize("name, privacy", ALL)
def test_same_bytes_as_pinned(pins, name, privacy):
    got = digests(name, privacy)
    want = pins[f"{name}/{privacy}"]
    assert sorted(got) == sorted(want)
    changed = [k for k in want if got[k] != want[k]]
    assert not changed, f"{name}/{privacy}: output bytes changed for {changed}"


if __name__ == "__main__":  # regenerate: python tests/algorithms/test_regret_pins.py --write
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/algorithms/test_regret_pins.py --write")
    data = {f"{n}/{p}": digests(n, p) for n, p in ALL}
    data["_platform"] = platform_key()
    PINS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")
