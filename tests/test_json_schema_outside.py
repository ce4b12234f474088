"""The published JSON Schema, judged by an independent validator (the `jsonschema` package).

Editors check profiles against `rules/profile.schema.json` (the `#:schema` line), so the
schema must accept every valid profile and refuse what it can judge exactly as `gmtool
rules validate` does: unknown keys, wrong types, ranges, choices, missing keys and keys
that do not apply to the profile's game or style. Checks that relate values to each
other (RULES Q5, H5 ...) are beyond a schema; files whose only errors are of that kind
are not judged.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from gmtool.rules import schema
from gmtool.rules.jsonschema import profile_json_schema
from gmtool.rules.validate import Collector, check_structure, context_of, validate_bytes

ROOT = Path(__file__).resolve().parent.parent
SCHEMA = json.loads((ROOT / "rules" / "profile.schema.json").read_text(encoding="utf-8"))
VALIDATOR = Draft202012Validator(SCHEMA)
CANDIDATES = sorted(
    [
        *(ROOT / "rules").glob("*.toml"),
        *(ROOT / "tests/data/profiles").rglob("*.toml"),
        *(ROOT / "examples").rglob("*.toml"),
    ]
)


def test_the_committed_schema_is_the_generated_one() -> None:
    assert SCHEMA == profile_json_schema()
    Draft202012Validator.check_schema(SCHEMA)


def _parsed(path: Path):
    try:
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError):
        return None  # not TOML at all: a schema has nothing to judge


def _judged(path: Path) -> bool:
    """TOML that is not a scenario (a scenario names its profile): a schema can judge it."""
    data = _parsed(path)
    return data is not None and not isinstance(data.get("profile"), str)


FILES = [path for path in CANDIDATES if _judged(path)]


def test_the_schema_judges_some_files_of_every_kind() -> None:
    assert len(FILES) >= 20 and any(p.parent.name == "rules" for p in FILES)


@pytest.mark.parametrize("path", FILES, ids=lambda p: str(p.relative_to(ROOT)))
def test_an_outside_validator_agrees_with_gmtool(path: Path) -> None:
    data = _parsed(path)
    errors = [f for f in validate_bytes(path.read_bytes(), path.name) if f.severity == "error"]
    shape = _shape_findings(path, data)  # what a schema can express: the file's shape
    judged = list(VALIDATOR.iter_errors(data))
    if not errors:
        assert not judged, [e.message for e in judged]
    elif shape:
        assert judged, f"gmtool finds {[f.code for f in shape]}; the schema accepts the file"
    # (errors only of relations between values: the schema cannot judge the file)


def _shape_findings(path: Path, data: dict) -> list:
    """gmtool's structural findings alone (keys, types, ranges, choices, applicability),
    not its checks of values against each other."""
    collector = Collector(path.name, data, path.read_text(encoding="utf-8"))
    check_structure(collector, schema.ROOT, data, (), context_of(data))
    return [f for f in collector.findings if f.severity == "error"]


def test_every_shipped_profile_is_valid_under_the_schema() -> None:
    for path in (ROOT / "rules").glob("*.toml"):
        assert not list(VALIDATOR.iter_errors(_parsed(path))), path.name


def test_the_schema_refuses_a_key_of_another_game() -> None:
    """if/then: street_caps belong to capped tiers; a three-card tier with them is refused,
    and a capped tier without them too."""
    three = _parsed(ROOT / "rules" / "suihua-three-card.toml")
    three["tiers"][0]["street_caps"] = [1, 2, 3, 4]
    assert list(VALIDATOR.iter_errors(three))
    capped = _parsed(ROOT / "rules" / "qq-showhand.toml")
    del capped["tiers"][1]["street_caps"]
    assert list(VALIDATOR.iter_errors(capped))
