"""privacct.atomic: complete files or none, and bytes that depend only on the content."""

import errno
import io
import os

import numpy as np
import pytest

from privacct import atomic


def test_write_replaces_atomically_and_leaves_no_temporary(tmp_path):
    target = tmp_path / "a.json"
    atomic.write_json(target, {"x": 1})
    atomic.write_json(target, {"x": 2})
    assert target.read_text() == '{\n  "x": 2\n}\n'
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json"]


def test_a_failed_write_keeps_the_previous_file(tmp_path, monkeypatch):
    target = tmp_path / "a.txt"
    atomic.write_text(target, "old\n")

    def enospc(fd):
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(atomic.os, "fsync", enospc)
    with pytest.raises(OSError):
        atomic.write_text(target, "new\n")
    monkeypatch.undo()
    assert target.read_text() == "old\n" and sorted(os.listdir(tmp_path)) == ["a.txt"]


def test_json_is_strict():
    with pytest.raises(ValueError):
        atomic.json_bytes({"x": float("nan")})


def test_npz_bytes_are_reproducible_and_readable():
    arrays = {"regret": np.arange(6.0).reshape(2, 3), "cumulative": np.ones((2, 3))}
    a, b = atomic.npz_bytes(arrays), atomic.npz_bytes(dict(arrays))
    assert a == b
    loaded = np.load(io.BytesIO(a))
    np.testing.assert_array_equal(loaded["regret"], arrays["regret"])
    assert atomic.npz_bytes({"regret": arrays["regret"] + 1}) != a


def test_png_bytes_are_reproducible():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    def render():
        fig, ax = plt.subplots(figsize=(2, 2))
        ax.plot([0, 1], [1, 0])
        data = atomic.png_bytes(fig)
        plt.close(fig)
        return data

    first = render()
    assert first[:8] == b"\x89PNG\r\n\x1a\n" and first == render()
