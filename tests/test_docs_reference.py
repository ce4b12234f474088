"""The profile reference (docs/profile-reference.md) against the format table in schema.py.

The reference is written by hand for operators, so these tests pin what a hand-written
page can get wrong: a key of the format without a row, a row or a mention of a key the
format does not have, and a default, type, range, applicability or rule id that differs
from the schema. Every finding code must be listed with its severity, and every TOML
example in the page must validate.

How the page is read: a table whose header starts with "Key" has one row per key path,
exactly as `schema.walk()` spells it (`profile.id`, `tiers[].ante`, `ladder.titles[].at`),
in backticks in the first cell; a table whose header starts with "Code" lists the
finding codes. Backticks are ignored when cells are compared.
"""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

import pytest

from gmtool.bounds import MAX_COINS, MAX_COUNT, MAX_SECONDS, MAX_VERSION
from gmtool.rules import schema
from gmtool.rules.findings import CODES, WARNING_CODES
from gmtool.rules.schema import Context, Field
from gmtool.rules.validate import validate_text

DOC = Path(__file__).resolve().parents[1] / "docs" / "profile-reference.md"
TEXT = DOC.read_text(encoding="utf-8")

KEYS = dict(schema.walk())
SECTIONS = tuple(schema.ROOT.fields)

# The three kinds of profile a key may apply to, and the words the page uses for each set.
CONTEXTS = {
    "capped": Context(schema.STUD5, schema.CAPPED),
    "owner_ante": Context(schema.STUD5, schema.OWNER_ANTE),
    "three-card": Context(schema.THREE_CARD, schema.CAPPED),
}
APPLIES_WORDS = {
    frozenset(CONTEXTS): "all",
    frozenset({"capped", "owner_ante"}): "stud5",
    frozenset({"capped"}): "capped",
    frozenset({"owner_ante"}): "owner_ante",
    frozenset({"three-card"}): "three-card",
    frozenset({"capped", "three-card"}): "capped, three-card",
    frozenset({"owner_ante", "three-card"}): "owner_ante, three-card",
}


# -- reading the page ------------------------------------------------------------------


def _without_fences(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in re.split(r"(?<!\\)\|", line.strip().strip("|"))]


def markdown_tables(text: str) -> list[tuple[list[str], list[list[str]], int]]:
    """(header, rows, line number) of every pipe table outside code fences."""
    lines = _without_fences(text).splitlines()
    tables, i = [], 0
    while i < len(lines) - 1:
        if lines[i].startswith("|") and re.match(r"^\|[\s:|-]+\|$", lines[i + 1].strip()):
            header, start, rows = _cells(lines[i]), i + 1, []
            i += 2
            while i < len(lines) and lines[i].startswith("|"):
                rows.append(_cells(lines[i]))
                i += 1
            tables.append((header, rows, start))
        else:
            i += 1
    return tables


def plain(cell: str) -> str:
    """A cell as compared: no backticks or emphasis, single spaces."""
    return " ".join(cell.replace("`", "").replace("**", "").split())


def _rows(first_header: str) -> list[tuple[str, dict[str, str]]]:
    found = []
    for header, rows, _ in markdown_tables(TEXT):
        if header[0] != first_header:
            continue
        for row in rows:
            found.append((plain(row[0]), dict(zip(header, row))))
    return found


KEY_ROWS = _rows("Key")
CODE_ROWS = _rows("Code")
ROW_BY_KEY = {key: row for key, row in KEY_ROWS}


# -- what the schema says, in the page's words ------------------------------------------


def _ancestors(path: str) -> list[Field]:
    parts = path.split(".")
    return [KEYS[".".join(parts[:n]).removesuffix("[]")] for n in range(1, len(parts) + 1)]


def applies_words(path: str) -> str:
    """Where a key may be written: its own condition and those of the sections around it."""
    where = frozenset(
        name
        for name, ctx in CONTEXTS.items()
        if all(field.applies(ctx) for field in _ancestors(path))
    )
    return APPLIES_WORDS[where]


def expected_default(field: Field) -> str:
    if field.default is not None:
        return plain(field.default.doc)
    return "required" if field.required else "—"


def expected_type(field: Field) -> str:
    if field.kind != "array":
        return field.kind
    plural = {"integer": "integers", "string": "strings", "table": "tables", "boolean": "booleans"}
    return f"array of {plural[field.items.kind]}"


def expected_range_words(field: Field) -> list[str]:
    """Phrases the Range / choices cell must contain."""
    words = [f'"{choice}"' for choice in field.choices]
    if field.pattern:
        words.append(field.pattern.strip("^$"))
    if field.kind == "integer":
        maximum = None if field.maximum in GLOBAL_BOUNDS else field.maximum
        if field.minimum is not None and maximum is not None:
            words.append(f"{field.minimum}..{maximum}")
        elif field.minimum is not None and field.minimum > -MAX_COUNT:
            words.append(f"≥ {field.minimum}")
        elif maximum is None:
            words.append("any integer")
    if field.kind == "array":
        if field.min_items is not None and field.min_items == field.max_items:
            words.append(f"exactly {field.min_items} items")
        elif field.min_items is not None:
            words.append(f"at least {field.min_items} item")
        if field.items is not None and field.items.minimum is not None:
            words.append(f"each ≥ {field.items.minimum}")
    return words


# Bounds every number of a kind has (gmtool/bounds.py): stated once on the page, not per row.
GLOBAL_BOUNDS = {MAX_COINS, MAX_COUNT, MAX_SECONDS, MAX_VERSION}


def test_the_page_states_the_bounds_of_every_number() -> None:
    section = DOC.read_text(encoding="utf-8").split("## Bounds", 1)
    assert len(section) == 2, "profile-reference.md needs a '## Bounds' section"
    for bound in GLOBAL_BOUNDS:
        assert f"{bound:,}" in section[1].split("\n## ", 1)[0], bound


def rule_ids(text: str) -> set[str]:
    return {rule.strip().lstrip("§") for rule in text.split(",") if rule.strip() not in ("", "—")}


# -- every key of the format is on the page, exactly once, as the schema says ----------


def test_the_page_has_key_tables_and_a_code_table() -> None:
    """Guard for the parser: if the page's layout changed, the other tests would pass vacuously."""
    assert len(KEY_ROWS) >= len(KEYS)
    assert len(CODE_ROWS) >= len(CODES)


@pytest.mark.parametrize("path", list(KEYS))
def test_every_schema_key_has_exactly_one_row(path: str) -> None:
    count = sum(1 for key, _ in KEY_ROWS if key == path)
    assert count == 1, f"`{path}` has {count} rows in a Key table of {DOC.name} (want 1)"


def test_every_row_names_a_schema_key() -> None:
    unknown = [key for key, _ in KEY_ROWS if key not in KEYS]
    assert not unknown, f"{DOC.name} documents keys the format does not have: {unknown}"


@pytest.mark.parametrize("path", list(KEYS))
def test_documented_default_matches_schema(path: str) -> None:
    row = ROW_BY_KEY.get(path)
    if row is None:
        pytest.fail(f"`{path}` is not documented")
    assert plain(row["Default"]) == expected_default(KEYS[path])


@pytest.mark.parametrize("path", list(KEYS))
def test_documented_type_range_applicability_and_rules_match_schema(path: str) -> None:
    row, field = ROW_BY_KEY.get(path), KEYS[path]
    if row is None:
        pytest.fail(f"`{path}` is not documented")
    problems = []
    if plain(row["Type"]) != expected_type(field):
        problems.append(f"type {plain(row['Type'])!r}, schema {expected_type(field)!r}")
    applies = plain(row["Applies to"])
    if applies.split(";")[0].strip() != applies_words(path):
        problems.append(f"applies to {applies!r}, schema {applies_words(path)!r}")
    if field.required_when is not None:
        where = frozenset(n for n, ctx in CONTEXTS.items() if field.required_when.test(ctx))
        if f"required in {APPLIES_WORDS[where]}" not in applies:
            problems.append(f"applies-to cell does not say 'required in {APPLIES_WORDS[where]}'")
    if rule_ids(plain(row["Rules"])) != rule_ids(field.rule):
        problems.append(f"rules {plain(row['Rules'])!r}, schema {field.rule!r}")
    range_cell = plain(row["Range / choices"])
    problems += [
        f"range/choices cell lacks {word!r}"
        for word in expected_range_words(field)
        if word not in range_cell
    ]
    assert not problems, f"`{path}`: " + "; ".join(problems)


# -- the prose and the examples name only keys that exist -------------------------------

_KEY_MENTION = re.compile(
    r"(?<![\w/.-])(?:" + "|".join(SECTIONS) + r")(?:\[\d*\])?(?:\.[A-Za-z0-9_-]+(?:\[\d*\])?)+"
)


def normalised_mention(token: str) -> str:
    """`tiers.junior.street_caps[2]` (a `rules set` path) -> `tiers[].street_caps`."""
    token = re.sub(r"\[\d*\]", "[]", token)
    token = re.sub(r"(\[\])+$", "", token)
    parts = token.split(".")
    if parts[0] == "tiers":
        rest = parts[1:] if parts[1] in schema.TIER.fields else parts[2:]
        return ".".join(["tiers[]"] + rest) if rest else "tiers"
    return token


def test_code_spans_name_only_schema_keys() -> None:
    spans = re.findall(r"`([^`\n]+)`", _without_fences(TEXT))
    mentioned = {
        m
        for span in spans
        for m in _KEY_MENTION.findall(span)
        if not re.search(r"\.(json|toml|md|ya?ml|py)$", m)
    }  # file names
    assert mentioned, "the parser found no key mention at all"
    unknown = sorted(m for m in mentioned if normalised_mention(m) not in KEYS)
    assert not unknown, f"{DOC.name} mentions keys the format does not have: {unknown}"


def _toml_blocks() -> list[str]:
    return re.findall(r"^```toml\n(.*?)^```", TEXT, flags=re.S | re.M)


def _key_paths(table: dict, prefix: str = "") -> list[str]:
    paths = []
    for key, value in table.items():
        path = f"{prefix}.{key}" if prefix else key
        paths.append(path)
        if isinstance(value, dict):
            paths += _key_paths(value, path)
        elif isinstance(value, list) and value and all(isinstance(v, dict) for v in value):
            for item in value:
                paths += _key_paths(item, path + "[]")
    return paths


@pytest.mark.parametrize("block", _toml_blocks(), ids=lambda b: b.splitlines()[0][:40])
def test_toml_examples_use_schema_keys_and_whole_profiles_validate(block: str) -> None:
    data = tomllib.loads(block)
    unknown = sorted({p for p in _key_paths(data) if p not in KEYS})
    assert not unknown, f"example uses keys the format does not have: {unknown}"
    if isinstance(data.get("profile"), dict):
        assert validate_text(block, "example.toml") == []


# -- finding codes ----------------------------------------------------------------------


@pytest.mark.parametrize("code", sorted(CODES))
def test_every_finding_code_is_listed_with_its_severity(code: str) -> None:
    rows = [row for key, row in CODE_ROWS if key == code]
    assert len(rows) == 1, f"finding code {code!r} has {len(rows)} rows in {DOC.name} (want 1)"
    severity = "warning" if code in WARNING_CODES else "error"
    assert plain(rows[0]["Severity"]) == severity


def test_no_unknown_finding_code_is_listed() -> None:
    unknown = [key for key, _ in CODE_ROWS if key not in CODES]
    assert not unknown, f"{DOC.name} lists finding codes validation never reports: {unknown}"
