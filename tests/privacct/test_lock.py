"""privacct.lock: one live holder per directory; dead, reused or half-written locks are reclaimed."""

import json
import os

import pytest

from privacct.lock import LOCK_NAME, Busy, acquire, alive


def test_second_holder_is_refused_until_release(tmp_path):
    lock = acquire(tmp_path, "privacct run")
    assert json.loads((tmp_path / LOCK_NAME).read_text())["pid"] == os.getpid()
    with pytest.raises(Busy) as e:
        acquire(tmp_path, "privacct run")
    assert e.value.pid == os.getpid()
    lock.release()
    assert not (tmp_path / LOCK_NAME).exists()
    acquire(tmp_path, "again").release()


@pytest.mark.parametrize("content", ["", "{\"pid\": 4194000, \"start\": \"1\", \"command\": \"dead\"}",
                                     "{\"pid\": 1, \"start\": \"not-its-start-time\", \"command\": \"reused pid\"}"])
def test_stale_locks_are_reclaimed(tmp_path, content):
    (tmp_path / LOCK_NAME).write_text(content)
    lock = acquire(tmp_path, "privacct run")
    assert json.loads((tmp_path / LOCK_NAME).read_text())["command"] == "privacct run"
    lock.release()


def test_alive():
    assert alive(os.getpid())
    assert not alive(0) and not alive(-5)
