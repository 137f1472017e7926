"""No import circle through the log or the counters (issue 22 item 5), and the light layer stays light.

The circles ``privacct.log <-> privacct.log_readings`` and ``privacct.log <-> privacct.counters.strategies`` were each
kept alive by a deferred import (one at the end of log.py, one inside ``ReleaseGroup.sensitivity_multiplier``). They
are gone: release groups live one level down (privacct/log_groups.py), the readings build on them, the log on both;
a structure asks the counter registry (privacct/counters/registry.py), which imports nothing of the log, and the
strategies' files import only privacct/counters/base.py and privacct/errors.py.

Checked two ways: statically, on the graph of every import statement of privacct, privacct.algorithms and
privacct.audits wherever it stands (module level, inside a function, after the code: a deferred import is an edge
all the same; only ``if TYPE_CHECKING:`` blocks are left out), plus the registry's lazily imported built-ins; and
by importing each guarded module first in a fresh interpreter (a circle makes some first-import orders fail).
"""

from __future__ import annotations

import ast
import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

from privacct.counters.registry import _BUILTIN

#: The modules no circle may pass through (the counters package: every module in it).
GUARDED = ("privacct.log", "privacct.log_groups", "privacct.log_readings", "privacct.schema", "privacct.ledger",
           "privacct.counters")
#: Loaded by ``import privacct.log`` and by ``privacct --help``: no numerics (privacct/cli.py's promise).
LIGHT = ("privacct.log", "privacct.log_groups", "privacct.log_readings", "privacct.schema", "privacct.counters.registry",
         "privacct.counters.base")


def _roots() -> dict[str, Path]:
    """Package name -> folder, as installed (algorithms/ is privacct.algorithms, audits/ privacct.audits)."""
    out = {}
    for name in ("privacct", "privacct.algorithms", "privacct.audits"):
        spec = importlib.util.find_spec(name)
        out[name] = Path(next(iter(spec.submodule_search_locations)))
    return out


def _modules() -> dict[str, Path]:
    """Every module of the three packages: dotted name -> file."""
    roots = _roots()
    mods: dict[str, Path] = {}
    for pkg, root in roots.items():
        for path in sorted(root.rglob("*.py")):
            rel = path.relative_to(root).with_suffix("")
            parts = [p for p in rel.parts if p != "__init__"]
            name = ".".join([pkg, *parts])
            if any(name == other or name.startswith(other + ".") for other in roots if other != pkg and
                   other.startswith(pkg + ".")):
                continue                      # a nested package's folder is its own root
            mods[name] = path
    return mods


def _is_type_checking(node: ast.If) -> bool:
    t = node.test
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def imports_of(name: str, source: str, modules) -> set[str]:
    """The modules (among ``modules``) that module ``name`` imports anywhere in ``source`` (and their packages)."""
    package = name.rpartition(".")[0]
    found: set[str] = set()

    def add(target: str) -> None:
        parts = target.split(".")
        for i in range(1, len(parts) + 1):          # importing a.b.c runs a and a.b first
            t = ".".join(parts[:i])
            if t in modules and t != name:
                found.add(t)

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.If) and _is_type_checking(child):
                for other in child.orelse:
                    visit(other)
                continue
            if isinstance(child, ast.Import):
                for a in child.names:
                    add(a.name)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")
                    base = base[:len(base) - (child.level - 1)]
                    mod = ".".join(base + ([child.module] if child.module else []))
                else:
                    mod = child.module or ""
                add(mod)
                for a in child.names:
                    add(f"{mod}.{a.name}")           # a submodule imported by name
            visit(child)

    visit(ast.parse(source))
    return found


def import_graph() -> dict[str, set[str]]:
    mods = _modules()
    graph = {}
    for name, path in mods.items():
        src = path.read_text(encoding="utf-8")
        # a package's relative imports resolve from the package itself
        graph[name] = imports_of(name + ".__init__" if path.name == "__init__.py" else name, src, mods) - {name}
    # the registry imports its built-in strategies by name (importlib): edges all the same
    graph["privacct.counters.registry"] |= {f"privacct.counters.{m}" for m, _ in _BUILTIN.values()}
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan), each sorted."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on: set[str] = set()
    out: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(graph.get(v, ())):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                out.append(sorted(comp))

    sys.setrecursionlimit(max(sys.getrecursionlimit(), 10_000))
    for v in sorted(graph):
        if v not in index:
            strong(v)
    return out


def _guarded(name: str) -> bool:
    return any(name == g or name.startswith(g + ".") for g in GUARDED)


def test_no_import_circle_through_the_log_or_the_counters():
    graph = import_graph()
    assert "privacct.log_readings" in graph["privacct.log"] and "privacct.log_groups" in graph["privacct.log_readings"]
    bad = [c for c in circles(graph) if any(_guarded(m) for m in c)]
    assert not bad, "import circles through the log or the counters:\n" + "\n".join(" <-> ".join(c) for c in bad)
    # the two of issue 22, by name: nothing under the log reaches back up to it
    assert "privacct.log" not in graph["privacct.log_readings"] and "privacct.log" not in graph["privacct.log_groups"]
    assert not any(m.startswith("privacct.counters.strategies") for m in graph["privacct.log"] | graph["privacct.log_groups"])


def test_the_guard_sees_deferred_imports_and_finds_circles():
    mods = {"privacct.a", "privacct.b", "privacct.c", "privacct.counters", "privacct.counters.strategies"}
    deferred = "X = 1\ndef f():\n    from .counters.strategies import column_norm\n    return column_norm\n"
    at_the_end = "import math\nfrom .b import y  # noqa: E402\n"
    typing_only = "from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .c import Z\n"
    assert imports_of("privacct.a", deferred, mods) == {"privacct.counters", "privacct.counters.strategies"}
    assert imports_of("privacct.a", at_the_end, mods) == {"privacct.b"}
    assert imports_of("privacct.a", typing_only, mods) == set()
    assert circles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert circles({"a": {"b"}, "b": set()}) == []


@pytest.mark.parametrize("first", GUARDED[:-1] + ("privacct.counters.registry", "privacct.counters.strategies",
                                                 "privacct.counters.counter", "privacct.counters.compare",
                                                 "privacct.counters.tree", "privacct.counters.blt"))
def test_each_module_imports_first_in_a_fresh_interpreter(first):
    code = f"import {first}, privacct.log; print(privacct.log.Reading.__name__, list(privacct.log.FACTORIZED_STRATEGIES))"
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split(maxsplit=1) == ["Reading", "['tree', 'tree-honaker', 'sqrt-toeplitz', 'blt']\n"]


def test_the_log_and_the_registry_load_no_numerics():
    code = ("import sys\n" + "".join(f"import {m}\n" for m in LIGHT) +
            "from privacct.log import FACTORIZED_STRATEGIES, Structure\n"
            "assert list(FACTORIZED_STRATEGIES) and Structure.tree(4).per_user_count() == 3\n"
            "print(sorted(m for m in ('numpy', 'scipy', 'dp_accounting', 'matplotlib') if m in sys.modules))")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "[]"
