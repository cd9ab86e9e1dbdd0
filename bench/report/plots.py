"""The project's one way to draw a chart: matplotlib, headless, the same look everywhere.

`make report` draws every figure of docs/report/ with these two functions, and so do the
simulator's miss-ratio curves (bench/report/plot_sim.py): a chart is either bars (one group per
category, one bar per series) or lines (one line per series over a numeric x). Every chart carries
its provenance in a footer, the command and commit that produced its numbers, so a figure
copied out of the report still says how to make it again.

Needs matplotlib (Debian's python3-matplotlib, which `make report` installs); run it with the
system interpreter, /usr/bin/python3, which is the one that sees Debian's packages.
"""

import textwrap

import matplotlib

matplotlib.use("Agg")  # no display: write files only
import matplotlib.pyplot as plt  # noqa: E402  (after the backend is chosen)
from matplotlib.ticker import EngFormatter, FuncFormatter, NullLocator  # noqa: E402

# Ten colours that stay distinct under the common colour-vision deficiencies (Tableau 10).
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd",
           "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"]
MARKERS = ["o", "s", "^", "D", "v", "P", "X", "*", "<", ">"]
SIZE_INCHES = (8.0, 4.8)
DPI = 100
PROVENANCE_COLUMNS = 150  # the footer wraps to fit the figure's width at 7 points


def _figure(title, xlabel, ylabel):
    figure, axes = plt.subplots(figsize=SIZE_INCHES, dpi=DPI)
    axes.set_title(title, fontsize=12)
    axes.set_xlabel(xlabel)
    axes.set_ylabel(ylabel)
    axes.grid(True, axis="y", color="#e1e1e1", linewidth=0.8)
    axes.set_axisbelow(True)
    for side in ("top", "right"):
        axes.spines[side].set_visible(False)
    return figure, axes


def _finish(figure, axes, path, provenance):
    if len(axes.get_legend_handles_labels()[0]) > 1:
        axes.legend(frameon=False, fontsize=9, loc="center left", bbox_to_anchor=(1.0, 0.5))
    footer = textwrap.wrap(provenance, PROVENANCE_COLUMNS, break_on_hyphens=False)
    if footer:
        figure.text(0.01, 0.01, "\n".join(footer), fontsize=7, color="#555555", ha="left",
                    va="bottom")
    figure.tight_layout(rect=(0, 0.035 * len(footer), 1, 1))
    figure.savefig(path)
    plt.close(figure)


def bar_chart(path, title, categories, series, ylabel, provenance="", xlabel="", log_y=False,
              value_format=None):
    """Grouped bars: `series` maps a name to one value per category (None: no bar).

    value_format, e.g. "{:.0f}", prints each bar's value above it."""
    figure, axes = _figure(title, xlabel, ylabel)
    count = max(len(series), 1)
    width = 0.8 / count
    for i, (name, values) in enumerate(series.items()):
        xs = [c + (i - (count - 1) / 2) * width for c in range(len(categories))]
        shown = [(x, v) for x, v in zip(xs, values) if v is not None]
        if not shown:
            continue
        bars = axes.bar([x for x, _ in shown], [v for _, v in shown], width=width * 0.95,
                        label=name, color=PALETTE[i % len(PALETTE)])
        if value_format:
            axes.bar_label(bars, labels=[value_format.format(v) for _, v in shown], fontsize=7,
                           padding=1)
    # Slanted labels when they would run into each other: many categories, or long names.
    crowded = len(categories) > 5 or sum(len(str(c)) for c in categories) > 60
    axes.set_xticks(range(len(categories)))
    axes.set_xticklabels(categories, rotation=20 if crowded else 0,
                         ha="right" if crowded else "center")
    if log_y:
        axes.set_yscale("log")
    _finish(figure, axes, path, provenance)


def line_chart(path, title, series, xlabel, ylabel, provenance="", log_x=False, y_from_zero=True,
               engineering_x=False):
    """Lines with markers: `series` maps a name to (xs, ys)."""
    figure, axes = _figure(title, xlabel, ylabel)
    for i, (name, (xs, ys)) in enumerate(series.items()):
        axes.plot(xs, ys, label=name, color=PALETTE[i % len(PALETTE)],
                  marker=MARKERS[i % len(MARKERS)], markersize=4, linewidth=1.8)
    if log_x:
        axes.set_xscale("log")
        # Few distinct sizes (a simulator's or a reference table's): label exactly those.
        xs = sorted({x for values, _ in series.values() for x in values})
        if len(xs) <= 8:
            axes.set_xticks(xs)
            axes.xaxis.set_minor_locator(NullLocator())
            axes.xaxis.set_major_formatter(FuncFormatter(lambda x, _: f"{x:,.0f}"))
            engineering_x = False
    if engineering_x:
        axes.xaxis.set_major_formatter(EngFormatter(sep=""))
    if y_from_zero:
        axes.set_ylim(bottom=0)
    axes.grid(True, axis="x", color="#f0f0f0", linewidth=0.6)
    _finish(figure, axes, path, provenance)
