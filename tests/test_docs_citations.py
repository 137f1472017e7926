"""Every citation in code and tests points into the repository's own docs/ (or at a paper equation):
no "notes ..." or DESIGN.md pointers that a clone cannot follow, and every docs/ page and anchor that
code cites exists (GitHub's heading slugs)."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CODE_DIRS = ("privacct", "algorithms", "audits", "tests", "benchmarks", "examples")
OUTSIDE = re.compile(r"DESIGN\.md|\bnotes\s*(§|Sec\.|seed-00\d)|seed-00\d notes|team notes|shared/notes", re.I)
CITE = re.compile(r"docs/([A-Za-z0-9_.-]+\.md)(?:#([A-Za-z0-9_-]+))?")


def _code_files():
    for d in CODE_DIRS:
        for p in sorted((ROOT / d).rglob("*.py")):
            if p.resolve() != Path(__file__).resolve():
                yield p


def _slug(heading: str) -> str:
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    heads = [m.group(1) for m in re.finditer(r"^#{1,6}\s+(.*?)\s*#*\s*$", page.read_text(encoding="utf-8"), re.M)]
    return {_slug(h) for h in heads}


def test_no_citation_points_outside_the_repository():
    bad = [f"{p.relative_to(ROOT)}:{i}: {line.strip()}" for p in _code_files()
           for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1) if OUTSIDE.search(line)]
    assert not bad, "citations a clone cannot follow (point into docs/ or at a paper equation):\n" + "\n".join(bad)


def test_every_cited_docs_page_and_anchor_exists():
    cache: dict[str, set[str]] = {}
    bad = []
    for p in _code_files():
        for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1):
            for page, anchor in CITE.findall(line):
                path = ROOT / "docs" / page
                if not path.is_file():
                    bad.append(f"{p.relative_to(ROOT)}:{i}: docs/{page} does not exist")
                    continue
                if anchor and anchor not in cache.setdefault(page, _anchors(path)):
                    bad.append(f"{p.relative_to(ROOT)}:{i}: docs/{page} has no heading #{anchor}")
    assert not bad, "\n".join(bad)


def test_the_slug_rule_matches_githubs():
    assert _slug("Eq. (6): node noise") == "eq-6-node-noise"
    assert _slug("Lemma 15 sums sensitivities") == "lemma-15-sums-sensitivities"
