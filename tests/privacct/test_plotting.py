"""privacct.plotting is the one plotting module: nothing else imports matplotlib, at most 3 panels
a row, every curve style distinct in colour, line style and marker, and a PNG is written."""

import re
from pathlib import Path

from privacct import plotting

ROOT = Path(__file__).resolve().parents[2]


def test_no_other_module_imports_matplotlib():
    for folder in ("privacct", "algorithms", "audits"):
        for f in (ROOT / folder).rglob("*.py"):
            if f == ROOT / "privacct" / "plotting.py":
                continue
            assert not re.search(r"^\s*(import|from)\s+matplotlib", f.read_text(encoding="utf-8"), re.M), f


def test_panel_grid_holds_at_most_three_a_row_and_hides_the_rest():
    fig, axes = plotting.panel_grid(8)
    assert len(axes) == 8
    grid = fig.axes[0].get_subplotspec().get_gridspec()
    assert grid.ncols == 3 and grid.nrows == 3
    assert sum(ax.get_visible() for ax in fig.axes) == 8
    plotting.pyplot().close(fig)


def test_curve_styles_differ_in_every_attribute_and_save_writes_a_png(tmp_path):
    styles = [plotting.style(i) for i in range(6)]
    for key in ("color", "linestyle", "marker"):
        assert len({repr(s[key]) for s in styles}) == 6
    fig, (ax,) = plotting.panel_grid(1)
    for i in range(3):
        plotting.plot_curve(ax, list(range(1000)), i, f"c{i}")
    out = tmp_path / "f.png"
    plotting.save(fig, out)
    assert out.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
