"""Every writing command (run, reproduce, report): --out checked before any work, one complete set
of files or none, one writer per directory, reproducible bytes, a closing 'wrote' line."""

from __future__ import annotations

import errno
import hashlib
import json
import os
from pathlib import Path

import pytest

from privacct import atomic
from privacct.lock import LOCK_NAME, acquire
from privacct.outputs import MANIFEST, STAGING_PREFIX

RUN = ["run", "ucb-vi", "--privacy", "jdp", "--episodes", "6", "--seeds", "2", "--horizon", "3"]
WRITERS = {
    "run": RUN,
    "reproduce": ["reproduce", "tabular", "--seeds", "1", "--episodes", "2"],
    "report": ["report", "--only", "ucb-vi"],
}


def visible(directory: Path) -> list[str]:
    """Files a reader sees (not privacct's hidden lock, staging directories and temporary files)."""
    out = []
    for p in sorted(directory.rglob("*")):
        rel = p.relative_to(directory).as_posix()
        if p.is_file() and not rel.startswith(".") and "/." not in rel:
            out.append(rel)
    return out


def assert_complete_set(directory: Path) -> dict:
    """``manifest.json`` lists exactly the visible files, each with its size and hash (volatile: valid JSON)."""
    doc = json.loads((directory / MANIFEST).read_text())
    assert doc["complete"] is True
    assert sorted(doc["files"]) == sorted(f for f in visible(directory) if f != MANIFEST)
    for rel, meta in doc["files"].items():
        data = (directory / rel).read_bytes()
        if meta.get("volatile"):
            json.loads(data)
        else:
            assert len(data) == meta["bytes"] and hashlib.sha256(data).hexdigest() == meta["sha256"], rel
    return doc


def snapshot(directory: Path) -> dict[str, bytes]:
    return {rel: (directory / rel).read_bytes() for rel in visible(directory)}


@pytest.mark.parametrize("command", sorted(WRITERS))
@pytest.mark.parametrize("target", ["file", "proc", "foreign", "unwritable", "empty-name"])
def test_bad_out_is_refused_before_any_work(command, target, cli, cli_contract, tmp_path, monkeypatch):
    tmp_path = tmp_path / "cwd"   # the cli fixture's working directory
    (tmp_path / "afile").write_text("mine\n")
    (tmp_path / "theirs").mkdir()
    (tmp_path / "theirs" / "thesis.tex").write_text("precious\n")
    (tmp_path / "ro").mkdir()
    out = {"file": "afile", "proc": "/proc/privacct-x", "foreign": "theirs", "unwritable": "ro/new", "empty-name": " "}[target]
    if target == "unwritable":   # root may write anywhere: the check asks os.access, so ask it to say no
        real = os.access
        monkeypatch.setattr(os, "access", lambda p, mode, **kw: False if str(p).endswith("ro") else real(p, mode, **kw))
    before = snapshot(tmp_path)
    r = cli(WRITERS[command] + ["--out", out, "--quiet"])
    cli_contract(r)
    assert r.code == 2 and "--out" in r.err
    assert snapshot(tmp_path) == before and not (tmp_path / "ro" / "new").exists()


def test_run_writes_a_complete_reproducible_set_and_says_where(cli, tmp_path):
    tmp_path = tmp_path / "cwd"   # the cli fixture's working directory
    r1 = cli(RUN + ["--out", "a", "--seed", "7"])
    r2 = cli(RUN + ["--out", "b", "--seed", "7"])
    assert r1.code == r2.code == 0 and r1.err == ""
    assert r1.out.splitlines()[-1].startswith(f"wrote {tmp_path / 'a'} (files: ")
    a, b = assert_complete_set(tmp_path / "a"), assert_complete_set(tmp_path / "b")
    assert a == b   # the manifest (hashes of every file but timing.json) is identical
    sa, sb = snapshot(tmp_path / "a"), snapshot(tmp_path / "b")
    assert sa["summary.json"] == sb["summary.json"] and sa["regret.png"] == sb["regret.png"]
    assert {k for k in sa if sa[k] != sb[k]} <= {"timing.json"}
    assert "elapsed_seconds" not in json.loads(sa["summary.json"])
    assert set(json.loads(sa["timing.json"])) == {"elapsed_seconds", "episodes_per_second"}


def test_rerun_replaces_the_previous_set_and_drops_its_stale_files(cli, tmp_path):
    tmp_path = tmp_path / "cwd"   # the cli fixture's working directory
    assert cli(RUN + ["--out", "o"]).code == 0
    assert (tmp_path / "o" / "mechanism_log.json").exists()
    r = cli(["run", "ucb-vi", "--episodes", "3", "--out", "o", "--quiet"])   # non-private: no log
    assert r.code == 0
    doc = assert_complete_set(tmp_path / "o")
    assert "mechanism_log.json" not in doc["files"] and not (tmp_path / "o" / "mechanism_log.json").exists()


def test_a_locked_out_is_refused_with_one_line(cli, cli_contract, tmp_path):
    tmp_path = tmp_path / "cwd"   # the cli fixture's working directory
    (tmp_path / "o").mkdir()
    lock = acquire(tmp_path / "o", "privacct run (another)")
    try:
        r = cli(RUN + ["--out", "o"])
        cli_contract(r)
        assert r.code == 2 and "in use by another privacct command" in r.err
        assert visible(tmp_path / "o") == []
    finally:
        lock.release()
    assert cli(RUN + ["--out", "o"]).code == 0
    assert not (tmp_path / "o" / LOCK_NAME).exists()


def test_a_stale_lock_of_a_dead_command_is_reclaimed(cli, tmp_path):
    tmp_path = tmp_path / "cwd"   # the cli fixture's working directory
    (tmp_path / "o").mkdir()
    (tmp_path / "o" / LOCK_NAME).write_text(json.dumps({"pid": 2**22 + 12345, "start": "1", "command": "dead"}))
    (tmp_path / "o" / f"{STAGING_PREFIX}1-dead").mkdir()
    assert cli(RUN + ["--out", "o"]).code == 0
    assert_complete_set(tmp_path / "o")
    assert [p.name for p in (tmp_path / "o").iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize("failing", ["fsync", "replace"])
def test_a_full_disk_leaves_the_previous_set_untouched(failing, cli, cli_contract, tmp_path, monkeypatch):
    tmp_path = tmp_path / "cwd"   # the cli fixture's working directory
    assert cli(RUN + ["--out", "o", "--seed", "1"]).code == 0
    before = snapshot(tmp_path / "o")

    def enospc(*a, **k):
        raise OSError(errno.ENOSPC, "No space left on device")

    if failing == "fsync":   # a staged file cannot be written: nothing in --out changes
        monkeypatch.setattr(atomic.os, "fsync", enospc)
    else:                    # os.replace of the staged file fails (the first rename of the set)
        monkeypatch.setattr(atomic.os, "replace", enospc)
    r = cli(RUN + ["--out", "o", "--seed", "2"])
    cli_contract(r)
    assert r.code == 2 and "--out" in r.err and "No space left" in r.err
    assert snapshot(tmp_path / "o") == before
    assert_complete_set(tmp_path / "o")
    assert [p.name for p in (tmp_path / "o").iterdir() if p.name.startswith(".")] == []


def test_memory_is_estimated_before_allocating(cli, cli_contract, tmp_path):
    tmp_path = tmp_path / "cwd"   # the cli fixture's working directory
    for argv, named in [(["run", "ucb-vi", "--episodes", "100000000000", "--out", "o"], "--episodes"),
                        (["run", "ucb-vi", "--episodes", "2", "--horizon", "1000000000000", "--out", "o"], "--horizon"),
                        (["audit", "ucb-vi", "--privacy", "jdp", "--trials", "10000000000000"], "--trials"),
                        (["mutants", "--trials", "10000000000000"], "--trials"),
                        (["reproduce", "tabular", "--episodes", "100000000000", "--out", "o"], "--episodes")]:
        r = cli(argv)
        cli_contract(r)
        assert r.code == 2 and named in r.err and "the limit is" in r.err, (argv, r.err)
    assert not (tmp_path / "o").exists()


def test_memory_limit_can_be_set_and_names_the_arguments(cli, cli_contract, tmp_path, monkeypatch):
    tmp_path = tmp_path / "cwd"   # the cli fixture's working directory
    monkeypatch.setenv("PRIVACCT_MEMORY_LIMIT", "1M")
    r = cli(["run", "ucb-vi", "--episodes", "100000", "--seeds", "4", "--out", "o"])
    cli_contract(r)
    assert r.code == 2 and "--episodes 100000 x --seeds 4" in r.err and "PRIVACCT_MEMORY_LIMIT" in r.err
    monkeypatch.setenv("PRIVACCT_MEMORY_LIMIT", "1G")
    assert cli(["run", "ucb-vi", "--episodes", "10", "--out", "o", "--quiet"]).code == 0


def test_smallest_valid_sizes_are_accepted(cli, tmp_path):
    tmp_path = tmp_path / "cwd"   # the cli fixture's working directory
    r = cli(["run", "ucb-vi", "--episodes", "1", "--horizon", "1", "--out", "o", "--quiet"])
    assert r.code == 0, r.err
    assert json.loads((tmp_path / "o" / "summary.json").read_text())["episodes"] == 1


def test_a_failed_rename_inside_the_commit_keeps_the_previous_set(cli, cli_contract, tmp_path, monkeypatch):
    tmp_path = tmp_path / "cwd"
    assert cli(RUN + ["--out", "o", "--seed", "1"]).code == 0
    before = snapshot(tmp_path / "o")
    real = os.replace

    def failing(src, dst, *a, **k):   # the staged files are complete; moving the first one into --out fails
        if STAGING_PREFIX in str(src) and STAGING_PREFIX not in str(dst):
            raise OSError(errno.EIO, "Input/output error")
        return real(src, dst, *a, **k)

    monkeypatch.setattr(os, "replace", failing)
    r = cli(RUN + ["--out", "o", "--seed", "2"])
    cli_contract(r)
    assert r.code == 2 and "nothing was changed" in r.err
    assert snapshot(tmp_path / "o") == before
    assert_complete_set(tmp_path / "o")


def test_no_document_names_the_staging_directory(cli, tmp_path, monkeypatch):
    from privacct.audits.report import ReportScale

    tmp_path = tmp_path / "cwd"
    monkeypatch.setattr(ReportScale, "default", classmethod(lambda cls: cls.tiny()))   # seconds, not minutes
    r = cli(["report", "--only", "ucb-vi", "--out", "rep", "--quiet"])
    assert r.code == 0, r.err
    assert_complete_set(tmp_path / "rep")
    for rel in visible(tmp_path / "rep"):
        if rel.endswith((".json", ".md", ".html")):
            assert STAGING_PREFIX not in (tmp_path / "rep" / rel).read_text(), rel
    assert "privacct verify rep/logs/" in (tmp_path / "rep" / "report.json").read_text()
