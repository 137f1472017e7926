"""privacct.resources: the memory limit and the one-line refusal above it."""

import pytest

from privacct.errors import PrivacctError
from privacct.resources import check_memory, fmt_bytes, limit_bytes, parse_size


def test_parse_size():
    assert parse_size("512M") == 512 * 2**20 and parse_size("4GiB") == 4 * 2**30 and parse_size("100") == 100
    for bad in ("", "-1G", "nan", "inf", "x"):
        with pytest.raises(ValueError):
            parse_size(bad)


def test_limit_from_the_environment_and_the_machine(monkeypatch):
    monkeypatch.setenv("PRIVACCT_MEMORY_LIMIT", "2G")
    assert limit_bytes() == (2 * 2**30, "PRIVACCT_MEMORY_LIMIT")
    monkeypatch.delenv("PRIVACCT_MEMORY_LIMIT")
    limit, how = limit_bytes()
    assert limit is None or (limit > 0 and "available" in how)


def test_check_memory_names_arguments_and_limit(monkeypatch):
    monkeypatch.setenv("PRIVACCT_MEMORY_LIMIT", "1G")
    check_memory(2**29, args="--episodes 10", what="regret")
    with pytest.raises(PrivacctError) as e:
        check_memory(2**31, args="--episodes 10 x --seeds 4", what="regret arrays", lower="--episodes or --seeds")
    msg = str(e.value)
    assert msg.startswith("--episodes 10 x --seeds 4 needs about 2.0 GiB") and "the limit is 1.0 GiB" in msg
    assert msg.endswith("lower --episodes or --seeds") and "\n" not in msg


def test_fmt_bytes():
    assert fmt_bytes(512) == "512 B" and fmt_bytes(3 * 2**40) == "3.0 TiB" and fmt_bytes(745 * 2**30) == "745 GiB"
