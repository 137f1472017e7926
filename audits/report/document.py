"""The report's document model: one tree of sections, paragraphs, lists, tables and figures, from
which :mod:`.render` writes Markdown, HTML and terminal text, so no format can drop what another
shows (docs/report.md).

Text is a tuple of :class:`Span` (plain, bold, code or emphasis); renderers escape every span for
their format (and :func:`privacct.errors.printable` first: a string a log carries can never start a
line or inject markup). Section titles must be unique within a document (:class:`Document` checks).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Union

from privacct.errors import PrivacctError

STYLES = ("plain", "bold", "code", "em")


@dataclass(frozen=True)
class Span:
    text: str
    style: str = "plain"

    def __post_init__(self) -> None:
        if self.style not in STYLES:
            raise PrivacctError(f"span style must be one of {', '.join(STYLES)}, got {self.style!r}")
        object.__setattr__(self, "text", str(self.text))


Text = tuple[Span, ...]


def text(*parts: Union[str, Span, tuple[str, str]]) -> Text:
    """Text from strings (plain), Spans, or (style, string) pairs."""
    out = []
    for p in parts:
        if isinstance(p, Span):
            out.append(p)
        elif isinstance(p, tuple):
            out.append(Span(p[1], p[0]))
        else:
            out.append(Span(p))
    return tuple(out)


def plain(t: Text) -> str:
    return "".join(s.text for s in t)


@dataclass(frozen=True)
class Paragraph:
    text: Text


@dataclass(frozen=True)
class Bullets:
    """A list; an item is Text, or (Text, Bullets) for a nested list."""

    items: tuple[Union[Text, tuple[Text, "Bullets"]], ...]


#: A CSS class name (HTML only; Markdown and terminal text ignore classes).
_CLASS = re.compile(r"^[a-z][a-z0-9-]{0,39}$")


@dataclass(frozen=True)
class Table:
    """A table. ``css_class`` (the table), ``column_classes`` (one per column, "" for none) and
    ``row_classes`` (one per row, "" for none) mark it for the HTML's style sheet only (e.g. a
    failing verdict: row class ``fails``, column class ``verdict``); the text is the same in every format."""

    header: tuple[str, ...]
    rows: tuple[tuple[Text, ...], ...]
    caption: str = ""
    css_class: str = ""
    column_classes: tuple[str, ...] = ()
    row_classes: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        for r in self.rows:
            if len(r) != len(self.header):
                raise PrivacctError(f"table row has {len(r)} cells, the header {len(self.header)}")
        if self.column_classes and len(self.column_classes) != len(self.header):
            raise PrivacctError(f"table has {len(self.column_classes)} column classes, the header {len(self.header)} columns")
        if self.row_classes and len(self.row_classes) != len(self.rows):
            raise PrivacctError(f"table has {len(self.row_classes)} row classes and {len(self.rows)} rows")
        for c in (self.css_class, *self.column_classes, *self.row_classes):
            if c and not _CLASS.match(c):
                raise PrivacctError(f"a table's CSS class must match {_CLASS.pattern}, got {c!r}")


@dataclass(frozen=True)
class Figure:
    """A PNG in the output directory (``path`` relative to it) with its caption."""

    path: str
    caption: str


@dataclass(frozen=True)
class Code:
    """Command lines, one per entry (shown verbatim)."""

    lines: tuple[str, ...]


Block = Union[Paragraph, Bullets, Table, Figure, Code]


@dataclass(frozen=True)
class Section:
    title: str
    blocks: tuple[Block, ...]
    level: int = 2

    @property
    def anchor(self) -> str:
        """GitHub-style anchor: lowercased, punctuation dropped, spaces to hyphens."""
        s = re.sub(r"[^\w\- ]", "", self.title.lower())
        return re.sub(r" ", "-", s)


@dataclass(frozen=True)
class Document:
    title: str
    intro: tuple[Block, ...]
    sections: tuple[Section, ...]

    def __post_init__(self) -> None:
        titles = [s.title for s in self.sections]
        dup = sorted({t for t in titles if titles.count(t) > 1})
        if dup:
            raise PrivacctError(f"section titles must be unique within a document, repeated: {', '.join(dup)}")
        anchors = [s.anchor for s in self.sections]
        if len(set(anchors)) != len(anchors):
            raise PrivacctError("section anchors must be unique within a document")

    @property
    def figures(self) -> tuple[Figure, ...]:
        return tuple(b for s in ((self.intro,) + tuple(x.blocks for x in self.sections)) for b in s if isinstance(b, Figure))


__all__ = ["Block", "Bullets", "Code", "Document", "Figure", "Paragraph", "STYLES", "Section", "Span", "Table", "Text",
           "plain", "text"]
