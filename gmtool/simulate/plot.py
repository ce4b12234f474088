"""`--plot FILE.png`: the distributions of a simulation on one page (matplotlib).

matplotlib is an optional extra (`pip install 'gmtool[plot]'`), imported only here and
only when a picture is asked for; without it the command says so (exit 2) before any
hand is played. One row a tier, one column a distribution: pot, seconds a hand, hands
until a minimum-holding player is out; with `--vs`, both profiles on the same bins.
"""

from __future__ import annotations

from pathlib import Path

from gmtool.errors import UsageError
from gmtool.simulate.measures import distributions

COLUMNS = (
    ("pot", "pot (coins)"),
    ("seconds_per_hand", "seconds a hand"),
    ("hands_to_bust", "hands until out (min holding)"),
)
EXTRA = "pip install 'gmtool[plot]'"


class MissingExtra(UsageError):
    """An optional dependency that a flag needs is not installed (exit 2)."""


def _pyplot():
    try:
        import matplotlib
    except ImportError:
        raise MissingExtra(f"--plot needs matplotlib, which is not installed: {EXTRA}") from None
    matplotlib.use("Agg")  # files only: never a window, no display needed
    import matplotlib.pyplot as pyplot

    return pyplot


def check_plot_target(path: Path) -> None:
    """Fail before the simulation, not after it: the file can be written (a .png in a
    folder that exists), and the extra is there."""
    if path.suffix.lower() != ".png":
        raise UsageError(f"--plot {path}: the picture is a PNG; name a .png file")
    if not path.parent.is_dir():
        raise UsageError(f"--plot {path}: no folder {path.parent}")
    _pyplot()


def write_plot(outcome, path: Path) -> None:
    """Draw the outcome's distributions into `path` (PNG)."""
    pyplot = _pyplot()
    tiers = list(dict.fromkeys(t for label in outcome.labels for t in outcome.results[label]))
    figure, axes = pyplot.subplots(
        len(tiers),
        len(COLUMNS),
        squeeze=False,
        figsize=(4.2 * len(COLUMNS), 2.6 * len(tiers) + 0.8),
    )
    under = outcome.report["under"]
    figure.suptitle(" vs ".join(outcome.labels) + f" — {under}", fontsize=9)
    for row, tier in enumerate(tiers):
        drawn = {
            label: distributions(outcome.results[label][tier])
            for label in outcome.labels
            if tier in outcome.results[label]
        }
        for column, (name, title) in enumerate(COLUMNS):
            axis = axes[row][column]
            axis.set_title(f"{tier}: {title}", fontsize=8)
            axis.tick_params(labelsize=7)
            series = {label: values[name] for label, values in drawn.items() if values.get(name)}
            if not series:
                axis.text(
                    0.5,
                    0.5,
                    "training room: nobody is out" if name == "hands_to_bust" else "no data",
                    ha="center",
                    va="center",
                    fontsize=8,
                    transform=axis.transAxes,
                )
                continue
            low = min(min(v) for v in series.values())
            high = max(max(v) for v in series.values())
            if name == "hands_to_bust":  # a long tail: logarithmic bins
                bins = (
                    [low * (high / low) ** (k / 30) for k in range(31)]
                    if high > low
                    else [low - 0.5, high + 0.5]
                )
                axis.set_xscale("log")
            else:
                bins = _bins(low, high, all(isinstance(x, int) for v in series.values() for x in v))
            for label, values in series.items():
                axis.hist(
                    values,
                    bins=bins,
                    histtype="step",
                    linewidth=1.4,
                    label=label,
                    weights=[1 / len(values)] * len(values),
                )
            axis.set_ylabel(
                "share of hands" if name != "hands_to_bust" else "share of runs", fontsize=7
            )
            if row == 0 and column == 0:
                axis.legend(fontsize=7)
    figure.tight_layout()
    figure.savefig(path, dpi=110)
    pyplot.close(figure)


def _bins(low: float, high: float, whole: bool, most: int = 40) -> list[float]:
    if high <= low:
        return [low - 0.5, high + 0.5]
    if whole and high - low + 1 <= most:
        return [low - 0.5 + k for k in range(int(high - low) + 2)]
    width = (high - low) / most
    return [low + width * k for k in range(most + 1)]
