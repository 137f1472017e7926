"""privacct.signals: SIGINT/SIGTERM inside a command raise Interrupted (exit 128 + signal); handlers restored."""

import os
import signal

import pytest

from privacct import signals


@pytest.mark.parametrize("sig, code", [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_signal_raises_interrupted_and_handlers_are_restored(sig, code):
    before = signal.getsignal(sig)
    with pytest.raises(signals.Interrupted) as e:
        with signals.handled():
            os.kill(os.getpid(), sig)
            for _ in range(10**6):   # the handler runs between bytecodes
                pass
    assert e.value.exit_code == code and e.value.name == signal.Signals(sig).name
    assert signals.received() == sig
    assert signal.getsignal(sig) is before


def test_cli_interrupted_command_is_one_line_exit_130(monkeypatch, cli):
    import privacct.cli as cli_module

    def interrupted(args):
        os.kill(os.getpid(), signal.SIGINT)
        for _ in range(10**6):
            pass
        return 0

    monkeypatch.setattr(cli_module, "cmd_schema", interrupted)
    r = cli(["schema"])
    assert r.code == 130 and r.out == "" and r.err == "privacct schema: interrupted (SIGINT)\n"
