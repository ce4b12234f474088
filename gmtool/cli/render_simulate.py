"""Text of `gmtool rules simulate`: measures per tier, changes with intervals, histograms.

Drawn from the report's plain data only (the `--json` form), so text and JSON say the
same. Histograms are one line of block characters over the range they cover.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

BLOCKS = " ▁▂▃▄▅▆▇█"
LABELS = {
    "pot": "pot",
    "actions_per_hand": "actions/hand",
    "seconds_per_hand": "seconds/hand",
    "showdown": "showdown",
    "allin": "all-in",
    "escape": "escape",
    "escape_cost": "escape cost",
    "timeouts_per_hand": "timeouts/hand",
    "looks_per_hand": "looks/hand",
    "buys_per_hand": "buys/hand",
    "opens_per_hand": "opens/hand",
    "coins_per_hand": "coins/hand",
    "hands_to_bust": "hands to out",
}
SIGNED = {"coins_per_hand"}  # won (+) or lost (-)
POINTS = " pt"  # a change of a rate, in percentage points


def number(value: Any, stat: str = "", signed: bool = False) -> str:
    """A value as the report prints it: rates in %, big numbers with separators."""
    if value is None:
        return "—"
    if stat == "rate":
        return f"{value * 100:{'+' if signed else ''}.1f}%"
    sign = "+" if signed else ""
    if float(value).is_integer() and abs(value) >= 1:
        return f"{int(value):{sign},}"
    if abs(value) >= 100:
        return f"{value:{sign},.1f}"
    return f"{value:{sign}.3g}" if abs(value) < 1 else f"{value:{sign},.2f}"


def sparkline(histogram: dict) -> str:
    counts, edges = histogram.get("counts") or [], histogram.get("edges") or []
    if not counts:
        return ""
    top = max(counts)
    bars = "".join(BLOCKS[0] if c == 0 else BLOCKS[max(1, round(c / top * 8))] for c in counts)
    more = "+" if histogram.get("clipped") else ""
    return f"{bars}  {number(edges[0])}–{number(edges[-1])}{more}"


def header_lines(report: dict) -> list[str]:
    base = report["profile"]
    head = f"{base['label']} ({base['file']}, config {base['config_id'][:12]})"
    if "vs" in report:
        other = report["vs"]
        head += f" vs {other['label']} ({other['file']}, config {other['config_id'][:12]})"
    return [
        head,
        f"seed {report['seed']!r}, {report['hands']:,} hands a tier, "
        f"{report['players']} players a hand; {report['under']}",
    ]


def tier_line(tier: dict) -> str:
    words = [
        "training room: no coins move"
        if tier["training"]
        else f"seats hold {tier['seats_hold']:,}, {tier['coins_to_sit']:,} to sit"
    ]
    if tier["ante"] is not None:
        words.append(f"ante {tier['ante']:,}")
    words.append(f"action limit {tier['action_s']} s")
    if tier["closed_in_profile"]:
        words.append("closed in the profile, played as if open")
    return f"{tier['tier']} ({tier['title']}): " + ", ".join(words)


def render_report(report: dict, console) -> None:
    """The whole report, one profile or two."""
    lines = header_lines(report)
    compare = "vs" in report
    for tier in report["tiers"]:
        lines.append("")
        lines += _compared_tier(report, tier) if compare else _single_tier(tier)
    if compare:
        lines += [
            "",
            "* the 95% interval of the change excludes 0 (paired: same decks and "
            "seats). Among many measures about 1 in 20 unchanged ones is marked by chance.",
        ]
    console.lines(lines)


def _single_tier(tier: dict) -> list[str]:
    lines = [tier_line(tier)]
    histograms = tier["histograms"]
    width = max(len(LABELS.get(m, m)) for m in tier["measures"])
    for measure, stats in tier["measures"].items():
        signed = measure in SIGNED
        cells = " · ".join(f"{stat} {number(value, stat, signed)}" for stat, value in stats.items())
        line = f"  {LABELS.get(measure, measure):<{width}}  {cells}"
        if measure in histograms:
            line += f"   {sparkline(histograms[measure])}"
        lines.append(line)
    if tier["bust_runs"]:
        lines.append(
            f"  ({tier['bust_runs']} runs of a seat sitting with {tier['coins_to_sit']:,}"
            + (
                f"; {tier['bust_censored']} still seated after the limit, counted at it"
                if tier["bust_censored"]
                else ""
            )
            + ")"
        )
    return lines


def _compared_tier(report: dict, entry: dict) -> list[str]:
    base, other = entry["base"], entry["vs"]
    names = (report["profile"]["label"], report["vs"]["label"])
    if base is None or other is None:
        missing = names[0] if base is None else names[1]
        present = other if base is None else base
        return [
            f"{entry['tier']}: only in {names[1] if base is None else names[0]} "
            f"(closed or absent in {missing})",
            *_single_tier(present)[1:],
        ]
    lines = [tier_line(other) if other == base else f"{tier_line(base)}\n  -> {tier_line(other)}"]
    rows = [("measure", "stat", names[0], names[1], "change", "95% interval", "")]
    for measure, stats in entry["changes"].items():
        signed = measure in SIGNED
        for index, (stat, change) in enumerate(stats.items()):
            rows.append(
                (
                    LABELS.get(measure, measure) if index == 0 else "",
                    stat,
                    number(change["old"], stat, signed),
                    number(change["new"], stat, signed),
                    _change(change, stat),
                    _interval(change, stat),
                    "*" if change["significant"] else "",
                )
            )
    lines += _columns(rows)
    width = max(map(len, names))
    for name in ("pot", "seconds_per_hand", "hands_to_bust"):
        if name in base["histograms"] and name in other["histograms"]:
            lines.append(
                f"  {LABELS[name]:<13} {names[0]:<{width}}  {sparkline(base['histograms'][name])}"
            )
            lines.append(f"  {'':<13} {names[1]:<{width}}  {sparkline(other['histograms'][name])}")
    return lines


def _change(change: dict, stat: str) -> str:
    if change["change"] is None:
        return "—"
    if stat == "rate":
        return f"{change['change'] * 100:+.1f}{POINTS}"
    text = number(change["change"], stat, signed=True)
    if change["change_pct"] is not None:
        text += f" ({change['change_pct']:+.1f}%)"
    return text


def _interval(change: dict, stat: str) -> str:
    if change["ci"] is None:
        return "—"
    low, high = change["ci"]
    if stat == "rate":
        return f"[{low * 100:+.1f}, {high * 100:+.1f}]{POINTS}"
    return f"[{number(low, stat, True)}, {number(high, stat, True)}]"


def _columns(rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    out = []
    for row in rows:
        cells = [
            row[0].ljust(widths[0]),
            row[1].ljust(widths[1]),
            *(cell.rjust(width) for cell, width in zip(row[2:6], widths[2:6])),
            row[6],
        ]
        out.append("  " + "  ".join(cells).rstrip())
    return out


def render_bounds(verdicts: list[dict], console) -> None:
    """The `--fail-if` verdicts, one line each."""
    if not verdicts:
        return
    console.line("")
    for verdict in verdicts:
        state = (
            "BROKEN"
            if verdict["broken"]
            else ("not measured" if verdict["value"] is None else "ok")
        )
        value = "—" if verdict["value"] is None else number(verdict["value"])
        console.line(f"bound {verdict['bound']} [{verdict['tier']}]: {value} ({state})")
