"""Markdown, HTML and terminal renderings of one :class:`.document.Document` (the same content in each).

Escaping: every span goes through :func:`privacct.errors.printable` (no control characters, no line
breaks) and then the format's own escaping: Markdown backslash-escapes its punctuation (and ``|``
in tables), code spans use a fence longer than any backtick run inside; HTML escapes with
:func:`html.escape`. Figures: Markdown links the PNG beside it, HTML embeds it (the page is one
self-contained file).
"""

from __future__ import annotations

import base64
import html
import re
from pathlib import Path

from privacct.errors import printable

from .document import Bullets, Code, Document, Figure, Paragraph, Section, Span, Table, Text

_MD_SPECIAL = re.compile(r"([\\`*_\[\]<>|~])")
_MD_LEADING = re.compile(r"^(\s*)([#=+>-]|\d+[.)])")


# --------------------------------------------------------------------------- Markdown
def _md_span(s, *, table: bool) -> str:
    t = printable(s.text)
    if s.style == "code":
        run = max((len(m) for m in re.findall(r"`+", t)), default=0)
        fence = "`" * (run + 1)
        pad = " " if t.startswith("`") or t.endswith("`") else ""
        out = f"{fence}{pad}{t}{pad}{fence}"
        return out.replace("|", "\\|") if table else out
    t = _MD_SPECIAL.sub(r"\\\1", t)
    if s.style == "bold":
        return f"**{t}**"
    if s.style == "em":
        return f"*{t}*"
    return t


def md_text(t: Text, *, table: bool = False) -> str:
    """Spans as Markdown; a text that would start a block (heading, list, quote) is escaped too."""
    out = "".join(_md_span(s, table=table) for s in t)
    if table:                      # a table cell never starts a block
        return out
    return _MD_LEADING.sub(lambda m: m.group(1) + m.group(2)[:-1] + "\\" + m.group(2)[-1], out, count=1)


def _md_bullets(b: Bullets, depth: int = 0) -> list[str]:
    out = []
    for item in b.items:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Bullets):
            out.append("  " * depth + "- " + md_text(item[0]))
            out += _md_bullets(item[1], depth + 1)
        else:
            out.append("  " * depth + "- " + md_text(item))
    return out


def _md_block(b) -> list[str]:
    if isinstance(b, Paragraph):
        return [md_text(b.text), ""]
    if isinstance(b, Bullets):
        return _md_bullets(b) + [""]
    if isinstance(b, Table):
        out = [f"*{md_text((_plain(b.caption),))}*", ""] if b.caption else []
        out.append("| " + " | ".join(md_text((_plain(h),), table=True) for h in b.header) + " |")
        out.append("|" + "---|" * len(b.header))
        out += ["| " + " | ".join(md_text(c, table=True) for c in row) + " |" for row in b.rows]
        return out + [""]
    if isinstance(b, Figure):
        return [f"![{md_text((_plain(b.caption),))}]({b.path})", "", f"*{md_text((_plain(b.caption),))}*", ""]
    if isinstance(b, Code):
        return ["```"] + [printable(line) for line in b.lines] + ["```", ""]
    raise TypeError(f"unknown block {type(b).__name__}")


def _plain(s: str):
    return Span(s)


def to_markdown(doc: Document) -> str:
    out = [f"# {md_text((_plain(doc.title),))}", ""]
    for b in doc.intro:
        out += _md_block(b)
    for s in doc.sections:
        out += [f"{'#' * s.level} {md_text((_plain(s.title),))}", ""]
        for b in s.blocks:
            out += _md_block(b)
    return "\n".join(out).rstrip() + "\n"


# --------------------------------------------------------------------------- HTML
_TAGS = {"bold": "b", "code": "code", "em": "em"}


def html_text(t: Text) -> str:
    out = []
    for s in t:
        e = html.escape(printable(s.text))
        tag = _TAGS.get(s.style)
        out.append(f"<{tag}>{e}</{tag}>" if tag else e)
    return "".join(out)


def _html_bullets(b: Bullets) -> str:
    items = []
    for item in b.items:
        if isinstance(item, tuple) and len(item) == 2 and isinstance(item[1], Bullets):
            items.append(f"<li>{html_text(item[0])}{_html_bullets(item[1])}</li>")
        else:
            items.append(f"<li>{html_text(item)}</li>")
    return "<ul>" + "".join(items) + "</ul>"


def _cls(name: str) -> str:
    """`` class="name"`` (names are checked by :class:`.document.Table`), or nothing."""
    return f' class="{html.escape(name)}"' if name else ""


def _html_block(b, out_dir: Path) -> str:
    if isinstance(b, Paragraph):
        return f"<p>{html_text(b.text)}</p>"
    if isinstance(b, Bullets):
        return _html_bullets(b)
    if isinstance(b, Table):
        cap = f"<caption>{html.escape(printable(b.caption))}</caption>" if b.caption else ""
        cols = b.column_classes or ("",) * len(b.header)
        head = "<tr>" + "".join(f"<th{_cls(k)}>{html.escape(printable(h))}</th>" for h, k in zip(b.header, cols, strict=True)) + "</tr>"
        body = "".join(f"<tr{_cls(rk)}>" + "".join(f"<td{_cls(k)}>{html_text(c)}</td>" for c, k in zip(row, cols, strict=True)) + "</tr>"
                       for row, rk in zip(b.rows, b.row_classes or ("",) * len(b.rows), strict=True))
        return f"<table{_cls(b.css_class)}>{cap}<thead>{head}</thead><tbody>{body}</tbody></table>"
    if isinstance(b, Figure):
        data = base64.b64encode((out_dir / b.path).read_bytes()).decode("ascii")
        cap = html.escape(printable(b.caption))
        return (f'<figure><img alt="{cap}" data-file="{html.escape(b.path)}" src="data:image/png;base64,{data}"/>'
                f"<figcaption>{cap}</figcaption></figure>")
    if isinstance(b, Code):
        return "<pre><code>" + "\n".join(html.escape(printable(line)) for line in b.lines) + "</code></pre>"
    raise TypeError(f"unknown block {type(b).__name__}")


_CSS = ("body{font-family:system-ui,sans-serif;max-width:1500px;margin:2em auto;padding:0 1em;line-height:1.4}"
        "table{border-collapse:collapse;font-size:13px;margin:0.5em 0 1em}td,th{border:1px solid #bbb;padding:3px 6px;"
        "vertical-align:top;text-align:left}th{background:#eee}caption{text-align:left;font-style:italic;padding:2px}"
        "img{max-width:100%;border:1px solid #ddd}figure{margin:1em 0}figcaption{font-style:italic;font-size:13px}"
        "code{background:#f4f4f4;padding:0 2px}pre{background:#f4f4f4;padding:6px;overflow-x:auto}"
        "nav li{display:inline;margin-right:1em}"
        # the opening summary: a failing verdict set apart (row tint, red bold verdict cell), holds in green
        "table.summary{font-size:12px}table.summary td,table.summary th{padding:3px 5px}table.summary td.verdict{white-space:nowrap}"
        "table.summary tr.fails{background:#fff4f4}"
        "tr.fails td.verdict{background:#fbd5d3;color:#a30000;font-weight:bold}"
        "tr.holds td.verdict{color:#17601c}"
        "td.num{font-variant-numeric:tabular-nums}")


def to_html(doc: Document, out_dir: str | Path) -> str:
    out_dir = Path(out_dir)
    nav = "".join(f'<li><a href="#{s.anchor}">{html.escape(printable(s.title))}</a></li>' for s in doc.sections if s.level == 2)
    parts = ["<!doctype html><html><head><meta charset='utf-8'>",
             f"<title>{html.escape(printable(doc.title))}</title><style>{_CSS}</style></head><body>",
             f"<h1>{html.escape(printable(doc.title))}</h1>"]
    parts += [_html_block(b, out_dir) for b in doc.intro]
    parts.append(f"<nav><ul>{nav}</ul></nav>")
    for s in doc.sections:
        parts.append(f'<section id="{s.anchor}"><h{s.level}>{html.escape(printable(s.title))}</h{s.level}>')
        parts += [_html_block(b, out_dir) for b in s.blocks]
        parts.append("</section>")
    parts.append("</body></html>\n")
    return "\n".join(parts)


# --------------------------------------------------------------------------- terminal
def to_text_table(t: Table) -> str:
    """A table as aligned plain text (every cell escaped, one line per row)."""
    cells = [[printable(h) for h in t.header]] + [["".join(printable(s.text) for s in c) for c in row] for row in t.rows]
    widths = [max(len(r[i]) for r in cells) for i in range(len(t.header))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)).rstrip() for r in cells]
    lines.insert(1, "-" * len(lines[0]))
    return "\n".join(lines)


def section(doc: Document, title: str) -> Section:
    for s in doc.sections:
        if s.title == title:
            return s
    raise KeyError(title)


__all__ = ["html_text", "md_text", "section", "to_html", "to_markdown", "to_text_table"]
