"""privacct.progress: a tqdm bar on a terminal, a line every few seconds otherwise, nothing when quiet."""

import io

from privacct import progress


class Tty(io.StringIO):
    def isatty(self):
        return True


def test_lines_when_not_a_terminal(monkeypatch):
    monkeypatch.setenv("PRIVACCT_PROGRESS_INTERVAL", "0")
    progress.reset()
    buf = io.StringIO()
    with progress.progress_bar(10, "run ucb-vi/jdp", scale=2, stream=buf) as bar:
        bar(5)
        bar(10)
    lines = buf.getvalue().splitlines()
    assert lines[0].startswith("run ucb-vi/jdp: 10/20 episodes (50%)") and lines[-1].startswith("run ucb-vi/jdp: 20/20")
    assert "episodes/s" in lines[0] and "elapsed" in lines[0]


def test_no_line_within_the_interval(monkeypatch):
    monkeypatch.setenv("PRIVACCT_PROGRESS_INTERVAL", "3600")
    progress.reset()
    buf = io.StringIO()
    with progress.progress_bar(10, "x", stream=buf) as bar:
        for i in range(11):
            bar(i)
    assert buf.getvalue() == ""


def test_quiet_prints_nothing(monkeypatch):
    monkeypatch.setenv("PRIVACCT_PROGRESS_INTERVAL", "0")
    buf = Tty()
    with progress.progress_bar(10, "x", stream=buf, quiet=True) as bar:
        bar(10)
    progress.note("hello", quiet=True, stream=buf)
    assert buf.getvalue() == ""


def test_a_tqdm_bar_on_a_terminal():
    buf = Tty()
    with progress.progress_bar(10, "run x", stream=buf) as bar:
        assert bar.mode == "bar"
        bar(4)
        bar(10)
        assert bar._bar.n == 10 and bar._bar.total == 10
    assert "run x:" in buf.getvalue() and "/10 [" in buf.getvalue()   # tqdm's own bar, cleared when done


def test_heartbeat_and_note(monkeypatch):
    monkeypatch.setenv("PRIVACCT_PROGRESS_INTERVAL", "0")
    progress.reset()
    buf = io.StringIO()
    with progress.heartbeat("audit x", stream=buf, tick=0.01) as p:
        import time

        time.sleep(0.1)
        assert p is not None
    progress.note("tuned c\x1b[2J = 0.1", stream=buf)
    text = buf.getvalue()
    assert "audit x: running" in text and "elapsed" in text
    assert text.splitlines()[-1] == "tuned c\\x1b[2J = 0.1"   # escaped, never a raw control character
