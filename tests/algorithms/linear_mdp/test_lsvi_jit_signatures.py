"""The compiled LSVI kernels are compiled once whichever learner calls them: phi reaches them read-only on every path
(algorithms/linear_mdp/lsvi_jit._features; a writable and a read-only array are two numba signatures, each a
compilation on a fresh machine)."""

from privacct.algorithms.contract import RunConfig
from privacct.algorithms.linear_mdp import lsvi_jit as L
from privacct.algorithms.registry import get_learner
from privacct.rng import spawn_sequences


def test_lsvi_kernels_see_phi_read_only_from_every_learner():
    for name, privacy in (("lsvi-ucb", "none"), ("batched-jdp-lsvi-ucb", "jdp")):
        cfg = RunConfig(name, privacy, epsilon=1.0, delta=0.0 if privacy == "none" else 1e-5, episodes=30)
        get_learner(name).run(cfg, spawn_sequences(0, 2))
    for f in (L.lsvi_y, L.lsvi_q):
        i = f.py_func.__code__.co_varnames.index("X")
        assert f.signatures
        for sig in f.signatures:
            assert sig[i].mutable is False, (f.py_func.__name__, sig)
    assert L._features(type("Env", (), {"phi": __import__("numpy").ones((2, 3, 4)), "n_states": 2, "n_actions": 3,
                                        "dim": 4})()).flags.writeable is False
