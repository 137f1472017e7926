"""The README and docs/ agree with the code (issue 24 item 5): every checkable statement, extracted mechanically.

What is extracted from README.md and docs/*.md, and what it is checked against:

* **commands** (:func:`doc_commands`): every ``privacct ...`` command line, in inline code and in code blocks
  (fenced blocks without a language or in a shell, indented blocks), parsed -- never run -- by privacct's own
  parser (:func:`privacct.cli.build_parser`, the entry-point commands included). A usage synopsis is expanded
  (``[optional]``, ``a|b``, ``(x | y)``, ``...``: every alternative and every optional part at least once). A
  placeholder (``ALGORITHM``, ``DIR``, ``NAME``, ``K``, ``d``, ...) is replaced by a real value from
  :data:`POSITIONAL` and :data:`VALUE_FOR_FLAG`; a literal value is parsed as written. A command in a code
  block or in the README's commands table must parse as it is; a fragment in prose (or one with ``...``
  elided arguments outside brackets) may leave out required arguments (the parser's message names them and
  they are filled in), but every flag it shows must exist and every value it gives must parse.
* **flag defaults**: what a ``--help`` text states as a default (``(default 1000)``, ``default: paper``)
  equals the parser's default, or the code's constant where the parser leaves it to the command
  (:data:`RESOLVED_DEFAULTS`); and a default the docs state for a flag -- through a placeholder bound to it by
  a synopsis (``[--canaries M]`` ... ``M canary users (default 1000)``) -- equals that default.
* **constants** (:data:`CONSTANTS`): (doc file, regex, the code's value) rows, the number read from the doc
  compared with the constant imported from the code (the README's tuned constants, tolerances, limits,
  timeouts, the shared claim defaults, ``LEARN_MARGIN``, the report's scale ...), and the per-learner tuned
  values of docs/learners.md and benchmarks/constants.md read by one extractor.
* **names**: every ``privacct.x.y`` in inline code resolves (module or attribute), every ``info["key"]``
  is a key some learner's run returns, every repository path in inline code exists, every relative link
  and its ``#anchor`` resolve, and a call written with its own parameter names (a signature) shows the
  function's real defaults.

Each check can fail: the ``test_*_can_fail`` tests break a doc in a scratch copy and watch the extractor see it.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import inspect
import io
import math
import re
import tomllib
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
DOCS = [ROOT / "README.md"] + sorted((ROOT / "docs").glob("*.md"))


def _rel(path: Path) -> str:
    return str(path.relative_to(ROOT))


# ============================================================================ commands
#: Positional placeholders and what stands in for them (a literal that is not installed here included).
POSITIONAL = {
    "ALGORITHM": "ucb-vi",
    "LOG": "log.json",
    "LOG.json": "log.json",
    "FAMILY": "tabular",
    "example-pucb": "ucb-vi",   # docs/extending.md's third-party learner (examples/custom_learner), not installed here
}
#: The value a placeholder after a flag stands for (single letters and capitals: ``--delta d``, ``--out DIR``).
VALUE_FOR_FLAG = {
    "--noise-scale": "2", "--sensitivity": "1", "--count": "3", "--tree-leaves": "8", "--counter-leaves": "8",
    "--delta": "1e-5", "--epsilon": "1", "--episodes": "8", "--seeds": "2", "--seed": "0", "--horizon": "2",
    "--trials": "100", "--canaries": "4", "--window": "2", "--confidence": "0.9", "--out": "out", "--scheduler": "tcp://127.0.0.1:8786",
    "--only": "ucb-vi", "--accountant": "rdp", "--strategy": "tree", "--counter": "tree", "--env": "riverswim",
    "--option": "beta=5", "--privacy": "jdp", "--calibration": "paper", "--observe": "released", "--bonus-scale": "1",
    "--constants": "tuned", "--mechanism": "laplace", "--example": "laplace-repeated", "--workers": "2", "--track": "paper",
}
_PLACEHOLDER = re.compile(r"[A-Z][A-Z0-9_.=]*|[a-z]")
_ELLIPSIS = ("...", "\u2026")


def _is_placeholder(token: str) -> bool:
    return token in POSITIONAL or _PLACEHOLDER.fullmatch(token) is not None


@dataclass(frozen=True)
class DocCommand:
    where: str          # file:line
    text: str           # as written (markdown escapes removed)
    strict: bool        # must parse without filling in required arguments


def _code_blocks(text: str):
    """(first line number, body) of fenced blocks in no language or a shell, and of indented blocks."""
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)```(\w*)\s*$", lines[i])
        if m:
            j = i + 1
            while j < len(lines) and not re.match(r"^\s*```\s*$", lines[j]):
                j += 1
            if m.group(2) in ("", "sh", "bash", "shell", "console"):
                yield i + 2, "\n".join(lines[i + 1:j])
            i = j + 1
            continue
        if lines[i].startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            yield i + 1, "\n".join(x[4:] for x in lines[i:j])
            i = j
            continue
        i += 1


def doc_commands(path: Path, text: str | None = None) -> list[DocCommand]:
    """Every ``privacct ...`` command line of one markdown file (see the module docstring)."""
    text = path.read_text(encoding="utf-8") if text is None else text
    out = []
    blocks = list(_code_blocks(text))
    for first, body in blocks:
        for k, line in enumerate(body.splitlines()):
            line = re.sub(r"\s+#.*$", "", line)
            for part in re.split(r"&&|\|\s+(?=privacct\b)|;", line):
                part = part.strip().removeprefix("$ ")
                if part.startswith("privacct "):
                    out.append(DocCommand(f"{_rel(path)}:{first + k}", part, strict=True))
    in_block = set()
    for first, body in blocks:
        in_block.update(range(first - 1, first + len(body.splitlines()) + 1))
    for n, line in enumerate(text.splitlines(), 1):
        if n in in_block:
            continue
        table_row = line.startswith("| `privacct ")
        for m in re.finditer(r"`(privacct [^`]+)`", line):
            out.append(DocCommand(f"{_rel(path)}:{n}", m.group(1).replace("\\|", "|").strip(), strict=table_row))
    return out


def _tokens(text: str) -> list[str]:
    """Synopsis tokens; a quoted argument ('...' or "...", as a shell reads it) is one word whatever it holds
    (brackets, bars, spaces), glued to the text right before it (``KEY='a b'``)."""
    out: list[str] = []
    glue = False
    for m in re.finditer(r"'([^']*)'|\"([^\"]*)\"|([^'\"]+)", text):
        if m.group(3) is None:
            word = m.group(1) if m.group(1) is not None else m.group(2)
            if glue and out:
                out[-1] += word
            else:
                out.append(word)
            glue = True
            continue
        plain = m.group(3)
        spaced = re.sub(r"([\[\]()])", r" \1 ", plain)
        spaced = re.sub(r"\s\|\s", " | ", spaced)
        words = spaced.split()
        if words and glue and out and not plain[0].isspace():
            out[-1] += words.pop(0)
        out += words
        glue = bool(plain) and not plain[-1].isspace()
    return out


def _parse_synopsis(tokens: list[str]):
    """A synopsis as a tree: ("seq", [...]), ("opt", seq), ("alt", [seq, ...]), ("word", [alternatives]),
    ("elide",) for an ellipsis outside brackets; an ellipsis inside brackets (repetition) is dropped."""
    pos = 0

    def alt(depth: int):
        nonlocal pos
        options = [seq(depth)]
        while pos < len(tokens) and tokens[pos] == "|":
            pos += 1
            options.append(seq(depth))
        return options[0] if len(options) == 1 else ("alt", options)

    def seq(depth: int):
        nonlocal pos
        items = []
        while pos < len(tokens) and tokens[pos] not in ("]", ")", "|"):
            t = tokens[pos]
            pos += 1
            if t in ("[", "("):
                inner = alt(depth + 1)
                if pos >= len(tokens) or tokens[pos] != ("]" if t == "[" else ")"):
                    raise ValueError(f"unbalanced {t!r}")
                pos += 1
                items.append(("opt", inner) if t == "[" else inner)
            elif t in _ELLIPSIS:
                if depth == 0:
                    items.append(("elide",))
            else:
                items.append(("word", t.split("|") if "|" in t and t != "|" else [t]))
        return ("seq", items)

    tree = alt(0)
    if pos != len(tokens):
        raise ValueError(f"unbalanced {tokens[pos]!r}")
    return tree


def _points(node, acc):
    kind = node[0]
    if kind == "seq":
        for x in node[1]:
            _points(x, acc)
    elif kind == "opt":
        acc.append((id(node), 2))
        _points(node[1], acc)
    elif kind == "alt":
        acc.append((id(node), len(node[1])))
        for x in node[1]:
            _points(x, acc)
    elif kind == "word" and len(node[1]) > 1:
        acc.append((id(node), len(node[1])))
    return acc


def _render(node, choice: dict, out: list) -> None:
    kind = node[0]
    if kind == "seq":
        for x in node[1]:
            _render(x, choice, out)
    elif kind == "opt":
        if choice.get(id(node), 0) == 0:       # 0: present
            _render(node[1], choice, out)
    elif kind == "alt":
        _render(node[1][choice.get(id(node), 0)], choice, out)
    elif kind == "word":
        out.append(node[1][choice.get(id(node), 0)])
    elif kind == "elide":
        out.append("...")


def expansions(text: str) -> list[list[str]]:
    """Concrete argument lists of one documented command: every optional part present and absent, every
    alternative taken at least once (one decision varied at a time)."""
    tree = _parse_synopsis(_tokens(text))
    points = _points(tree, [])
    variants = [{}, {pid: 1 for pid, n in points if n == 2 and _is_opt(tree, pid)}]
    for pid, n in points:
        for k in range(1, n):
            variants.append({pid: k})
    seen, out = set(), []
    for v in variants:
        argv: list[str] = []
        _render(tree, v, argv)
        if tuple(argv) not in seen:
            seen.add(tuple(argv))
            out.append(argv)
    return out


def _is_opt(tree, pid) -> bool:
    found = []

    def walk(node):
        if id(node) == pid:
            found.append(node[0] == "opt")
        if node[0] == "seq":
            for x in node[1]:
                walk(x)
        elif node[0] == "opt":
            walk(node[1])
        elif node[0] == "alt":
            for x in node[1]:
                walk(x)

    walk(tree)
    return bool(found and found[0])


def _substitute(argv: list[str]) -> tuple[list[str], bool]:
    """(argv with placeholders replaced, whether arguments were elided)."""
    elided = "..." in argv
    argv = [a for a in argv if a != "..."]
    out = []
    for i, a in enumerate(argv):
        prev = argv[i - 1] if i else ""
        if prev.startswith("--") and "=" not in prev and _is_placeholder(a) and prev in VALUE_FOR_FLAG:
            out.append(VALUE_FOR_FLAG[prev])
        elif a in POSITIONAL or (_is_placeholder(a) and not prev.startswith("--")):
            out.append(POSITIONAL.get(a, a))
        else:
            out.append(a)
    return out, elided


_PARSER = None


def _parser() -> argparse.ArgumentParser:
    global _PARSER
    if _PARSER is None:
        from privacct.cli import build_parser

        _PARSER = build_parser()
    return _PARSER


def _try_parse(argv: list[str]) -> str | None:
    """None if privacct's parser accepts ``argv``, else its error message. Parses only: nothing runs."""
    err = io.StringIO()
    with contextlib.redirect_stderr(err), contextlib.redirect_stdout(io.StringIO()):
        try:
            _parser().parse_args(argv)
        except SystemExit as e:
            return None if e.code == 0 else err.getvalue().strip().splitlines()[-1]
    return None


def check_command(cmd: DocCommand) -> list[str]:
    """What is wrong with one documented command (an empty list when every expansion parses)."""
    if cmd.text.split()[1:2] and cmd.text.split()[1] in ("--help", "-h"):
        return []
    try:
        variants = expansions(cmd.text)
    except ValueError as e:
        return [f"{cmd.where}: `{cmd.text}`: not a command line ({e})"]
    bad = []
    for raw in variants:
        argv, elided = _substitute(raw[1:])        # without "privacct"
        helped = any(a in ("--help", "-h") for a in argv)
        argv = [a for a in argv if a not in ("--help", "-h")]
        filled = []
        for _ in range(6):
            err = _try_parse(argv)
            if err is None:
                break
            m = re.search(r"the following arguments are required: (.*)$", err)
            one = re.search(r"one of the arguments (--[\w-]+)", err)
            needs = re.search(r"argument (--[\w-]+)(?:/[\w-]+)*: expected (?:one|at least one) argument", err)
            if m:
                missing = [x.strip() for x in m.group(1).split(",")]
                for x in missing:
                    if x.startswith("--"):
                        argv += [x, VALUE_FOR_FLAG.get(x, "1")]
                    else:
                        argv.insert(1, POSITIONAL.get(x, "ucb-vi"))
                filled += missing
            elif one:
                argv += [one.group(1), VALUE_FOR_FLAG.get(one.group(1), "1")]
                filled.append(one.group(1))
            elif needs and not cmd.strict:
                argv.insert(argv.index(needs.group(1)) + 1, VALUE_FOR_FLAG.get(needs.group(1), "1"))
                filled.append(needs.group(1) + " VALUE")
            else:
                break
        if err is not None:
            bad.append(f"{cmd.where}: `{cmd.text}` as `privacct {' '.join(argv)}`: {err}")
        elif filled and cmd.strict and not elided and not helped:
            bad.append(f"{cmd.where}: `{cmd.text}` leaves out required arguments: {', '.join(filled)}")
    return bad


ALL_COMMANDS = [c for p in DOCS for c in doc_commands(p)]


def test_the_docs_show_commands():
    assert len(ALL_COMMANDS) > 60
    assert {c.text.split()[1] for c in ALL_COMMANDS} >= {"report", "verify", "account", "calibrate", "schema", "run",
                                                         "reproduce", "audit", "mutants"}


@pytest.mark.parametrize("cmd", ALL_COMMANDS, ids=[f"{c.where}:{c.text[:40]}" for c in ALL_COMMANDS])
def test_every_documented_command_parses(cmd):
    bad = check_command(cmd)
    assert not bad, "\n".join(bad)


def test_the_command_check_can_fail():
    """An unknown flag, a bad choice, a missing required argument in a synopsis and an unparsable number are
    each seen (in a scratch text: the doc files are not touched)."""
    scratch = "\n".join([
        "| `privacct run ALGORITHM --episodes K --seeds N [--quiet]` | a synopsis without its required --out |",
        "`privacct account --mechanism laplace --noise-scale 1 --sensitivity 1 --count 3 --no-such-flag`",
        "`privacct verify LOG.json|- [--jsn]`",
        "`privacct audit ucb-vi --privacy cdp`",
        "`privacct calibrate --mechanism laplace --sensitivity 1_000 --count 3 --epsilon 1`",
        "",
        "    privacct reproduce tabular|linear-mixture|quantum --out DIR",
    ])
    cmds = doc_commands(ROOT / "README.md", scratch)
    assert len(cmds) == 6
    for c in cmds:
        assert check_command(c), c
    # and the same lines written right pass
    fixed = doc_commands(ROOT / "README.md", "\n".join([
        "| `privacct run ALGORITHM --episodes K --seeds N --out DIR [--quiet]` | x |",
        "`privacct verify LOG.json|- [--json]`",
        "",
        "    privacct reproduce tabular|linear-mixture|linear-mdp --out DIR",
    ]))
    assert all(not check_command(c) for c in fixed)


def test_a_synopsis_expands_to_every_alternative():
    got = {" ".join(a) for a in expansions("privacct account --mechanism gaussian|laplace (--count N | --tree-leaves K) "
                                           "[--delta d]")}
    assert "privacct account --mechanism gaussian --count N --delta d" in got
    assert "privacct account --mechanism laplace --count N --delta d" in got
    assert "privacct account --mechanism gaussian --tree-leaves K --delta d" in got
    assert "privacct account --mechanism gaussian --count N" in got


# ============================================================================ flag defaults
def _subparsers() -> dict[str, argparse.ArgumentParser]:
    action = next(a for a in _parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(action.choices)


def _action(command: str, flag: str) -> argparse.Action:
    return next(a for a in _subparsers()[command]._actions if flag in a.option_strings)


def _resolved_defaults() -> dict[tuple[str, str], object]:
    """Defaults the parser leaves to the command (``default=None``), from the code's own constants."""
    from privacct.algorithms.defaults import DEFAULT_CALIBRATION, DEFAULT_EPSILON
    from privacct.audits.cli import DEFAULT_CANARIES

    return {("run", "--epsilon"): DEFAULT_EPSILON, ("audit", "--epsilon"): DEFAULT_EPSILON,
            ("run", "--calibration"): DEFAULT_CALIBRATION, ("audit", "--calibration"): DEFAULT_CALIBRATION,
            ("audit", "--canaries"): DEFAULT_CANARIES}


#: What a help text's "(default X" says, when X is a literal: a number or a word.
_HELP_DEFAULT = re.compile(r"\(default:?\s+(-?[\d.]+(?:e-?\d+)?(?=[,;)\s])|[a-z][a-z-]*(?=[,;)]))")


def _same(stated: str, value: object) -> bool:
    if isinstance(value, bool) or value is None:
        return False
    if isinstance(value, (int, float)):
        try:
            return math.isclose(float(stated), float(value), rel_tol=1e-12)
        except ValueError:
            return False
    return stated == str(value)


def help_defaults() -> list[tuple[str, str, str, object]]:
    """(command, flag, stated, actual) for every literal default a --help text states."""
    resolved = _resolved_defaults()
    out = []
    for name, p in _subparsers().items():
        for a in p._actions:
            if not a.option_strings or not a.help:
                continue
            m = _HELP_DEFAULT.search(a.help)
            if m is None:
                continue
            flag = a.option_strings[0]
            actual = a.default if a.default is not None else resolved.get((name, flag), "(no default in the parser)")
            out.append((name, flag, m.group(1), actual))
    return out


def test_every_default_a_help_text_states_is_the_default():
    found = help_defaults()
    assert len(found) >= 10
    stated_only = {(c, f) for c, f, _, a in found if a == "(no default in the parser)"}
    assert not stated_only, stated_only       # every default a help states has a parser default or a code constant
    bad = [f"{c} {f}: help says default {s}, the parser's is {a!r}" for c, f, s, a in found
           if (c, f) not in stated_only and not _same(s, a)]
    assert not bad, "\n".join(bad)


def _doc_default(command: str, flag: str) -> object:
    """The default of ``command``'s ``flag``: the parser's, the code's constant, else what its help states."""
    a = _action(command, flag)
    if a.default is not None:
        return a.default
    resolved = _resolved_defaults()
    if (command, flag) in resolved:
        return resolved[command, flag]
    m = _HELP_DEFAULT.search(a.help or "")
    return m.group(1) if m else None


def _paragraphs(text: str):
    """(first line number, the paragraph on one line) of a markdown text (a table row is a paragraph)."""
    start, buf = 1, []
    for n, line in enumerate(text.splitlines() + [""], 1):
        if not line.strip() or line.lstrip().startswith("|"):
            if buf:
                yield start, " ".join(buf)
            if line.strip():
                yield n, line
            start, buf = n + 1, []
        else:
            if not buf:
                start = n
            buf.append(line.strip())


def doc_flag_defaults(path: Path, text: str | None = None) -> list[tuple[str, str, str, str]]:
    """(where, command, flag, stated) for each default a doc states for a flag: ``--flag V ... (default X)`` in
    one line, or a placeholder bound to a flag by a synopsis of the same file (``[--canaries M]``) followed by
    ``(default X)`` within a few words (``M canary users (default 1000)``)."""
    text = path.read_text(encoding="utf-8") if text is None else text
    bind: dict[str, tuple[str, str]] = {}
    for c in doc_commands(path, text):
        toks = c.text.replace("[", " ").replace("]", " ").split()
        for i, t in enumerate(toks[:-1]):
            if t.startswith("--") and re.fullmatch(r"[A-Z]", toks[i + 1]):
                bind.setdefault(toks[i + 1], (toks[1], t))
    out = []
    for n, line in _paragraphs(text):
        for m in re.finditer(r"\b([A-Z])\b(?: [a-z][\w-]*){1,3} \(default (-?[\d.]+)\)", line):
            if m.group(1) in bind:
                out.append((f"{_rel(path)}:{n}", *bind[m.group(1)], m.group(2)))
        for m in re.finditer(r"`([^`]*--[a-z][^`]*)`[^()`]{0,60}\(default (-?[\d.]+)\)", line):
            flag = re.findall(r"--[a-z][\w-]*", m.group(1))[-1]       # the last flag of the span: its value
            cmds = [c for c, p in _subparsers().items() if any(flag in a.option_strings for a in p._actions)]
            if len(cmds) == 1:
                out.append((f"{_rel(path)}:{n}", cmds[0], flag, m.group(2)))
    return out


def test_every_flag_default_the_docs_state_is_the_default():
    found = [d for p in DOCS for d in doc_flag_defaults(p)]
    assert {w.split(":")[0] for w, _, f, _ in found if f == "--canaries"} == {"README.md", "docs/auditing.md"}
    bad = [f"{w}: {c} {f} default {s}, the code's is {_doc_default(c, f)!r}" for w, c, f, s in found
           if not _same(s, _doc_default(c, f))]
    assert not bad, "\n".join(bad)


def test_the_flag_default_checks_can_fail():
    text = ("`privacct audit ALGORITHM --privacy P --one-run [--canaries M]` ... with M canary\nusers (default 999).\n\n"
            "`--seeds N` of run ... N seeds (default 3)\n")
    found = doc_flag_defaults(ROOT / "README.md", text)
    assert ("README.md:1", "audit", "--canaries", "999") in found
    assert any(not _same(s, _doc_default(c, f)) for _, c, f, s in found)
    assert _HELP_DEFAULT.search("K >= 1 episodes (default 1000)").group(1) == "1000"


def readme_exit_1_commands(text: str) -> set[str] | None:
    """The commands the README's **Exit codes** paragraph says can exit 1."""
    m = re.search(r"1 a check did not pass \((.*?); the other commands never exit 1\)", " ".join(text.split()))
    return None if m is None else set(re.findall(r"`(\w+)`:", m.group(1)))


def test_the_commands_the_readme_says_exit_1_are_those_that_can():
    """Mechanically, from each command function's source (``return 1``, ``... else 1``, the audit's EXIT_CODES)."""
    helper_dir = ROOT / "tests" / "privacct"
    spec = importlib.util.spec_from_file_location("_cli_arguments", helper_dir / "test_cli_arguments.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    can = {name for name, p in _subparsers().items() if mod._returns_1(p.get_default("func"))}
    said = readme_exit_1_commands((ROOT / "README.md").read_text(encoding="utf-8"))
    assert said == can, (said, can)
    assert readme_exit_1_commands("1 a check did not pass (`verify`: x; `run`: y; the other commands never exit 1)") \
        == {"verify", "run"}


# ============================================================================ constants
def _tabular_tuned(name: str, key: str):
    from privacct.algorithms.tabular import TUNED

    return TUNED[name]["bonus_scale"] if key == "bonus_scale" else TUNED[name]["options"][key]


def _lattice_spacing() -> float:
    from privacct.accounting.rootfind import LATTICE

    return 2.0 ** (1.0 / LATTICE) - 1.0


def _code(expr: str):
    """The value of ``module:attr.attr`` (or a callable's result for the lambdas below)."""
    mod, _, attr = expr.partition(":")
    value = importlib.import_module(mod)
    for part in attr.split("."):
        value = getattr(value, part)
    return value


def _default_delta(name: str, privacy: str) -> float:
    from privacct.algorithms.defaults import default_delta

    return default_delta(name, privacy)


def _account_delta(mechanism: str) -> float:
    """The delta ``privacct account`` uses without --delta (privacct.cli._delta_for)."""
    from privacct.cli import _delta_for

    return _delta_for(argparse.Namespace(delta=None, mechanism=mechanism))


def _learn_margin() -> float:
    return _code("privacct.audits.report.regret:LEARN_MARGIN")


#: (doc file, regex, the code's values: one per group of the regex, as a value or a callable, rel. tolerance).
#: Numbers read from the doc: decimal, "10⁻⁶", "6.6·10⁻⁷", "2^53", "10^6", "4 MiB" (x 2^20), "80%" (/ 100).
CONSTANTS = [
    ("README.md", r"tabular VI ([\d.]+), PO\s+([\d.]+)",
     (lambda: _tabular_tuned("ucb-vi", "bonus_scale"), lambda: _tabular_tuned("ucb-po", "bonus_scale")), 0),
    ("README.md", r"linear mixture ([\d.]+), linear-MDP β = ([\d.]+)",
     (lambda: _code("privacct.algorithms.linear_mixture.reproduce:OWN_BONUS"),
      lambda: _code("privacct.algorithms.linear_mdp:TUNED_BETA")), 0),
    ("README.md", r"E-term multiplier ([\d.]+) and PO step η = ([\d.]+)",
     (lambda: _tabular_tuned("ucb-vi", "e_scale"), lambda: _tabular_tuned("ucb-po", "eta")), 0),
    ("README.md", r"\(relative tolerance (\S+) for floating-point rounding", (lambda: _code("privacct.explain:VERDICT_RTOL"),), 0),
    ("README.md", r"\(relative spacing (\S+?)\)", (_lattice_spacing,), 0.01),
    ("README.md", r"at most (\d+ MiB) and (\d+) levels of nesting",
     (lambda: _code("privacct.log:MAX_DOCUMENT_CHARS"), lambda: _code("privacct.log:MAX_DEPTH")), 0),
    ("README.md", r"`-`, read as strictly as a file, at most (\d+ MiB)", (lambda: _code("privacct.log:MAX_DOCUMENT_CHARS"),), 0),
    ("README.md", r"counts in \[1, (2\^53)\]", (lambda: _code("privacct.errors:MAX_COUNT"),), 0),
    ("README.md", r"accounted at δ = 0 if all-Laplace, else (10⁻⁶)", (lambda: _code("privacct.accounting.base:DEFAULT_DELTA"),), 0),
    ("README.md", r"\((\d+%) of the available memory", (lambda: _code("privacct.resources:FRACTION"),), 0),
    ("README.md", r"unreachable or wrong address is one line within about (\d+) s",
     (lambda: _code("privacct.algorithms.scaleout:PROBE_TIMEOUT"),), 0),
    ("README.md", r"`PRIVACCT_PROGRESS_INTERVAL` seconds, default (\d+)", (lambda: _code("privacct.progress:INTERVAL"),), 0),
    ("README.md", r"does not learn \(within (\d+%) of uniform\)", (_learn_margin,), 0),
    ("docs/report.md", r"whole interval lies below (0\.9) U", (lambda: 1.0 - _learn_margin(),), 1e-12),
    ("docs/report.md", r"With fewer than \*\*(\d+) seeds\*\*", (lambda: _code("privacct.audits.report.regret:MIN_SEEDS"),), 0),
    ("README.md", r"up to (10\^6) identical pure releases", (lambda: _code("privacct.accounting.advanced:AdvancedComposition.KOV_MAX_COUNT"),), 0),
    ("README.md", r"\(δ defaults to (0) for Laplace; required for Gaussian\)", (lambda: _account_delta("laplace"),), 0),
    ("README.md", r"default to the same claim: ε = (\d+)", (lambda: _code("privacct.algorithms.defaults:DEFAULT_EPSILON"),), 0),
    ("README.md", r"e\.g\. (10⁻⁵) for `pp-ucrl-vtr`, (0) for the Laplace tabular", (lambda: _default_delta("pp-ucrl-vtr", "jdp"),
                                                                                 lambda: _default_delta("ucb-vi", "jdp")), 0),
    ("README.md", r"same pipeline \(same trials, tester, confidence split, pairs\) (\d+) times",
     (lambda: _code("privacct.audits.power:LEAKIER_REPLICATES"),), 0),
    ("README.md", r"Python ≥ ([\d.]+)\.", (lambda: float(re.search(r">=\s*([\d.]+)", _pyproject()["project"]["requires-python"]).group(1)),), 0),
    ("README.md", r"dp-accounting ([\d.]+) \(which pins attrs < (\d+)\)",
     (lambda: _pinned("dp-accounting", "=="), lambda: _pinned("attrs", "<")), 0),
    ("docs/auditing.md", r"default claim, epsilon = (\d+) and delta = (\d+) \(`DEFAULT_CLAIM`",
     (lambda: _code("privacct.audits.pytest_plugin:DEFAULT_CLAIM")["epsilon"],
      lambda: _code("privacct.audits.pytest_plugin:DEFAULT_CLAIM")["delta"]), 0),
    ("docs/extending.md", r"\| `report_episodes` \| [^|]+\| (\d+) and (\d+) \|",
     (lambda: _code("privacct.algorithms.contract:ReportEpisodes")().default, lambda: _code("privacct.algorithms.contract:ReportEpisodes")().tiny), 0),
    ("docs/extending.md", r"\| `audit_setting` \|[^|]+\| the test settings, ([\d ]+) trials per side \|",
     (lambda: _code("privacct.algorithms.contract:AuditSetting").DEFAULT_TRIALS,), 0),
    ("docs/extending.md", r"\| `constants`, `default_constants` \|[^|]+\| `(\w+)` \|",
     (lambda: _code("privacct.algorithms.contract:LearnerSpec").__dataclass_fields__["default_constants"].default,), 0),
    ("docs/learners.md", r"Chosen values: tabular VI `bonus_scale` ([\d.]+), PO\s+([\d.]+) and η = ([\d.]+) \(`e_scale` ([\d.]+) "
                         r"and confidence δ = ([\d.]+)",
     (lambda: _tabular_tuned("ucb-vi", "bonus_scale"), lambda: _tabular_tuned("ucb-po", "bonus_scale"),
      lambda: _tabular_tuned("ucb-po", "eta"), lambda: _tabular_tuned("ucb-vi", "e_scale"),
      lambda: _tabular_tuned("ucb-vi", "confidence_delta")), 0),
    ("docs/learners.md", r"linear MDP `beta` = ([\d.]+)\.", (lambda: _code("privacct.algorithms.linear_mdp:TUNED_BETA"),), 0),
    ("docs/seed-002-tabular.md", r"VI `bonus_scale` ([\d.]+), PO `bonus_scale` ([\d.]+) and `η = ([\d.]+)`",
     (lambda: _tabular_tuned("ucb-vi", "bonus_scale"), lambda: _tabular_tuned("ucb-po", "bonus_scale"),
      lambda: _tabular_tuned("ucb-po", "eta")), 0),
    ("benchmarks/constants.md", r"UCB-VI: `bonus_scale` ([\d.]+) ", (lambda: _tabular_tuned("ucb-vi", "bonus_scale"),), 0),
    ("benchmarks/constants.md", r"UCB-PO: `bonus_scale` ([\d.]+) with η = ([\d.]+)",
     (lambda: _tabular_tuned("ucb-po", "bonus_scale"), lambda: _tabular_tuned("ucb-po", "eta")), 0),
    ("benchmarks/constants.md", r"LSVI-UCB: β = ([\d.]+) ", (lambda: _code("privacct.algorithms.linear_mdp:TUNED_BETA"),), 0),
    ("docs/accounting.md", r"accountants' floor of (10⁻¹⁰⁰)", (lambda: _code("privacct.accounting.base:RATIO_FLOOR"),), 0),
    ("docs/accounting.md", r"\[`MIN_NOISE_SCALE`, `MAX_NOISE_SCALE`\] = \[(10⁻³⁰⁰), half the largest float\]",
     (lambda: _code("privacct.calibrate:MIN_NOISE_SCALE"),), 0),
    ("README.md", r"and `--calibration (\w+)` \(the printed noise\)", (lambda: _code("privacct.algorithms.defaults:DEFAULT_CALIBRATION"),), 0),
    ("docs/report.md", r"as a multiple of U with its (\d+%) interval", (lambda: _code("privacct.audits.report.regret:LEVEL"),), 0),
    ("docs/report.md", r"the (\d+%) Student-t interval of the mean final regret", (lambda: _code("privacct.audits.report.regret:LEVEL"),), 0),
    ("docs/report.md", r"learns\*\* when the whole interval lies below ([\d.]+) U", (lambda: 1 - _learn_margin(),), 1e-12),
    ("docs/report.md", r"With fewer than \*\*(\d+) seeds\*\* \(`MIN_SEEDS`\)", (lambda: _code("privacct.audits.report.regret:MIN_SEEDS"),), 0),
    ("docs/report.md", r"regret at K = (\d+) \(tabular\) and (\d+) \(linear families\) with (\d+) seeds \(the least for a "
                       r"learning claim\), audits with ([\d ]+) to ([\d ]+) trials per side\. `--full` runs the settings' K "
                       r"with (\d+) seeds",
     (lambda: _code("privacct.algorithms.tabular:REPORT_EPISODES").default,
      lambda: _code("privacct.algorithms.contract:ReportEpisodes")().default,
      lambda: _code("privacct.audits.report.rows:ReportScale").default().seeds,
      lambda: _code("privacct.audits.report.rows:ReportScale").default().audit_trials,
      lambda: _code("privacct.audits.report.rows:ReportScale").default().max_audit_trials,
      lambda: _code("privacct.audits.report.rows:ReportScale").full().seeds), 0),
]
_SUP = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻", "0123456789-")


def read_number(text: str) -> float | str:
    """A number as the docs write it (see :data:`CONSTANTS`); a word is returned as it is."""
    t = text.strip().replace("\u2009", "").replace(" ", "")
    if m := re.fullmatch(r"(\d+)MiB", t):
        return float(m.group(1)) * 2**20
    if m := re.fullmatch(r"([\d.]+)%", t):
        return float(m.group(1)) / 100
    if m := re.fullmatch(r"(\d+)\^(\d+)", t):
        return float(int(m.group(1)) ** int(m.group(2)))
    if m := re.fullmatch(r"(?:([\d.]+)·)?10([⁰¹²³⁴⁵⁶⁷⁸⁹⁻]+)", t):
        return float(m.group(1) or 1) * 10.0 ** int(m.group(2).translate(_SUP))
    try:
        return float(t)
    except ValueError:
        return text


def _pyproject() -> dict:
    return tomllib.loads((ROOT / "pyproject.toml").read_text())


def _pinned(package: str, op: str) -> float:
    for dep in _pyproject()["project"]["dependencies"]:
        if re.match(rf"{re.escape(package)}\b", dep):
            m = re.search(rf"{re.escape(op)}\s*([\d.]+)", dep)
            if m:
                return m.group(1)
    return "(not pinned)"


def check_constant(doc: str, pattern: str, values, rtol: float, text: str | None = None) -> list[str]:
    text = (ROOT / doc).read_text(encoding="utf-8") if text is None else text
    m = re.search(pattern, " ".join(text.split()))
    if m is None:
        return [f"{doc}: no statement matches {pattern!r} (reworded? update the table)"]
    bad = []
    for i, want in enumerate(values, 1):
        want = want() if callable(want) else want
        got = read_number(m.group(i))
        if isinstance(want, str) and re.fullmatch(r"[\d.]+", want):   # a version
            ok = m.group(i) == want
        elif isinstance(got, float) and isinstance(want, (int, float)) and not isinstance(want, bool):
            ok = math.isclose(got, float(want), rel_tol=max(rtol, 1e-12))
        else:
            ok = str(got) == str(want)
        if not ok:
            bad.append(f"{doc}: {m.group(0)!r} states {m.group(i)}, the code's value is {want!r}")
    return bad


@pytest.mark.parametrize("doc, pattern, values, rtol", CONSTANTS, ids=[f"{d}:{p[:30]}" for d, p, _, _ in CONSTANTS])
def test_every_constant_the_docs_state_is_the_codes(doc, pattern, values, rtol):
    bad = check_constant(doc, pattern, values, rtol)
    assert not bad, "\n".join(bad)


def tuned_values(text: str) -> list[tuple[str, float, float | None]]:
    """(learner, bonus_scale, eta or None) for every "`learner` VALUE [with η = X]" of a linear-mixture learner."""
    from privacct.algorithms.linear_mixture.learners import TUNED_BONUS

    names = "|".join(sorted(map(re.escape, TUNED_BONUS), key=len, reverse=True))
    out = []
    for m in re.finditer(rf"`({names})`(?: \(and its Laplace variant\)| and its Laplace variant)? ([\d.]+)"
                         rf"(?: with η = ([\d.]+))?", " ".join(text.split())):
        out.append((m.group(1), float(m.group(2)), None if m.group(3) is None else float(m.group(3))))
    return out


@pytest.mark.parametrize("doc", ["docs/learners.md", "benchmarks/constants.md"])
def test_the_tuned_linear_mixture_constants_the_docs_list_are_the_codes(doc):
    from privacct.algorithms.linear_mixture.learners import TUNED_BONUS, TUNED_OPTIONS

    found = tuned_values((ROOT / doc).read_text(encoding="utf-8"))
    assert {n for n, _, _ in found} >= {"ucrl-vtr", "ldp-ucrl-vtr", "private-linopt-vi", "pp-ucrl-vtr", "pp-ucrl-vtr-plus"}
    bad = [f"{doc}: `{n}` {v:g}, the code's tuned bonus_scale is {TUNED_BONUS[n]:g}" for n, v, _ in found if v != TUNED_BONUS[n]]
    bad += [f"{doc}: `{n}` eta {e:g}, the code's is {dict(TUNED_OPTIONS.get(n, ())).get('eta')}" for n, _, e in found
            if e is not None and e != dict(TUNED_OPTIONS.get(n, ())).get("eta")]
    assert not bad, "\n".join(bad)


def test_the_constant_checks_can_fail():
    """The review's finding, replayed on a scratch copy: README 0.01 / 0.005 against the code's 0.002 / 0.0005."""
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    doc, pattern, values, rtol = CONSTANTS[0]
    assert not check_constant(doc, pattern, values, rtol, readme)
    stale = re.sub(r"tabular VI [\d.]+, PO\s+[\d.]+", "tabular VI 0.01, PO 0.005", " ".join(readme.split()))
    assert len(check_constant(doc, pattern, values, rtol, stale)) == 2
    assert check_constant(doc, "no such statement (x)", values, rtol, readme)
    assert read_number("10⁻⁶") == 1e-6 and read_number("6.6·10⁻⁷") == pytest.approx(6.6e-7) and read_number("80%") == 0.8
    bad = tuned_values("`pp-ucrl-vtr-plus` 0.002, `private-linopt-po` 0.01 with η = 1")
    assert bad == [("pp-ucrl-vtr-plus", 0.002, None), ("private-linopt-po", 0.01, 1.0)]


# ============================================================================ names, keys, paths, links, signatures
def _entry_point_groups() -> set[str]:
    return set(_pyproject()["project"].get("entry-points", {}))


def resolve_dotted(name: str) -> str | None:
    """None if ``privacct.x.y`` is a module or an attribute chain of one, else why not."""
    parts = name.split(".")
    for i in range(len(parts), 0, -1):
        try:
            obj = importlib.import_module(".".join(parts[:i]))
        except ImportError:
            continue
        for j, attr in enumerate(parts[i:], i):
            if not hasattr(obj, attr):
                return f"{'.'.join(parts[:j])} has no {attr!r}"
            obj = getattr(obj, attr)
        return None
    return "no such module"


def dotted_names(text: str) -> list[tuple[int, str]]:
    out = []
    for n, line in enumerate(text.splitlines(), 1):
        for span in re.findall(r"`([^`]+)`", line):
            for m in re.finditer(r"\bprivacct(?:\.[A-Za-z_]\w*)+", span):
                if not (m.end() < len(span) and span[m.end()] == "-"):
                    out.append((n, m.group(0)))
    return out


def test_every_privacct_name_the_docs_cite_exists():
    groups = _entry_point_groups()
    bad = []
    for p in DOCS:
        for n, name in dotted_names(p.read_text(encoding="utf-8")):
            if name in groups:
                continue
            why = resolve_dotted(name)
            if why is not None:
                bad.append(f"{_rel(p)}:{n}: `{name}`: {why}")
    assert not bad, "\n".join(bad)


@pytest.fixture(scope="module")
def info_keys() -> set[str]:
    """Every key of ``RunResult.info`` that a registered learner returns (each privacy model, its test settings)."""
    from privacct.algorithms.contract import RunConfig
    from privacct.algorithms.registry import learners
    from privacct.rng import spawn_sequences

    keys: set[str] = set()
    for name, spec in sorted(learners().items()):
        for privacy in spec.privacy_models:
            kw = dict(spec.test_settings)
            delta = kw.pop("delta", 0.0)
            res = spec.run(RunConfig(name, privacy, epsilon=1.0, delta=0.0 if privacy == "none" else delta,
                                     calibration="tight", **kw), spawn_sequences(0, 1))
            keys |= set(res.info)
    return keys


def doc_info_keys(text: str) -> list[tuple[int, str]]:
    return [(n, m.group(1)) for n, line in enumerate(text.splitlines(), 1)
            for m in re.finditer(r"`info\[\"(\w+)\"\]`", line)]


def test_every_info_key_the_docs_name_is_returned(info_keys):
    """The docs once named info["released_path"] and info["released_user1"], which no learner returns since the
    observations come from privacct.tap (docs/auditing.md#observations-from-the-primitives)."""
    found = [(p, n, k) for p in DOCS for n, k in doc_info_keys(p.read_text(encoding="utf-8"))]
    assert found
    bad = [f"{_rel(p)}:{n}: info[{k!r}] is returned by no learner" for p, n, k in found if k not in info_keys]
    assert not bad, "\n".join(bad)
    assert doc_info_keys('the path (`info["released_path"]`)') == [(1, "released_path")]


_PATH = re.compile(r"`((?:privacct|algorithms|audits|tests|benchmarks|examples|docs)/[\w./-]+\.(?:py|md|json|toml|png))"
                   r"(?::\s*([A-Za-z_]\w*))?")


def bad_paths(doc: Path, text: str) -> list[str]:
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        for m in _PATH.finditer(line):
            path = ROOT / m.group(1)
            if not path.exists():
                bad.append(f"{_rel(doc)}:{n}: {m.group(1)} does not exist")
            elif m.group(2) and not re.search(rf"\b{m.group(2)}\b", path.read_text(encoding="utf-8")):
                bad.append(f"{_rel(doc)}:{n}: {m.group(1)} has no {m.group(2)}")
    return bad


def test_every_repository_path_the_docs_name_exists():
    """``benchmarks/x.py``, ``tests/y.py``, ``algorithms/tabular/privatizers.py: name`` (the name must be in it)."""
    bad = [b for p in DOCS for b in bad_paths(p, p.read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)


def _slug(heading: str) -> str:
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"^```.*?^```", "", page.read_text(encoding="utf-8"), flags=re.M | re.S)
    return {_slug(h) for h in re.findall(r"^#{1,6}\s+(.*?)\s*#*\s*$", text, re.M)}


def bad_links(doc: Path, text: str) -> list[str]:
    bad = []
    for n, line in enumerate(text.splitlines(), 1):
        for target in re.findall(r"\]\(([^)\s]+)\)", line):
            if re.match(r"[a-z]+:", target):
                continue
            page, _, anchor = target.partition("#")
            path = (doc.parent / page).resolve() if page else doc
            if not path.exists():
                bad.append(f"{_rel(doc)}:{n}: link {target} -> no such file")
            elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
                bad.append(f"{_rel(doc)}:{n}: link {target} -> no heading #{anchor}")
    return bad


def test_every_relative_link_and_anchor_resolves():
    bad = [b for p in DOCS for b in bad_links(p, p.read_text(encoding="utf-8"))]
    assert not bad, "\n".join(bad)


def doc_signatures(text: str) -> list[tuple[int, str, str]]:
    """(line, dotted name, argument text) of every inline ``privacct.x.f(...)`` call."""
    return [(n, m.group(1), m.group(2)) for n, line in enumerate(" ".join(text.split("\n")).split("\n"), 1)
            for m in re.finditer(r"`(privacct(?:\.\w+)+)\(([^`]*)\)`", line)]


def check_signature(name: str, args: str) -> list[str]:
    """A call whose positional arguments are the function's own parameter names is its signature: every
    ``key=literal`` it shows must be that parameter's default (``...`` and non-literals are not checked)."""
    import ast

    obj = _code(name.rsplit(".", 1)[0] + ":" + name.rsplit(".", 1)[1])
    params = inspect.signature(obj).parameters
    try:
        call = ast.parse(f"f({args.replace('...', 'ELIDED')})", mode="eval").body
    except SyntaxError:
        return []
    positional = [a.id for a in call.args if isinstance(a, ast.Name)]
    if not positional or positional != list(params)[:len(positional)]:
        return []
    bad = []
    for kw in call.keywords:
        if kw.arg not in params:
            bad.append(f"{name}: no parameter {kw.arg!r}")
            continue
        try:
            value = ast.literal_eval(kw.value)
        except ValueError:
            continue
        default = params[kw.arg].default
        if default is inspect.Parameter.empty or default != value:
            bad.append(f"{name}({kw.arg}={value!r}): the default is "
                       f"{'none (required)' if default is inspect.Parameter.empty else repr(default)}")
    return bad


def test_every_signature_the_docs_show_has_the_real_defaults():
    bad, seen = [], 0
    for p in DOCS:
        text = " ".join(p.read_text(encoding="utf-8").split())
        for m in re.finditer(r"`(privacct(?:\.\w+)+)\(([^`]*)\)`", text):
            seen += 1
            bad += [f"{_rel(p)}: {b}" for b in check_signature(m.group(1), m.group(2))]
    assert seen >= 5
    assert not bad, "\n".join(bad)


def test_the_path_link_and_key_checks_can_fail(info_keys):
    readme = ROOT / "README.md"
    assert bad_paths(readme, "see `benchmarks/tune_constants.py` and `algorithms/tabular/__init__.py: TUNED`") == []
    assert len(bad_paths(readme, "see `benchmarks/no_such_bench.py`, `algorithms/tabular/__init__.py: NO_SUCH`")) == 2
    page = "docs" + "/auditing.md"   # written apart: tests/test_docs_citations.py checks every page a test cites
    assert bad_links(readme, f"[a]({page}#verdicts-and-power)") == []
    assert len(bad_links(readme, f"[a]({page}#no-such-heading) [b]({page[:-11]}nope.md)")) == 2
    keys = [k for _, k in doc_info_keys('`info["final_release"]`, `info["released_path"]`')]
    assert [k for k in keys if k not in info_keys] == ["released_path"]


@pytest.mark.parametrize("row", range(len(CONSTANTS)))
def test_every_constant_row_can_fail(row):
    """Each row of CONSTANTS, run on a scratch copy of its doc whose stated value is changed, reports it."""
    doc, pattern, values, rtol = CONSTANTS[row]
    text = " ".join((ROOT / doc).read_text(encoding="utf-8").split())
    m = re.search(pattern, text)
    assert m is not None
    for i in range(1, len(values) + 1):
        stated = m.group(i)
        digit = re.search(r"\d", stated)
        changed = (stated[:digit.start()] + str((int(digit.group()) + 1) % 10) + stated[digit.end():] if digit
                   else stated + "x")
        scratch = text[:m.start(i)] + changed + text[m.end(i):]
        assert check_constant(doc, pattern, values, rtol, scratch), (doc, stated, changed)


def test_the_name_checks_can_fail():
    assert resolve_dotted("privacct.tap.user_contribution") is None
    assert resolve_dotted("privacct.tap.released_path") is not None
    assert resolve_dotted("privacct.no_such_module") is not None
    assert check_signature("privacct.audits.audit_mechanism", "mechanism, dataset, neighbour, epsilon=1.0, confidence=0.9")
    assert not check_signature("privacct.audits.audit_mechanism", "mechanism, dataset, neighbour, confidence=0.95")
    assert not check_signature("privacct.audits.audit_mechanism", "m, D, D2, trials=20_000")     # an example call
