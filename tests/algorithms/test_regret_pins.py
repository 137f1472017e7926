"""Regression pins: today's regret curves, ledgers and audit observations (issue 14 item 1), in two tiers.

Every registered learner and privacy model runs a few small configurations at 3 seeds. Its *figures* are:
``regret`` (``res.regret``); ``release``, the final released statistics (``info["final_release"]`` and the
event counters beside it: regret alone only changes when a decision flips, the statistics change with any
bit of the arithmetic); ``ledger``, the ledger's draws (group, users, mechanism, scale, shape, batch, in
order); and for private models an audited run's ``audit/regret`` and ``audit/observation`` (block names,
values and actions). They are pinned in ``regret_pins.json`` twice:

**Tier 1, exact** (``exact``): the sha256 of every figure's bytes. It holds only on the platform the pins
were written on (``_platform``: numpy's version and the BLAS build and kernel numpy picked for the CPU,
OpenBLAS choosing kernels by CPU family), and is skipped elsewhere, saying so. It is what every speed-up
must keep (docs/performance.md#same-bytes-the-rule-every-speed-up-follows): a compiled loop, a chunked
noise schedule or a different factorisation that changes a single bit of any learner's output fails here.

**Tier 2, every kernel** (``portable``): runs on every machine. Per figure, the parts that are not
floating-point arithmetic (shapes, dtypes, ledger groups, users, mechanisms, shapes and batches, block
names, actions, the count of non-finite values and where they are) are pinned exactly by a sha256, and the
float values by a small sketch: their count, sum, sum of absolute values and two fixed projections
(weights ``frac(i * phi) - 1/2`` and ``frac(i * sqrt 2) - 1/2``, exactly summed with ``math.fsum``),
each compared with a tolerance of ``PORTABLE_RTOL = 1e-9`` times the figure's sum of absolute values.

Why a tolerance on sums, not digests of values rounded to N significant digits: whatever N, a value that
lies within a last-bit difference of a rounding boundary rounds differently on another kernel, so a
rounded digest can still flip (and it gets likelier with the thousands of values pinned); a tolerance has
no boundary. Why 1e-9: measured by running this module's figures under every OpenBLAS kernel this x86
machine can force (``OPENBLAS_CORETYPE=Haswell``, ``Sandybridge``, ``Prescott`` against the recorded
``SkylakeX``; ``OPENBLAS_NUM_THREADS=1``), 15 of ~600 figures differ in their bytes, all in the
linear-mixture ``sensitive`` configuration and in the linear-MDP Gram inverses, by at most 5e-14
relative, element by element; 1e-9 leaves four orders of magnitude for other kernels and compilers and is
still five orders below the smallest change a decision makes (a flipped action moves a regret curve by at
least a reward gap, 0.005 on RiverSwim, against per-run regrets of 1 to 100) and far below the change of
any different noise draw, constant or formula.

One figure is *not* a property of the learner's arithmetic: the buffers of the ``blt`` counting strategy
(``privacct.counters.strategies.blt_parameters``, an L-BFGS-B optimisation, used by a JDP learner's
``tight`` calibration when BLT is the least-noise counter: ``private-lsvi-ucb``). Its optimum depends on
the BLAS kernel (the same call returns different buffers under Haswell and SkylakeX kernels, so the
calibrated noise differs by 5e-4 and the released statistics by O(1)). Tier 2 therefore runs with the
buffers the pins were written with (``_blt_buffers``; any privacy-valid buffers give a valid counter, so
the learner's code path is the same) and the optimiser's own output is pinned by tier 1 (the ledger's
noise scale and every released statistic depend on it).

A change that is MEANT to change the figures regenerates both tiers (and says why in its commit):
``python tests/algorithms/test_regret_pins.py --write``. Run it on any machine: tier 1 then holds there.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import math
import sys
from pathlib import Path

import numpy as np
import pytest

from privacct.algorithms.contract import AuditHook, RunConfig
from privacct.algorithms.registry import learners
from privacct.counters import strategies
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
#: Tier 2's tolerance, relative to a figure's sum of absolute values (module docstring: why 1e-9).
PORTABLE_RTOL = 1e-9
_PHI = (math.sqrt(5.0) - 1.0) / 2.0


def _config(name: str, privacy: str, over: dict) -> RunConfig:
    kw = dict(learners()[name].test_settings)
    kw.update(over)
    delta = kw.pop("delta", 0.0)
    if privacy == "none":
        delta = 0.0
    eps = kw.pop("epsilon", 1.0)
    return RunConfig(name, privacy, epsilon=eps, delta=delta, calibration=kw.pop("calibration", "tight"), **kw)


def figures(name: str, privacy: str) -> dict[str, list]:
    """Every pinned figure of one learner and privacy model: label -> a list of numpy arrays and plain
    values (tuples, strings, ints), in a fixed order."""
    spec = learners()[name]
    out: dict[str, list] = {}
    for label, over in CONFIGS + FAMILY_CONFIGS.get(spec.family, ()):
        cfg = _config(name, privacy, over)
        res = spec.run(cfg, spawn_sequences(2024, SEEDS))
        out[f"{label}/regret"] = [np.asarray(res.regret, dtype=float)]
        released = [np.asarray(res.info[k]) for k in ("final_release", "non_pd_events", "n_updates", "floor_events")
                    if k in res.info]
        if released:  # the final statistics carry every bit of the arithmetic, not only the decisions
            out[f"{label}/release"] = released
        if res.ledger is not None:
            out[f"{label}/ledger"] = [tuple(d.__dict__.values()) for d in res.ledger.draws()]
    if privacy != "none":
        res = spec.run_observed(_config(name, privacy, {}), spawn_sequences(7, SEEDS), audit=AuditHook("B"))
        obs = res.observation
        out["audit/regret"] = [np.asarray(res.regret, dtype=float)]
        out["audit/observation"] = ([x for b in obs.blocks for x in (b.name, np.asarray(b.values, dtype=float))]
                                    + [np.asarray(obs.actions if obs.actions is not None else [])])
    return out


# --------------------------------------------------------------------------- tier 1: exact bytes
def _sha(*items) -> str:
    h = hashlib.sha256()
    for a in items:
        h.update(np.ascontiguousarray(a).tobytes() if isinstance(a, np.ndarray) else repr(a).encode())
    return h.hexdigest()


def exact_digests(figs: dict[str, list]) -> dict[str, str]:
    return {key: _sha(*items) for key, items in figs.items()}


# --------------------------------------------------------------------------- tier 2: every kernel
def _split(items: list) -> tuple[list, list[float]]:
    """(the exact part, the float values) of one figure: floats leave the exact part, which keeps their
    position (dtype and shape of an array; a marker for a float inside a ledger draw)."""
    exact: list = []
    values: list[float] = []
    for item in items:
        if isinstance(item, np.ndarray):
            if item.dtype.kind == "f":
                flat = item.astype(float).ravel()
                finite = np.isfinite(flat)
                exact.append(("float array", item.shape, tuple(np.flatnonzero(~finite).tolist()),
                              tuple(str(v) for v in flat[~finite])))
                values.extend(flat[finite].tolist())
            else:
                exact.append((str(item.dtype), item.shape, item.tobytes().hex()))
        elif isinstance(item, tuple):  # a ledger draw
            exact.append(tuple("float" if isinstance(v, float) else v for v in item))
            values.extend(v for v in item if isinstance(v, float))
        else:
            exact.append(item)
    return exact, values


def sketch(values: list[float]) -> list[float]:
    """[count, sum, sum |x|, sum w1 x, sum w2 x], each sum exact (math.fsum) of exactly rounded products."""
    n = len(values)
    w1 = [((i + 1) * _PHI) % 1.0 - 0.5 for i in range(n)]
    w2 = [((i + 1) * math.sqrt(2.0)) % 1.0 - 0.5 for i in range(n)]
    return [float(n), math.fsum(values), math.fsum(abs(v) for v in values),
            math.fsum(w * v for w, v in zip(w1, values, strict=True)), math.fsum(w * v for w, v in zip(w2, values, strict=True))]


def portable_pins(figs: dict[str, list]) -> dict[str, dict]:
    out = {}
    for key, items in figs.items():
        exact, values = _split(items)
        out[key] = {"structure": _sha(repr(exact)), "sketch": sketch(values)}
    return out


def portable_mismatches(got: dict[str, dict], want: dict[str, dict], rtol: float = PORTABLE_RTOL) -> list[str]:
    """One line per figure whose structure differs or whose sketch is beyond ``rtol`` x its sum |x|."""
    bad = []
    for key in sorted(set(got) | set(want)):
        if key not in got or key not in want:
            bad.append(f"{key}: {'not pinned' if key in got else 'missing'}")
            continue
        g, w = got[key], want[key]
        if g["structure"] != w["structure"]:
            bad.append(f"{key}: shapes, names, counts or integers changed")
            continue
        tol = rtol * max(w["sketch"][2], sys.float_info.min)
        off = [abs(a - b) for a, b in zip(g["sketch"], w["sketch"], strict=True)]
        if max(off) > tol:
            bad.append(f"{key}: sketch {g['sketch']} vs pinned {w['sketch']} (differs by {max(off):.3g} > {tol:.3g})")
    return bad


def _clear_caches() -> None:
    """Drop every memoised plan and calibration of privacct (they hold counter buffers)."""
    for mod_name, mod in list(sys.modules.items()):
        if not mod_name.startswith("privacct.") or mod is None:
            continue
        for value in list(vars(mod).values()):
            clear = getattr(value, "cache_clear", None)
            if callable(clear) and getattr(value, "__module__", None) == mod_name:
                clear()


@contextlib.contextmanager
def blt_buffers(recorded: dict[str, list] | None):
    """Within: ``blt_parameters`` returns the ``recorded`` buffers (key ``"leaves buffers norm"``), or, with
    ``recorded=None``, runs the optimiser and records what it returns into the yielded dict."""
    real = strategies.blt_parameters
    seen: dict[str, list] = {} if recorded is None else recorded

    def frozen(leaves: int, buffers: int = strategies.DEFAULT_BLT_BUFFERS, norm: str = "l2"):
        key = f"{leaves} {buffers} {norm}"
        if recorded is None:
            seen[key] = [list(b) for b in real(leaves, buffers, norm)]
        elif key not in recorded:
            raise AssertionError(f"blt_parameters({key}) was not called when the pins were written: regenerate them")
        return tuple(tuple(b) for b in seen[key])

    _clear_caches()
    strategies.blt_parameters = frozen
    try:
        yield seen
    finally:
        strategies.blt_parameters = real
        _clear_caches()


# --------------------------------------------------------------------------- the tests
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
def data() -> dict:
    return json.loads(PINS.read_text())


@pytest.fixture(scope="module")
def exact_pins(data) -> dict:
    here = platform_key()
    if data["_platform"] != here:
        pytest.skip(f"tier 1 (exact bytes) was written on {data['_platform']}, this platform is {here}: float64 bytes "
                    "differ between BLAS kernels and numpy releases (tier 2 runs here); regenerate both tiers here with "
                    "`python tests/algorithms/test_regret_pins.py --write` before a byte-changing refactor")
    return data["exact"]


def test_every_learner_and_privacy_model_is_pinned(data):
    want = sorted(f"{n}/{p}" for n, p in ALL)
    assert sorted(data["exact"]) == want
    assert sorted(data["portable"]) == want


@pytest.mark.parametrize("name, privacy", ALL)
def test_same_bytes_as_pinned(exact_pins, name, privacy):
    got = exact_digests(figures(name, privacy))
    want = exact_pins[f"{name}/{privacy}"]
    assert sorted(got) == sorted(want)
    changed = [k for k in want if got[k] != want[k]]
    assert not changed, f"{name}/{privacy}: output bytes changed for {changed}"


@pytest.mark.parametrize("name, privacy", ALL)
def test_same_figures_on_every_kernel(data, name, privacy):
    with blt_buffers(data["_blt_buffers"]):
        got = portable_pins(figures(name, privacy))
    bad = portable_mismatches(got, data["portable"][f"{name}/{privacy}"])
    assert not bad, f"{name}/{privacy}: figures changed beyond {PORTABLE_RTOL:g} x sum |x|:\n" + "\n".join(bad)


def test_the_portable_tier_can_fail():
    """The tolerance is tight enough to see one value moved by 1e-6 of itself, and loose enough for last bits."""
    x = np.linspace(-3.0, 7.0, 500)
    want = portable_pins({"f": [x]})
    ulp = x * (1 + 4e-16)
    assert not portable_mismatches(portable_pins({"f": [ulp]}), want)
    for i in (0, 250, 499):
        moved = x.copy()
        moved[i] *= 1 + 1e-6
        assert portable_mismatches(portable_pins({"f": [moved]}), want), i
    swapped = x.copy()
    swapped[[10, 11]] = swapped[[11, 10]]     # same sum and sum |x|: the projections see the order
    assert portable_mismatches(portable_pins({"f": [swapped]}), want)
    assert portable_mismatches(portable_pins({"f": [x.reshape(50, 10)]}), want)      # the shape
    draw = ("counts", 1, 1, "laplace", 30.0, (288,), 3)
    assert portable_mismatches(portable_pins({"l": [draw[:2] + (2,) + draw[3:]]}), portable_pins({"l": [draw]}))


def _write() -> None:
    data = {"_platform": platform_key(), "exact": {}, "portable": {}}
    for n, p in ALL:
        data["exact"][f"{n}/{p}"] = exact_digests(figures(n, p))
    with blt_buffers(None) as recorded:
        for n, p in ALL:
            data["portable"][f"{n}/{p}"] = portable_pins(figures(n, p))
    data["_blt_buffers"] = recorded
    PINS.write_text(json.dumps(data, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":  # regenerate: python tests/algorithms/test_regret_pins.py --write
    if sys.argv[1:] != ["--write"]:
        raise SystemExit("usage: python tests/algorithms/test_regret_pins.py --write")
    _write()
