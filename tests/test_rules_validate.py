"""Validation of rule profiles (docs/profile-reference.md, "Findings").

Golden files: every `tests/data/profiles/invalid/NAME.toml` has `NAME.expected.json` beside
it, the full list of its findings in order, each `{"line", "column", "code", "path"}` and
optionally `"message"` (a text the message must contain). Every file under
`tests/data/profiles/valid/` must give no finding at all. A new file is a new test.
"""

from __future__ import annotations

import json
import tomllib
from pathlib import Path

import pytest

from gmtool.rules.compile import compile_text
from gmtool.rules.findings import CODES, WARNING_CODES, Finding, Report, Severity
from gmtool.rules.source import SourceMap
from gmtool.rules.validate import (
    ProfileFileError,
    validate_bytes,
    validate_paths,
    validate_text,
)

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "tests" / "data" / "profiles"
INVALID = sorted((DATA / "invalid").glob("*.toml"))
VALID = sorted((DATA / "valid").glob("*.toml"))
SHIPPED = sorted((ROOT / "rules").glob("*.toml"))
PLACE = ("line", "column", "code", "path")


def _expected(path: Path) -> list[dict]:
    return json.loads(path.with_name(f"{path.stem}.expected.json").read_text(encoding="utf-8"))


def _places(findings: list[Finding]) -> list[dict]:
    return [{key: getattr(f, key) for key in PLACE} for f in findings]


def _codes(text: str) -> list[str]:
    return [f.code for f in validate_text(text)]


# -- golden directories ---------------------------------------------------------------


@pytest.mark.parametrize("path", INVALID, ids=lambda p: p.stem)
def test_invalid_profile_gives_exactly_its_expected_findings(path: Path) -> None:
    expected = _expected(path)
    findings = validate_bytes(path.read_bytes(), path.name)
    assert _places(findings) == [{key: e[key] for key in PLACE} for e in expected]
    for finding, wanted in zip(findings, expected):
        assert finding.file == path.name
        assert finding.message, finding
        assert wanted.get("message", "") in finding.message


@pytest.mark.parametrize(
    "path",
    [p for p in INVALID if b"\r\n" not in p.read_bytes() and p.stem != "not-utf8"],
    ids=lambda p: p.stem,
)
def test_crlf_line_endings_give_the_same_findings(path: Path) -> None:
    crlf = path.read_bytes().replace(b"\n", b"\r\n")
    assert _places(validate_bytes(crlf, path.name)) == [
        {key: e[key] for key in PLACE} for e in _expected(path)
    ]


def test_golden_files_come_in_pairs() -> None:
    stems = {p.stem for p in INVALID}
    expected = {p.name.removesuffix(".expected.json") for p in (DATA / "invalid").glob("*.json")}
    assert stems == expected
    assert len(INVALID) >= len(CODES) and VALID


def test_every_finding_code_has_a_golden_file() -> None:
    """docs/profile-reference.md: every kind of finding, errors and both warnings, is shown
    by an example."""
    seen = {row["code"] for path in INVALID for row in _expected(path)}
    # `unreadable` cannot be a committed file (it is one that cannot be read): a test makes
    # a broken link instead (tests/test_operator_safety.py)
    assert seen == set(CODES) - {"unreadable"}
    assert WARNING_CODES == {"seed-ratio", "time-limit", "no-effect"}


@pytest.mark.parametrize("path", VALID + SHIPPED, ids=lambda p: p.stem)
def test_valid_profile_gives_no_finding_at_all(path: Path) -> None:
    assert validate_bytes(path.read_bytes(), path.name) == []
    compile_text(path.read_text(encoding="utf-8"), path.name)


def _key_paths(value: object, prefix: tuple = ()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield prefix + (key,)
            yield from _key_paths(item, prefix + (key,))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            if isinstance(item, dict):
                yield prefix + (index,)
                yield from _key_paths(item, prefix + (index,))


@pytest.mark.parametrize("path", VALID + SHIPPED, ids=lambda p: p.stem)
def test_every_key_is_located_on_a_line_that_names_it(path: Path) -> None:
    """The locator finds each key itself (never an ancestor) on a line where it is written."""
    text = path.read_text(encoding="utf-8")
    source, lines = SourceMap(text), text.splitlines()
    for key_path in _key_paths(tomllib.loads(text)):
        assert key_path in source.keys or key_path in source.headers, key_path
        line, column = source.find(key_path)
        written = lines[line - 1][column - 1 :]
        if isinstance(key_path[-1], str):
            assert key_path[-1] in written, (key_path, line, column)
        else:  # an element of an array: a [[header]] or an inline table
            assert written.startswith(("[[", "{")), (key_path, line, column)


# -- RULES Q: capped (QQ-style) tiers -------------------------------------------------

HEAD = '[profile]\nid = "t"\ngame = "stud5"\n'


def capped(
    ante: int = 100,
    caps: str = "200, 500, 1000, 1000",
    hand_cap: int = 1000,
    min_holding: int = 1000,
    extra: str = "",
) -> str:
    return (
        f'{HEAD}\n[[tiers]]\nid = "junior"\n{extra}ante = {ante}\n'
        f"street_caps = [{caps}]\nhand_cap = {hand_cap}\nmin_holding = {min_holding}\n"
    )


def test_q2_seed_table_validates_cleanly() -> None:
    """Q2: seed 001's junior tier (100 / 200 500 1000 1000 / 1000 / 1000) is the model."""
    assert validate_text(capped()) == []


def test_q5_min_holding_below_hand_cap_is_an_error() -> None:
    """Q5: because min holding >= hand cap, a seated player can always cover the hand cap;
    validation must reject a tier whose min holding is below its hand cap."""
    findings = validate_text(capped(min_holding=999))
    assert [(f.code, f.path, f.line, f.severity) for f in findings] == [
        ("min-holding", "tiers.junior.min_holding", 10, Severity.ERROR)
    ]


def test_q5_min_holding_equal_to_hand_cap_is_enough() -> None:
    """Q5: min holding >= hand cap; equal is allowed."""
    assert _codes(capped(min_holding=1000)) == []
    assert _codes(capped(min_holding=10**9)) == []


def test_s22_training_room_is_exempt_from_the_min_holding_rule() -> None:
    """S22: in a training room no coins move, so everybody may sit (min holding 0)."""
    assert _codes(capped(min_holding=0, extra="coins = false\n")) == []
    assert _codes(capped(min_holding=0, extra="coins = true\n")) == ["min-holding"]


def test_q5_street_caps_that_decrease_are_an_error() -> None:
    """Q5: validation must reject a tier whose caps decrease from street to street."""
    findings = validate_text(capped(caps="200, 500, 400, 1000"))
    errors = [f for f in findings if f.severity is Severity.ERROR]
    assert [(f.code, f.path, f.line, f.column) for f in errors] == [
        ("caps-decrease", "tiers.junior.street_caps[2]", 8, 26)
    ]
    assert "street-4 cap 400 is below the street-3 cap 500" in errors[0].message


def test_q5_equal_caps_on_consecutive_streets_are_fine() -> None:
    """Q2: streets 4 and 5 share the hand cap in every seed tier; equal is not a decrease."""
    assert _codes(capped(caps="200, 500, 500, 1000")) == ["seed-ratio"]


def test_q5_last_street_cap_that_differs_from_hand_cap_is_an_error() -> None:
    """Q5: validation must reject a tier whose last cap differs from the hand cap."""
    findings = validate_text(capped(caps="200, 500, 1000, 1000", hand_cap=900, min_holding=900))
    assert ("last-cap", "tiers.junior.hand_cap", 9) in [(f.code, f.path, f.line) for f in findings]
    assert not [f for f in findings if f.severity is Severity.ERROR and f.code != "last-cap"]


def test_q5_every_problem_of_one_tier_is_reported() -> None:
    """Validation collects every problem: decreasing caps do not hide a low min holding."""
    codes = _codes(capped(caps="200, 100, 1000, 1000", min_holding=10))
    assert {"caps-decrease", "min-holding"} <= set(codes)


def test_q1_ante_above_the_street_2_cap_is_an_error() -> None:
    """Q1/D-4: the ante counts toward the hand total, so the street caps include it."""
    findings = validate_text(capped(ante=201))
    assert [(f.code, f.line) for f in findings if f.severity is Severity.ERROR] == [
        ("ante-above-cap", 7)
    ]
    assert _codes(capped(ante=200)) == ["seed-ratio"]  # equal: valid, off the ratio


def test_q2_tier_off_the_seed_ratios_is_only_a_warning() -> None:
    """Q2: a profile that departs from the ratios (ante 1/10, street 2 1/5, street 3 1/2,
    streets 4-5 1/1 of the hand cap) is valid but should get a warning."""
    findings = validate_text(capped(ante=50, caps="300, 500, 1000, 1000"))
    assert [(f.code, f.path) for f in findings] == [
        ("seed-ratio", "tiers.junior.ante"),
        ("seed-ratio", "tiers.junior.street_caps"),
    ]
    report = Report(1, findings)
    assert report.exit_code() == 0 and report.exit_code(strict=True) == 1
    assert all(f.severity is Severity.WARNING for f in findings)


def test_q6_every_tier_disabled_is_an_error() -> None:
    """Q6: a disabled tier is valid but seats nobody; with none enabled no room can open."""
    text = (
        capped(extra="enabled = false\n")
        + '\n[[tiers]]\nid = "middle"\nenabled = false\nante = 500\n'
        "street_caps = [1000, 2500, 5000, 5000]\nhand_cap = 5000\nmin_holding = 5000\n"
    )
    findings = validate_text(text)
    assert [(f.code, f.path, f.line) for f in findings] == [
        ("no-enabled-tier", "tiers.junior.enabled", 7)
    ]


def test_q6_one_enabled_tier_is_enough() -> None:
    """Q6: seed 004 keeps four tiers disabled and only "normal" open."""
    text = (
        capped() + '\n[[tiers]]\nid = "middle"\nenabled = false\nante = 500\n'
        "street_caps = [1000, 2500, 5000, 5000]\nhand_cap = 5000\nmin_holding = 5000\n"
    )
    assert _codes(text) == []


def test_q1_tier_ids_must_be_unique() -> None:
    """Q1: each tier is one room; `rules set` addresses tiers by id, so ids are unique."""
    text = capped() + capped().removeprefix(HEAD)
    assert [(f.code, f.path, f.line) for f in validate_text(text)] == [
        ("duplicate-tier", "tiers[1].id", 13)
    ]


# -- RULES S: the stud5 table, deck and ranking ----------------------------------------


@pytest.mark.parametrize(("seats", "codes"), [(4, []), (5, []), (6, ["deck-too-small"])])
def test_s8_seats_times_five_cards_must_fit_the_28_card_deck(seats: int, codes: list) -> None:
    """S8: 2 to 4 seated players; seats x 5 cards must fit the deck (5 x 5 = 25 <= 28)."""
    text = capped().replace(HEAD, f"{HEAD}[table]\nseats = {seats}\n")
    assert _codes(text) == codes


def test_s1_a_52_card_deck_fits_ten_seats() -> None:
    """S1: a profile may declare another deck, for example all 52 cards."""
    text = capped().replace(
        HEAD, HEAD + '[deck]\nranks = "2 3 4 5 6 7 8 9 T J Q K A"\n[table]\nseats = 10\n'
    )
    assert _codes(text) == []


def test_s9_min_players_above_the_seats_is_out_of_range() -> None:
    """S9: a hand needs min_players seated players, so they must fit the table."""
    text = capped().replace(HEAD, f"{HEAD}[table]\nseats = 3\nmin_players = 4\n")
    assert [(f.code, f.path, f.line) for f in validate_text(text)] == [
        ("out-of-range", "table.min_players", 6)
    ]


def test_s8_zero_seats_is_one_out_of_range_finding() -> None:
    """S8: a table has 2 to 4 seated players; zero seats is out of range, reported once
    (not again as a min_players or deck problem)."""
    text = capped().replace(HEAD, f"{HEAD}[table]\nseats = 0\n")
    assert _codes(text) == ["out-of-range"]


def test_s3_categories_may_be_reordered_but_not_changed() -> None:
    """S3: the order is a profile setting; the set is exactly the game's categories."""
    reordered = (
        '["four_of_a_kind", "straight_flush", "flush", "full_house", "straight", '
        '"three_of_a_kind", "two_pair", "one_pair", "high_card"]'
    )
    assert _codes(capped().replace(HEAD, f"{HEAD}[ranking]\ncategories = {reordered}\n")) == []
    dropped = reordered.replace(', "high_card"', "")
    findings = validate_text(capped().replace(HEAD, f"{HEAD}[ranking]\ncategories = {dropped}\n"))
    assert [(f.code, f.line) for f in findings] == [("bad-categories", 5)]
    assert "missing high_card" in findings[0].message


def test_s23_ladder_steps_must_strictly_increase() -> None:
    """S23: 24 steps, each double the last; a step not above the one before is an error."""
    ladder = '[ladder]\ntitles = [\n  { title = "a", at = 100 },\n  { title = "b", at = 90 },\n]\n'
    findings = validate_text(capped().replace(HEAD, HEAD + ladder))
    assert [(f.code, f.path, f.line, f.column) for f in findings] == [
        ("not-increasing", "ladder.titles[1].at", 7, 18)
    ]


@pytest.mark.parametrize(
    ("key", "value", "path"),
    [
        ("raise_chips", "[1, 5, 5]", "betting.raise_chips[2]"),
        ("chips", "[1, 10, 5]", "owner_ante.chips[2]"),
    ],
)
def test_l2_l10_chip_buttons_must_strictly_increase(key: str, value: str, path: str) -> None:
    """L2/L10: the ante chips (1, 5, 10, 50, 100, 500) and raise chips (1, 5, 10, 50, 100)."""
    section = "betting" if key == "raise_chips" else "owner_ante"
    style = '[betting]\nstyle = "owner_ante"\n'
    body = (
        f"{style}{key} = {value}\n"
        if section == "betting"
        else f"{style}[owner_ante]\n{key} = {value}\n"
    )
    text = f'{HEAD}{body}[[tiers]]\nid = "table"\n'
    assert [(f.code, f.path) for f in validate_text(text)] == [("not-increasing", path)]


# -- RULES H: three-card follow tables -----------------------------------------------


def three_card(
    bfb: str = "10",
    sfs: str = "20",
    bfs: str = "5, 10",
    sfb: str = "10, 20",
    ante: int = 5,
    cap: int = 20,
) -> str:
    return (
        '[profile]\nid = "t"\ngame = "three-card"\n\n[[tiers]]\nid = "chips-5"\n'
        f"ante = {ante}\ncap = {cap}\nblind_follows_blind = [{bfb}]\n"
        f"seen_follows_seen = [{sfs}]\nblind_follows_seen = [{bfs}]\n"
        f"seen_follows_blind = [{sfb}]\n"
    )


def test_h5_seed_002_chip_tables_validate_cleanly() -> None:
    """H5: seed 002's 5-chip and 10-chip rooms are the model."""
    assert _codes(three_card()) == []
    assert _codes(three_card("20", "40", "5, 10, 20", "10, 20, 40", ante=10, cap=40)) == []


def test_h5_seen_after_blind_must_be_at_least_twice_the_blind_bet() -> None:
    """H5: seen after blind: at least 2 x the previous bet (the blind ante is 5)."""
    findings = validate_text(three_card(sfb="5, 20"))
    assert [(f.code, f.path, f.line) for f in findings] == [
        ("follow-table", "tiers.chips-5.seen_follows_blind", 12)
    ]
    assert "below twice a blind bet of 5" in findings[0].message


def test_h5_blind_after_seen_must_be_at_least_half_the_seen_bet() -> None:
    """H5: blind after seen: at least 1/2 of the previous bet (the smallest seen bet is 10)."""
    findings = validate_text(three_card(bfs="4, 10"))
    assert [(f.code, f.path) for f in findings] == [
        ("follow-table", "tiers.chips-5.blind_follows_seen")
    ]
    assert "below half a seen bet of 10" in findings[0].message


def test_h5_follow_table_must_reach_the_largest_previous_bet() -> None:
    """H5: seen after seen: at least the previous bet, so a seen bet of 20 needs a 20."""
    findings = validate_text(three_card(sfs="10"))
    assert [f.code for f in findings] == ["follow-table"]
    assert "no amount of at least a seen bet of 20" in findings[0].message


def test_h3_no_follow_amount_may_exceed_the_cap() -> None:
    """H3/H5: no single bet may exceed the room's cap; each table over it is reported."""
    findings = validate_text(three_card(sfs="40", sfb="10, 20, 40"))
    assert [(f.code, f.path) for f in findings] == [
        ("follow-table", "tiers.chips-5.seen_follows_seen"),
        ("follow-table", "tiers.chips-5.seen_follows_blind"),
    ]


def test_h5_follow_amounts_must_strictly_increase() -> None:
    """H5: the chip table lists allowed amounts ("5 or 10"), from low to high."""
    findings = validate_text(three_card(bfs="10, 5"))
    assert [(f.code, f.path, f.column) for f in findings] == [
        ("not-increasing", "tiers.chips-5.blind_follows_seen[1]", 27)
    ]


def test_h1_seven_players_need_21_of_the_cards() -> None:
    """H1: 2 to 7 players, 3 cards each: 7 x 3 = 21 does not fit a 20-card deck."""
    text = three_card().replace(
        'game = "three-card"\n', 'game = "three-card"\n[deck]\nranks = "T J Q K A"\n'
    )
    assert [(f.code, f.path) for f in validate_text(text)] == [("deck-too-small", "deck.ranks")]


# -- RULES G: time limits --------------------------------------------------------------


@pytest.mark.parametrize(
    ("seconds", "codes"),
    [
        (5, []),
        (15, []),
        (120, []),
        (4, ["time-limit"]),
        (121, ["time-limit"]),
        (0, ["out-of-range"]),
        (-5, ["out-of-range"]),
    ],
)
def test_g1_time_limit_outside_5_to_120_s_is_a_warning(seconds: int, codes: list) -> None:
    """G1: every time limit is a profile value (15 s in every seed); outside 5..120 s is a
    warning, below 1 s an error (and then not a warning as well)."""
    text = capped().replace(HEAD, f"{HEAD}[timeouts]\naction_s = {seconds}\n")
    assert _codes(text) == codes


def test_g1_reconnect_window_is_in_minutes_and_not_warned_about() -> None:
    """S18/G1: reconnect_min is the seed's n minutes, not a time limit in seconds."""
    text = capped().replace(HEAD, f"{HEAD}[timeouts]\nreconnect_min = 600\n")
    assert _codes(text) == []


# -- keys, types and the document itself ------------------------------------------------


def test_unknown_key_suggests_the_near_name() -> None:
    findings = validate_text(capped().replace("hand_cap = 1000", "hand_cpa = 1000"))
    assert [(f.code, f.path, f.line) for f in findings] == [
        ("missing-key", "tiers.junior.hand_cap", 5),  # at the [[tiers]] header that lacks it
        ("unknown-key", "tiers.junior.hand_cpa", 9),
    ]
    assert findings[1].message == "unknown key 'hand_cpa' in [tiers]; did you mean 'hand_cap'?"


def test_unknown_or_missing_game_is_the_only_finding() -> None:
    """Which keys apply depends on the game: without a known game, only the game is wrong."""
    for game in ('game = "poker"\n', ""):
        findings = validate_text(capped().replace('game = "stud5"\n', game))
        assert [f.path for f in findings] == ["profile.game"]


def test_a_file_without_a_profile_section_is_invalid() -> None:
    """[profile] holds the required id and game, so the section itself is required."""
    findings = validate_text(capped().removeprefix(HEAD))
    assert [(f.code, f.path, f.line, f.column) for f in findings] == [
        ("missing-key", "profile", 1, 1)
    ]


def test_a_string_for_a_number_is_a_wrong_type() -> None:
    findings = validate_text(capped().replace("hand_cap = 1000", 'hand_cap = "1000"'))
    assert [(f.code, f.path, f.message) for f in findings] == [
        ("wrong-type", "tiers.junior.hand_cap", "expected an integer, got string '1000'")
    ]


def test_toml_syntax_error_is_one_finding_at_tomllib_position() -> None:
    findings = validate_text(HEAD + "[table\nseats = 4\n", "x.toml")
    assert [(f.file, f.line, f.column, f.path, f.code) for f in findings] == [
        ("x.toml", 4, 7, "", "toml-syntax")
    ]
    assert "(at line" not in findings[0].message


def test_non_utf8_bytes_are_a_finding_with_a_character_column() -> None:
    raw = HEAD.encode() + 'title = "梭哈'.encode() + b'\xff"\n'
    assert [(f.line, f.column, f.code) for f in validate_bytes(raw, "x.toml")] == [
        (4, 12, "toml-syntax")
    ]


def test_findings_are_sorted_by_position_and_print_as_file_line_column() -> None:
    text = capped(min_holding=999).replace(HEAD, f"{HEAD}[table]\nseats = 6\n")
    findings = validate_text(text, "p.toml")
    assert findings == sorted(findings, key=lambda f: (f.line, f.column, f.code))
    assert str(findings[0]) == (
        "p.toml:5:1: error [deck-too-small] table.seats: "
        "6 seats x 5 cards = 30 cards, but the deck has 28"
    )


# -- the locator on its own ------------------------------------------------------------


def test_locator_follows_sub_tables_of_the_last_array_element() -> None:
    source = SourceMap('[[tiers]]\nid = "a"\n[[tiers]]\nid = "b"\n[tiers.x]\ny = 1\n')
    assert source.find(("tiers", 1, "x", "y")) == (6, 1)
    assert source.find(("tiers", 1, "x")) == (5, 1)


def test_locator_reads_escapes_in_quoted_keys() -> None:
    source = SourceMap('[profile]\n"a\\u0062" = 1\n"x\\ny" = 2\n')
    assert source.find(("profile", "ab")) == (2, 1)
    assert source.find(("profile", "x\ny")) == (3, 1)


def test_locator_does_not_end_a_multiline_string_at_an_escaped_quote() -> None:
    source = SourceMap('a = """x\\"""\n[t]\nk = 1\n"""\n[t]\nk = 2\n')
    assert source.find(("t", "k")) == (6, 1)


def test_locator_places_a_section_opened_by_a_sub_table_at_that_header() -> None:
    source = SourceMap("x = 1\n\n[three_card.open_cost]\nseen_vs_blind = 4\n")
    assert source.find(("three_card",)) == (3, 1)


# -- files and folders -------------------------------------------------------------------


def test_validate_paths_walks_folders_and_skips_scenarios(tmp_path: Path) -> None:
    (tmp_path / "nested").mkdir()
    (tmp_path / "nested" / "p.toml").write_text(capped(min_holding=1), encoding="utf-8")
    (tmp_path / "hand.toml").write_text(
        'profile = "nested/p.toml"\ntier = "junior"\n', encoding="utf-8"
    )
    (tmp_path / "notes.txt").write_text("not toml", encoding="utf-8")
    report = validate_paths([str(tmp_path)])
    assert report.files == 1
    assert [(Path(f.file).name, f.code) for f in report.findings] == [("p.toml", "min-holding")]


def test_a_scenario_named_alone_says_it_was_skipped_not_just_ok(tmp_path: Path) -> None:
    """A pre-commit hook passes every changed .toml, so a scenario named directly is
    skipped and the run stays ok (exit 0), but the summary says so: it said only "0
    profile(s) checked: 0 error(s), 0 warning(s): ok" (outside probe of issue 23)."""
    scenario = tmp_path / "hand.toml"
    scenario.write_text('profile = "p.toml"\ntier = "junior"\n', encoding="utf-8")
    report = validate_paths([str(scenario)])
    assert (report.files, report.scenarios, report.exit_code()) == (0, 1, 0)
    assert report.summary() == (
        "0 profile(s) checked (1 scenario file(s) skipped: `gmtool rules test` runs them): "
        "0 error(s), 0 warning(s): ok"
    )


def test_validate_paths_refuses_a_missing_path(tmp_path: Path) -> None:
    with pytest.raises(ProfileFileError, match="no such file or folder"):
        validate_paths([str(tmp_path / "absent.toml")])
