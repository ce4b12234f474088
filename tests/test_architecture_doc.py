"""docs/architecture.md matches the code: every path it names exists, every package of
gmtool is in its table of layers, and the layers it gives are the ones tests/test_layers.py
enforces. A renamed or removed module fails here until the page says so."""

from __future__ import annotations

import re
from pathlib import Path

from test_layers import ALLOWED

ROOT = Path(__file__).resolve().parent.parent
PAGE = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8")
PACKAGE = ROOT / "gmtool"
NAMED = sorted(
    set(re.findall(r"`((?:gmtool|tests|benchmarks|docs|[a-z_]+)/[\w/.]+\.(?:py|md))`", PAGE))
)


def _exists(path: str) -> bool:
    """A path as the page writes it: from the repository root, or inside gmtool/."""
    return (ROOT / path).exists() or (PACKAGE / path).exists()


def test_the_page_names_modules() -> None:
    assert len(NAMED) > 40


def test_every_path_the_page_names_exists() -> None:
    missing = [path for path in NAMED if not _exists(path)]
    assert not missing, f"docs/architecture.md names what is not there: {missing}"


def _table_rows() -> dict[str, str]:
    rows = {}
    for line in PAGE.splitlines():
        match = re.match(r"\| `gmtool/(\w+)` \| .* \| (.*) \|$", line)
        if match:
            rows[match.group(1)] = match.group(2)
    return rows


def test_every_package_is_in_the_table_of_layers() -> None:
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").is_file()}
    assert packages == set(_table_rows()), packages ^ set(_table_rows())


def test_the_table_gives_the_layers_the_tests_enforce() -> None:
    names = set(ALLOWED)
    for package, allowed in _table_rows().items():
        own = ALLOWED[package][0] - {package}
        if allowed == "nothing else of gmtool":
            assert not own, (package, own)
        elif allowed == "everything":
            assert own >= names - {package, "cli"}, (package, names - own)
        elif allowed.startswith("every package above but "):
            excluded = set(re.findall(r"\w+", allowed.removeprefix("every package above but ")))
            assert own == names - {package, "cli"} - excluded, (package, own)
        else:
            assert own == set(re.findall(r"\w+", allowed)), (package, own, allowed)
