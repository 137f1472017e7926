"""The one plotting module: every figure privacct draws (``report``, ``run``, ``reproduce``) is set up here.

* :func:`pyplot` selects the non-interactive Agg backend once and applies the house style (font
  sizes readable at 100% zoom);
* :data:`PALETTE` is Okabe & Ito's colour-blind-safe palette (2008), and :func:`style` pairs each
  colour with its own line style and marker, so curves stay distinguishable in greyscale and
  where they coincide;
* :func:`panel_grid` lays out at most :data:`MAX_COLUMNS` panels a row;
* :func:`plot_curve` draws one curve with sparse markers; :func:`downsample` thins long curves;
* :func:`save` writes a PNG at :data:`DPI` and closes the figure.

matplotlib is imported only when :func:`pyplot` is called (``privacct --help`` stays fast).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: Okabe & Ito (2008), "Color Universal Design": blue, vermillion, bluish green, reddish purple,
#: orange, sky blue, black, yellow.
PALETTE = ("#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#F0E442")
LINESTYLES = ("-", "--", "-.", ":", (0, (5, 1, 1, 1, 1, 1)), (0, (1, 1)))
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")
MAX_COLUMNS = 3
DPI = 110
PANEL_SIZE = (4.4, 3.3)   # inches per panel: about 480 x 360 px at DPI

_RC = {"font.size": 9, "axes.titlesize": 9, "axes.labelsize": 9, "legend.fontsize": 7.5, "xtick.labelsize": 8,
       "ytick.labelsize": 8, "figure.titlesize": 10, "axes.grid": True, "grid.alpha": 0.3}


def pyplot():
    """matplotlib.pyplot on the Agg backend with the house style applied."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    plt.rcParams.update(_RC)
    return plt


def style(i: int) -> dict[str, Any]:
    """Colour, line style and marker of the i-th curve (all three change together)."""
    return {"color": PALETTE[i % len(PALETTE)], "linestyle": LINESTYLES[i % len(LINESTYLES)],
            "marker": MARKERS[i % len(MARKERS)]}


def panel_grid(n: int, *, ncols: int = MAX_COLUMNS, size: tuple[float, float] = PANEL_SIZE, sharey: bool = False):
    """(fig, axes): ``n`` panels, at most ``ncols`` (<= 3) a row; unused cells are hidden."""
    import math

    plt = pyplot()
    ncols = max(1, min(ncols, MAX_COLUMNS, n))
    nrows = max(1, math.ceil(n / ncols))
    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows + 0.4), squeeze=False,
                             sharey=sharey)
    flat = [ax for row in axes for ax in row]
    for ax in flat[n:]:
        ax.set_visible(False)
    return fig, flat[:n]


def downsample(y, n: int = 400):
    """(x, y) of a curve indexed 1..len(y), thinned to about ``n`` points (the last one kept)."""
    import numpy as np

    y = np.asarray(y, dtype=float)
    x = np.arange(1, len(y) + 1)
    if len(y) <= n:
        return x, y
    idx = np.unique(np.linspace(0, len(y) - 1, n).astype(int))
    return x[idx], y[idx]


def plot_curve(ax, y, i: int, label: str, *, markers: int = 8, **kwargs) -> None:
    """Curve ``y`` (indexed 1..len(y)) in style ``i`` with about ``markers`` markers, staggered by ``i``
    so that the markers of coinciding curves do not sit on top of each other."""
    x, yy = downsample(y)
    st = style(i)
    st.update(kwargs)
    step = max(1, len(x) // markers)
    ax.plot(x, yy, label=label, markevery=((i * step // 4) % step, step), markersize=4, linewidth=1.4, **st)


def save(fig, path: str | Path, *, dpi: int = DPI) -> None:
    """Lay out, write a PNG (cropped to what is drawn, legends outside the axes included) and close the figure."""
    if getattr(fig, "_suptitle", None) is not None:   # keep a band of 0.45 inch for the figure title
        fig.tight_layout(rect=(0.0, 0.0, 1.0, 1.0 - 0.45 / fig.get_figheight()))
    else:
        fig.tight_layout()
    fig.savefig(path, dpi=dpi, bbox_inches="tight")
    pyplot().close(fig)


__all__ = ["DPI", "LINESTYLES", "MARKERS", "MAX_COLUMNS", "PALETTE", "downsample", "panel_grid", "plot_curve", "pyplot",
           "save", "style"]
