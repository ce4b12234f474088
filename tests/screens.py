"""Reading what a table command printed, whichever layout it chose (cli/layout.py).

A table that fits is drawn with box rules; one that does not is printed as records (a
`column value` line, then indented `column: value` lines). `parse_screen` returns the
rows of either as {column: text}, a cell's wrapped lines joined again, so a test can
check that every value is there, whole, at any width.
"""

from __future__ import annotations

import re

RULE = "│"
HEADER_RULE = "┃"


def parse_screen(out: str, columns: list[str]) -> list[dict[str, str]]:
    """The rows of the one table in `out` (a title line may come first)."""
    lines = out.splitlines()
    if any(line.startswith(HEADER_RULE) for line in lines):
        return _parse_table(lines)
    return _parse_records(lines, columns)


def _cells(line: str, rule: str) -> list[str]:
    return [cell.strip() for cell in line.split(rule)[1:-1]]


def _join(parts: list[str]) -> str:
    """Wrapped pieces of one cell joined again: a line that ended at a space gets it back,
    one that broke after a "/" (a `table/player` target) does not."""
    text = ""
    for part in parts:
        if not part:
            continue
        text += part if not text or text.endswith("/") else " " + part
    return text


def _parse_table(lines: list[str]) -> list[dict[str, str]]:
    header_lines = [_cells(line, HEADER_RULE) for line in lines if line.startswith(HEADER_RULE)]
    columns = [_join([h[i] for h in header_lines]) for i in range(len(header_lines[0]))]
    rows: list[list[list[str]]] = []
    for line in lines:
        if not line.startswith(RULE):
            continue
        cells = _cells(line, RULE)
        if cells[0] or not rows:  # the first column holds an id: a new row begins
            rows.append([[cell] for cell in cells])
        else:
            for parts, cell in zip(rows[-1], cells, strict=True):
                parts.append(cell)
    return [{c: _join(parts) for c, parts in zip(columns, row, strict=True)} for row in rows]


def _parse_records(lines: list[str], columns: list[str]) -> list[dict[str, str]]:
    first = re.compile(rf"^{re.escape(columns[0])} (.*)$")
    field = re.compile(r"^  (" + "|".join(re.escape(c) for c in columns[1:]) + r"): +(.*)$")
    rows: list[dict[str, list[str]]] = []
    current: list[str] | None = None
    for line in lines:
        if match := first.match(line):
            rows.append({columns[0]: [match.group(1)]})
            current = None
        elif rows and (match := field.match(line)):
            current = rows[-1].setdefault(match.group(1), [])
            current.append(match.group(2))
        elif rows and current is not None and line.startswith("   "):
            current.append(line.strip())
    return [{c: _join(parts) for c, parts in row.items()} for row in rows]
