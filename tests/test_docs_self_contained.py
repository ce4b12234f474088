"""The repository's documentation is self-contained: nothing in it cites a document that is
not in the repository, and every local link and named document resolves.

The rules, the design and the profile format were first written in specification files
kept outside the repository; their content is carried, in the project's words, by
docs/rules.md, docs/architecture.md, docs/profile-reference.md, rules/scenarios/README.md
and benchmarks/README.md. A maintainer must be able to follow every citation here.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
TEXT = (".py", ".md", ".toml", ".yml", ".yaml", ".json", ".cfg", ".txt")
# Names of the outside specification and of where it lived.
OUTSIDE = re.compile(
    r"\b(?:DESIGN|RULES|PROFILE|STYLE)\.md\b|\bDESIGN\b|\bSTYLE\b"
    r"|shared/spec|\.\./seeds/"
)
LINK = re.compile(r"\]\(([^)#\s]+)(?:#[^)]*)?\)")  # markdown links to local files
NAMED = re.compile(
    r"\b((?:docs|benchmarks|rules|tests|gmtool|examples)/[\w./-]+\.(?:md|py|toml"
    r"|yml|json))\b"
)


def _tracked() -> list[Path]:
    files = subprocess.run(
        ["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True
    ).stdout.split()
    return [
        ROOT / name
        for name in files
        if name.endswith(TEXT) and not name.startswith("tests/data/stores/")
    ]


FILES = _tracked()


def test_files_are_found() -> None:
    assert len(FILES) > 200


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_nothing_cites_a_document_outside_the_repository(path: Path) -> None:
    text = path.read_text(encoding="utf-8", errors="replace")
    if path.name == Path(__file__).name:
        return  # this file names what it looks for
    found = sorted({m.group(0) for m in OUTSIDE.finditer(text)})
    assert not found, f"{path.relative_to(ROOT)} cites {found}"


@pytest.mark.parametrize(
    "path", [p for p in FILES if p.suffix == ".md"], ids=lambda p: str(p.relative_to(ROOT))
)
def test_every_local_link_and_named_document_resolves(path: Path) -> None:
    text = path.read_text(encoding="utf-8")
    broken = []
    for target in LINK.findall(text):
        if "://" in target or target.startswith("mailto:"):
            continue
        if not (path.parent / target).exists():
            broken.append(target)
    for named in NAMED.findall(text):  # from the root, or a module path inside gmtool/
        if not (ROOT / named).exists() and not (ROOT / "gmtool" / named).exists():
            broken.append(named)
    assert not broken, f"{path.relative_to(ROOT)} names what is not there: {sorted(set(broken))}"
