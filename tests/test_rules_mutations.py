"""Mutation tests: break each shipped profile the way an operator might, through the CLI.

Each mutation edits the text of a shipped profile and returns the 1-based line it changed
(found by locating the edited line, never hard-coded); `gmtool rules validate` must then
exit 1 with a finding of the expected code on exactly that line.
"""

from __future__ import annotations

import json
import re
import shutil
from collections.abc import Callable
from pathlib import Path
from typing import NamedTuple

import pytest
from typer.testing import CliRunner

from gmtool.cli import app

RULES = Path(__file__).resolve().parent.parent / "rules"
SHIPPED = {path.stem: path for path in sorted(RULES.glob("*.toml"))}
CAPPED = ("qq-showhand", "straight-flush", "video-showhand")
OWNER_ANTE = ("lequ-showhand",)
THREE_CARD = ("suihua-three-card",)
FORMATS = ("text", "json", "github")

runner = CliRunner()


class Mutated(NamedTuple):
    text: str
    line: int  # the line of the offending key in the mutated text
    code: str


def edit_line(text: str, pattern: str, replacement: str, nth: int = 0) -> tuple[str, int]:
    """Apply `re.sub(pattern, replacement)` to the nth line matching `pattern`."""
    lines = text.splitlines(keepends=True)
    hits = [i for i, line in enumerate(lines) if re.search(pattern, line)]
    index = hits[nth]
    changed = re.sub(pattern, replacement, lines[index], count=1)
    assert changed != lines[index], (pattern, lines[index])
    lines[index] = changed
    return "".join(lines), index + 1


def line_of(text: str, pattern: str) -> int:
    """The 1-based line of the first line matching `pattern`."""
    return next(i for i, line in enumerate(text.splitlines(), 1) if re.search(pattern, line))


def below_min_holding(name: str, text: str) -> Mutated:
    """Q5: min holding >= hand cap (L7: at least 1 ante multiple; H12: the ante plus one
    follow at the cap)."""
    if name in CAPPED:  # Q5: min holding below the hand cap
        return Mutated(
            *edit_line(text, r"^min_holding = 1000\b", "min_holding = 999"), "min-holding"
        )
    if name in OWNER_ANTE:  # L7: coins >= min_holding_antes x ante, at least 1
        return Mutated(
            *edit_line(text, r"^min_holding_antes = \d+", "min_holding_antes = 0"), "out-of-range"
        )
    return Mutated(*edit_line(text, r"^min_holding = 25\b", "min_holding = 24"), "min-holding")


def decreasing_caps(name: str, text: str) -> Mutated:
    """Q5: caps never decrease (L2 chips and H5 follow amounts strictly increase)."""
    if name in CAPPED:  # Q5: caps never decrease from street to street
        return Mutated(
            *edit_line(
                text,
                r"^street_caps = \[200, 500, 1000, 1000\]",
                "street_caps = [200, 500, 400, 1000]",
            ),
            "caps-decrease",
        )
    if name in OWNER_ANTE:  # L2: ante chips strictly increase
        return Mutated(
            *edit_line(
                text, r"^chips = \[1, 5, 10, 50, 100, 500\]", "chips = [1, 5, 10, 50, 100, 50]"
            ),
            "not-increasing",
        )
    return Mutated(
        *edit_line(
            text, r"^blind_follows_seen = \[5, 10, 20\]", "blind_follows_seen = [5, 20, 10]"
        ),
        "not-increasing",
    )


def too_many_seats(name: str, text: str) -> Mutated:
    """S8: seats x cards per player must fit the deck."""
    if name in THREE_CARD:  # H1: 10 seats x 3 cards = 30 do not fit ranks 8..A (28 cards)
        text, _ = edit_line(text, r'^ranks = "[^"]*"', 'ranks = "8 9 T J Q K A"')
        text, line = edit_line(text, r"^seats = \d+", "seats = 10")
        return Mutated(text, line, "deck-too-small")
    # S8: six seats x five cards = 30 do not fit 28 cards
    return Mutated(*edit_line(text, r"^seats = 4\b", "seats = 6"), "deck-too-small")


def misspelt_key(name: str, text: str) -> Mutated:
    return Mutated(*edit_line(text, r"^reconnect_min =", "reconect_min ="), "unknown-key")


def string_for_number(name: str, text: str) -> Mutated:
    return Mutated(*edit_line(text, r"^seats = (\d+)", r'seats = "\1"'), "wrong-type")


def duplicate_tier_id(name: str, text: str) -> Mutated:
    ids = re.findall(r'^id = "([^"]+)"', text.split("[[tiers]]", 1)[1], flags=re.MULTILINE)
    if len(ids) < 2:  # one tier only: add a second with the same id
        text += f'\n[[tiers]]\nid = "{ids[0]}"\ncoins = true\n'
        return Mutated(text, len(text.splitlines()) - 1, "duplicate-tier")
    first_tier_line = line_of(text, r"^\[\[tiers\]\]")
    nth = sum(1 for line in text.splitlines()[:first_tier_line] if line.startswith("id = "))
    return Mutated(
        *edit_line(text, r'^id = "[^"]+"', f'id = "{ids[0]}"', nth=nth + 1), "duplicate-tier"
    )


def ladder_not_increasing(name: str, text: str) -> Mutated:
    """S23: each ladder step above the last (合同工 400 -> 150, below 临时工 200)."""
    return Mutated(*edit_line(text, r'(title = "合同工", at = )400', r"\g<1>150"), "not-increasing")


def broken_toml(name: str, text: str) -> Mutated:
    return Mutated(*edit_line(text, r"^\[table\]", "[table"), "toml-syntax")


def follow_below_h5(name: str, text: str) -> Mutated:
    """H5: seen after blind at least twice the blind bet (the ante 5): 5 is too little."""
    return Mutated(
        *edit_line(text, r"^seen_follows_blind = \[10, 20\]", "seen_follows_blind = [5, 20]"),
        "follow-table",
    )


def follow_above_cap(name: str, text: str) -> Mutated:
    """H3: no bet above the room cap (20 in the 5-chip room)."""
    return Mutated(
        *edit_line(text, r"^seen_follows_seen = \[20\]", "seen_follows_seen = [30]"), "follow-table"
    )


def all_tiers_disabled(name: str, text: str) -> Mutated:
    """Q6: every tier disabled; reported at the first tier's `enabled` key."""
    lines = [line for line in text.splitlines(keepends=True) if not line.startswith("enabled =")]
    out: list[str] = []
    for line in lines:
        out.append(line)
        if line.startswith("[[tiers]]"):
            out.append("enabled = false\n")
    text = "".join(out)
    return Mutated(text, line_of(text, r"^enabled = false"), "no-enabled-tier")


MUTATIONS: dict[str, tuple[Callable[[str, str], Mutated], tuple[str, ...]]] = {
    "q5-min-holding-below-hand-cap": (below_min_holding, CAPPED + OWNER_ANTE + THREE_CARD),
    "q5-caps-decrease": (decreasing_caps, CAPPED + OWNER_ANTE + THREE_CARD),
    "s8-six-seats-in-28-cards": (too_many_seats, CAPPED + OWNER_ANTE + THREE_CARD),
    "misspelt-key": (misspelt_key, tuple(SHIPPED)),
    "string-for-number": (string_for_number, tuple(SHIPPED)),
    "duplicate-tier-id": (duplicate_tier_id, tuple(SHIPPED)),
    "s23-ladder-not-increasing": (ladder_not_increasing, ("video-showhand",)),
    "broken-toml": (broken_toml, tuple(SHIPPED)),
    "h5-follow-below-minimum": (follow_below_h5, THREE_CARD),
    "h3-follow-above-cap": (follow_above_cap, THREE_CARD),
    "q6-all-tiers-disabled": (all_tiers_disabled, tuple(SHIPPED)),
}
CASES = [
    pytest.param(profile, mutation, id=f"{profile}-{mutation}")
    for mutation, (_, profiles) in MUTATIONS.items()
    for profile in profiles
]


def validate(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, ["rules", "validate", *args])
    assert "Traceback" not in result.output
    assert result.exception is None or isinstance(result.exception, SystemExit), result.exception
    return result.exit_code, result.stdout


def test_every_shipped_profile_is_covered() -> None:
    assert set(SHIPPED) == set(CAPPED + OWNER_ANTE + THREE_CARD)
    assert {profile for profile, *_ in (case.values for case in CASES)} == set(SHIPPED)


@pytest.mark.parametrize(("profile", "mutation"), CASES)
def test_mutated_profile_fails_with_a_finding_on_the_mutated_line(
    tmp_path: Path, profile: str, mutation: str
) -> None:
    """Exit 1 and a finding on exactly the line of the offending key."""
    original = SHIPPED[profile].read_text(encoding="utf-8")
    mutate, _ = MUTATIONS[mutation]
    mutated = mutate(profile, original)
    assert mutated.text != original
    path = tmp_path / f"{profile}.toml"
    path.write_text(mutated.text, encoding="utf-8")
    code, out = validate(str(path), "--format", "json")
    assert code == 1, out
    errors = json.loads(out)["errors"]
    hits = [(e["line"], e["code"]) for e in errors]
    assert (mutated.line, mutated.code) in hits, (mutated.line, mutated.code, errors)
    assert all(e["file"] == str(path) for e in errors)


def test_misspelt_key_names_the_right_one(tmp_path: Path) -> None:
    text, line = edit_line(
        SHIPPED["qq-showhand"].read_text(encoding="utf-8"), r"^reconnect_min =", "reconect_min ="
    )
    (tmp_path / "qq.toml").write_text(text, encoding="utf-8")
    code, out = validate(str(tmp_path / "qq.toml"))
    assert code == 1
    assert (
        f"qq.toml:{line}:1: error [unknown-key] timeouts.reconect_min: unknown key "
        "'reconect_min' in [timeouts]; did you mean 'reconnect_min'?"
    ) in out


# -- the shipped profiles themselves -------------------------------------------------


@pytest.mark.parametrize("output_format", FORMATS)
def test_shipped_profiles_give_no_finding_in_any_format(output_format: str) -> None:
    """docs/profile-reference.md: the shipped profiles of the seed systems validate with no
    warning at all."""
    code, out = validate(str(RULES), "--strict", "--format", output_format)
    assert code == 0, out
    if output_format == "json":
        assert json.loads(out) == {"files": 5, "errors": [], "warnings": []}
    else:
        assert out == "5 profile(s) checked: 0 error(s), 0 warning(s): ok\n"


@pytest.mark.parametrize("profile", sorted(SHIPPED))
def test_each_shipped_profile_alone_is_clean_even_when_strict(profile: str) -> None:
    code, out = validate(str(SHIPPED[profile]), "--strict", "--format", "json")
    assert (code, json.loads(out)) == (0, {"files": 1, "errors": [], "warnings": []})


# -- warnings and --strict -------------------------------------------------------------


@pytest.mark.parametrize(
    ("pattern", "replacement", "code"),
    [
        (r"^ante = 100\b", "ante = 50", "seed-ratio"),  # Q2: ante 1/10 of the hand cap
        (r"^action_s = 15\b", "action_s = 3", "time-limit"),  # G1: 5..120 s
    ],
)
def test_strict_turns_warnings_into_exit_1(
    tmp_path: Path, pattern: str, replacement: str, code: str
) -> None:
    text, line = edit_line(SHIPPED["qq-showhand"].read_text(encoding="utf-8"), pattern, replacement)
    path = tmp_path / "qq.toml"
    path.write_text(text, encoding="utf-8")
    exit_code, out = validate(str(path), "--format", "json")
    report = json.loads(out)
    assert exit_code == 0 and report["errors"] == []
    assert [(w["line"], w["code"]) for w in report["warnings"]] == [(line, code)]
    strict_code, strict_out = validate(str(path), "--format", "json", "--strict")
    assert strict_code == 1 and json.loads(strict_out) == report


# -- folders ---------------------------------------------------------------------------


def test_a_folder_with_a_scenario_file_skips_the_scenario(tmp_path: Path) -> None:
    """rules/scenarios/README.md: a scenario names its profile with a top-level string
    `profile = "..."`."""
    for path in SHIPPED.values():
        shutil.copy(path, tmp_path / path.name)
    scenarios = tmp_path / "hands"
    scenarios.mkdir()
    (scenarios / "allin.toml").write_text(
        'profile = "../qq-showhand.toml"\ntier = "junior"\nseed = "x"\n'
        'actions = ["ann bet 100", "bob call"]\n\n[expect]\nwinner = "ann"\n',
        encoding="utf-8",
    )
    code, out = validate(str(tmp_path), "--strict", "--format", "json")
    assert (code, json.loads(out)) == (0, {"files": 5, "errors": [], "warnings": []})
    code, out = validate(str(scenarios / "allin.toml"), "--format", "json")
    # Named explicitly (as a pre-commit hook passes changed files) it is skipped too.
    assert (code, json.loads(out)) == (0, {"files": 0, "errors": [], "warnings": []})
