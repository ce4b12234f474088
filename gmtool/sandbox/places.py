"""Where in a scenario file a failure belongs, so an annotation lands on the line to fix.

`gmtool rules test --format github` (and SARIF) places each unmet expectation at its key
in `[expect]` (`street: expected 4, got 3` on the line of `street = 4`), and an action the
engine refused, when no error was expected, at that action in `actions` (at the array when
the same action is written more than once). A failure of the file itself (it cannot be
read, it names no profile) stays at line 1.
"""

from __future__ import annotations

import ast
import re
import tomllib
from pathlib import Path

from gmtool.rules.source import Path as KeyPath
from gmtool.rules.source import Position, SourceMap
from gmtool.sandbox.scenario import EXPECT_KEYS

_EXPECTATION = re.compile(r"^([a-z_]+): ")
_REFUSED = re.compile(r"""^(['"].*['"]) was refused: """)  # the action's repr


def failure_positions(path: Path, failures: tuple[str, ...]) -> list[Position]:
    """The position of each failure of the scenario at `path` (line 1 when unknown)."""
    from gmtool.rules.validate import parse_toml

    try:
        text = path.read_text(encoding="utf-8")
        data = parse_toml(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
        return [Position(1, 1)] * len(failures)
    places = SourceMap(text)
    return [places.find(key) if key else Position(1, 1) for key in _keys(data, failures)]


def _keys(data: dict, failures: tuple[str, ...]) -> list[KeyPath | None]:
    actions = data.get("actions") if isinstance(data.get("actions"), list) else []
    keys: list[KeyPath | None] = []
    for failure in failures:
        expectation, refused = _EXPECTATION.match(failure), _REFUSED.match(failure)
        if expectation and expectation.group(1) in EXPECT_KEYS:
            keys.append(("expect", expectation.group(1)))
        elif refused and (action := ast.literal_eval(refused.group(1))) in actions:
            once = actions.count(action) == 1  # else which one is not known: the array
            keys.append(("actions", actions.index(action)) if once else ("actions",))
        else:
            keys.append(None)
    return keys
