"""privacct.counters.blt_cache: the optimiser's BLT buffers kept on disk per machine, returned exactly, keyed on every
input (issue 23 memory slice)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from privacct.counters import blt, blt_cache


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("PRIVACCT_BLT_CACHE", str(tmp_path))
    return tmp_path


def _optimise(leaves, d=4, norm="l2"):
    """The optimiser itself (no disk cache, no lru_cache)."""
    old = os.environ.get("PRIVACCT_BLT_CACHE")
    os.environ["PRIVACCT_BLT_CACHE"] = "0"
    try:
        return blt.blt_parameters.__wrapped__(leaves, d, norm)
    finally:
        if old is None:
            del os.environ["PRIVACCT_BLT_CACHE"]
        else:
            os.environ["PRIVACCT_BLT_CACHE"] = old


def _hex(buffers):
    return [(t.hex(), w.hex()) for t, w in buffers]


@pytest.mark.parametrize("leaves,d,norm", [(19, 4, "l2"), (500, 3, "l1"), (9999, 4, "l2")])
def test_an_entry_returns_exactly_what_the_optimiser_returns(cache, leaves, d, norm):
    assert blt_cache.lookup(leaves, d, norm) is None
    first = blt.blt_parameters.__wrapped__(leaves, d, norm)      # runs the optimiser, writes the entry
    assert len(os.listdir(cache)) == 1
    assert _hex(blt_cache.lookup(leaves, d, norm)) == _hex(first) == _hex(_optimise(leaves, d, norm))
    assert _hex(blt.blt_parameters.__wrapped__(leaves, d, norm)) == _hex(first)


def test_a_hit_skips_the_optimiser(cache, monkeypatch):
    want = blt.blt_parameters.__wrapped__(300)
    import scipy.optimize

    def boom(*a, **k):
        raise AssertionError("the optimiser ran on a cache hit")

    monkeypatch.setattr(scipy.optimize, "minimize", boom)
    assert blt.blt_parameters.__wrapped__(300) == want
    with pytest.raises(AssertionError, match="optimiser ran"):
        blt.blt_parameters.__wrapped__(301)


def test_a_process_with_the_entry_does_not_import_scipy_optimize(cache):
    want = blt.blt_parameters.__wrapped__(700)
    code = ("import sys; from privacct.counters.blt import blt_parameters as f; b = f(700); "
            "print('scipy.optimize' in sys.modules); print([(t.hex(), w.hex()) for t, w in b])")
    out = subprocess.run([sys.executable, "-c", code], check=True, capture_output=True, text=True,
                         env=dict(os.environ, PRIVACCT_BLT_CACHE=str(cache))).stdout.splitlines()
    assert out == ["False", str(_hex(want))]


@pytest.mark.parametrize("field", ["leaves", "buffers", "norm", "sources", "numpy", "scipy", "python", "builds",
                                   "cpu_flags", "threads"])
def test_every_key_field_is_compared(cache, monkeypatch, field):
    """An entry written under another value of any one key field is not returned (its file renamed to this key's)."""
    blt.blt_parameters.__wrapped__(200)
    real = blt_cache.fingerprint(200, 4, "l2")
    [name] = os.listdir(cache)
    entry = json.loads((cache / name).read_text())
    entry["key"][field] = "another"
    (cache / name).write_text(json.dumps(entry))     # same file name (this key's hash), another key inside
    assert blt_cache._path(real) == str(cache / name)
    assert blt_cache.lookup(200, 4, "l2") is None


@pytest.mark.parametrize("name", blt_cache.SOURCES)
def test_a_source_change_is_a_new_key(tmp_path, monkeypatch, name):
    """The same arguments with one of the objective's modules edited (copies of the sources, one with a comment added)
    map to another key and another file."""
    for src in blt_cache.SOURCES:
        text = open(os.path.join(blt_cache._HERE, src)).read()
        (tmp_path / src).write_text(text + ("\n# edited\n" if src == name else ""))
    before = blt_cache.fingerprint(50, 4, "l2")
    monkeypatch.setattr(blt_cache, "_HERE", str(tmp_path))
    blt_cache._environment.cache_clear()
    try:
        after = blt_cache.fingerprint(50, 4, "l2")
    finally:
        blt_cache._environment.cache_clear()
    assert {k for k in before["sources"] if before["sources"][k] != after["sources"][k]} == {name}
    assert blt_cache._path(after) != blt_cache._path(before)


def test_unreadable_entries_and_the_off_switch(cache, monkeypatch):
    want = blt.blt_parameters.__wrapped__(150)
    [name] = os.listdir(cache)
    (cache / name).write_text("{not json")
    assert blt_cache.lookup(150, 4, "l2") is None
    assert blt.blt_parameters.__wrapped__(150) == want          # recomputed and rewritten
    assert blt_cache.lookup(150, 4, "l2") == want
    monkeypatch.setenv("PRIVACCT_BLT_CACHE", "0")
    assert blt_cache.cache_dir() is None and blt_cache.lookup(150, 4, "l2") is None


def test_an_unwritable_directory_only_means_no_cache(tmp_path, monkeypatch):
    blocker = tmp_path / "file"
    blocker.write_text("")
    monkeypatch.setenv("PRIVACCT_BLT_CACHE", str(blocker / "sub"))    # a directory under a file: never creatable
    assert blt.blt_parameters.__wrapped__(40) == _optimise(40)
    assert blt_cache.lookup(40, 4, "l2") is None
