"""privacct.outputs: --out checked without side effects; an output set is complete or absent."""

import json
import os

import pytest

from privacct.outputs import MANIFEST, OutputError, Outputs, OutputSet, check_out, wrote_line

OUT = Outputs("privacct test", ("a.txt", "sub/*.json"))


@pytest.mark.parametrize("bad", ["", "x\x00y", "/proc/1/x", "/sys/x", "/dev/null"])
def test_check_out_refuses_without_creating(bad, tmp_path):
    with pytest.raises(OutputError, match="--out"):
        check_out(bad, OUT)


def test_check_out_accepts_new_empty_and_own_directories(tmp_path):
    assert check_out(tmp_path / "new" / "deeper", OUT) == tmp_path / "new" / "deeper"
    assert not (tmp_path / "new").exists()
    (tmp_path / "own" / "sub").mkdir(parents=True)
    (tmp_path / "own" / "a.txt").write_text("x")
    (tmp_path / "own" / "sub" / "b.json").write_text("{}")
    check_out(tmp_path / "own", OUT)
    (tmp_path / "own" / "notes.txt").write_text("mine")
    with pytest.raises(OutputError, match="notes.txt"):
        check_out(tmp_path / "own", OUT)


def test_broken_symlink_is_refused(tmp_path):
    os.symlink(tmp_path / "nowhere", tmp_path / "link")
    with pytest.raises(OutputError, match="broken symbolic link"):
        check_out(tmp_path / "link", OUT)


def test_set_commits_with_manifest_and_discards_on_error(tmp_path):
    with OutputSet(tmp_path / "o", OUT) as o:
        (o.staging / "a.txt").write_text("one")
        files = o.commit()
    assert files == ["a.txt", MANIFEST]
    doc = json.loads((tmp_path / "o" / MANIFEST).read_text())
    assert doc["command"] == "privacct test" and doc["files"]["a.txt"]["bytes"] == 3
    with pytest.raises(RuntimeError):
        with OutputSet(tmp_path / "o", OUT) as o:
            (o.staging / "a.txt").write_text("two")
            raise RuntimeError("interrupted")
    assert (tmp_path / "o" / "a.txt").read_text() == "one"
    assert sorted(p.name for p in (tmp_path / "o").iterdir()) == ["a.txt", MANIFEST]
    with pytest.raises(RuntimeError):
        with OutputSet(tmp_path / "fresh" / "o", OUT) as o:
            raise RuntimeError("interrupted")
    assert not (tmp_path / "fresh").exists()   # directories it created are removed again


def test_wrote_line():
    assert wrote_line("/x/o", ["a.txt", "sub/b.json", "sub/c.json", MANIFEST]) == "wrote /x/o (files: a.txt, sub/, manifest.json)"
