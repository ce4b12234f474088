"""`rules set` (safe edits keeping comments), `rules diff` (player words) and `rules schema`."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app
from gmtool.rules.compile import compile_file

RULES = Path(__file__).resolve().parent.parent / "rules"
runner = CliRunner()


@pytest.fixture
def qq(tmp_path: Path) -> Path:
    copy = tmp_path / "qq.toml"
    shutil.copy(RULES / "qq-showhand.toml", copy)
    return copy


def test_set_edits_one_value_and_keeps_comments_and_layout(qq: Path) -> None:
    before = qq.read_text(encoding="utf-8")
    result = runner.invoke(
        app, ["rules", "set", str(qq), "tiers.junior.street_caps", "[200, 600, 1000, 1000]"]
    )
    assert result.exit_code == 0, result.output
    after = qq.read_text(encoding="utf-8")
    changed = [(a, b) for a, b in zip(before.splitlines(), after.splitlines()) if a != b]
    assert changed == [
        (
            "street_caps = [200, 500, 1000, 1000] # Q1: 本轮最大注 for streets 2, 3, 4, 5",
            "street_caps = [200, 600, 1000, 1000] # Q1: 本轮最大注 for streets 2, 3, 4, 5",
        )
    ]
    assert len(before.splitlines()) == len(after.splitlines())


def test_set_reports_a_seed_ratio_warning_but_writes(qq: Path) -> None:
    result = runner.invoke(
        app, ["rules", "set", str(qq), "tiers.junior.street_caps", "[200, 600, 1000, 1000]"]
    )
    assert "seed-ratio" in result.output


@pytest.mark.parametrize(
    "key, value, code",
    [
        ("tiers.junior.min_holding", "900", "min-holding"),
        ("tiers.junior.street_caps", "[200, 100, 1000, 1000]", "caps-decrease"),
        ("tiers.junior.hand_cap", '"lots"', "wrong-type"),
        ("table.seats", "6", "deck-too-small"),
        ("timeouts.actoin_s", "20", "unknown-key"),
    ],
)
def test_set_refuses_an_invalid_result_and_leaves_the_file_unchanged(
    qq: Path, key: str, value: str, code: str
) -> None:
    before = qq.read_bytes()
    result = runner.invoke(app, ["rules", "set", str(qq), key, value])
    assert result.exit_code == 1
    assert code in result.output
    assert "left unchanged" in result.output
    assert qq.read_bytes() == before
    assert not list(qq.parent.glob(".qq.toml.*")), "no temporary file is left behind"


def test_set_addresses_tiers_by_id_and_by_index(qq: Path) -> None:
    assert runner.invoke(app, ["rules", "set", str(qq), "tiers[4].title", '"大师"']).exit_code == 0
    assert (
        runner.invoke(app, ["rules", "set", str(qq), "tiers.senior.title", "资深"]).exit_code == 0
    )
    titles = {t["id"]: t["title"] for t in compile_file(qq)["tiers"]}
    assert titles["expert"] == "大师" and titles["senior"] == "资深"


def test_set_adds_a_key_the_file_leaves_to_its_default(qq: Path) -> None:
    result = runner.invoke(app, ["rules", "set", str(qq), "tiers.middle.enabled", "false"])
    assert result.exit_code == 0, result.output
    middle = next(t for t in compile_file(qq)["tiers"] if t["id"] == "middle")
    assert middle["enabled"] is False


@pytest.mark.parametrize("key", ["tiers.nobody.ante", "tiers..ante", "timeouts.action_s.x"])
def test_set_with_a_key_that_names_nothing_is_a_usage_error(qq: Path, key: str) -> None:
    before = qq.read_bytes()
    result = runner.invoke(app, ["rules", "set", str(qq), key, "1"])
    assert result.exit_code == 2, result.output
    assert qq.read_bytes() == before


def test_set_on_broken_toml_is_refused(qq: Path) -> None:
    qq.write_text(qq.read_text(encoding="utf-8") + "\n[oops\n", encoding="utf-8")
    before = qq.read_bytes()
    result = runner.invoke(app, ["rules", "set", str(qq), "table.seats", "3"])
    assert result.exit_code == 1 and "toml-syntax" in result.output
    assert qq.read_bytes() == before


def test_diff_speaks_in_player_words(qq: Path) -> None:
    runner.invoke(
        app, ["rules", "set", str(qq), "tiers.junior.street_caps", "[200, 600, 1000, 1000]"]
    )
    runner.invoke(app, ["rules", "set", str(qq), "timeouts.action_s", "20"])
    runner.invoke(app, ["rules", "set", str(qq), "tiers.expert.enabled", "false"])
    result = runner.invoke(app, ["rules", "diff", str(RULES / "qq-showhand.toml"), str(qq)])
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "junior: street-3 cap 500 -> 600 (+20%)",
        "expert: room closes",
        "time to act: 15 s -> 20 s (+33%)",
    ]


def test_diff_json_lists_changes_with_raw_values(qq: Path) -> None:
    runner.invoke(app, ["rules", "set", str(qq), "betting.escape_policy", '"fold"'])
    result = runner.invoke(
        app, ["rules", "diff", str(RULES / "qq-showhand.toml"), str(qq), "--json"]
    )
    payload = json.loads(result.output)
    assert payload["old"] != payload["new"]
    assert payload["changes"] == [
        {
            "path": "betting.escape_policy",
            "old": "forfeit_to_banker",
            "new": "fold",
            "message": "escape policy: the escapee pays the whole pot to the banker -> "
            "the escapee is folded and forfeits their stake",
        }
    ]


def test_diff_of_tier_added_and_removed(tmp_path: Path) -> None:
    result = runner.invoke(
        app, ["rules", "diff", str(RULES / "qq-showhand.toml"), str(RULES / "straight-flush.toml")]
    )
    lines = result.output.splitlines()
    assert "normal: new room '普通场'" in lines
    assert "training: room '训练场' removed" in lines
    assert "junior: room closes" in lines


def test_diff_of_identical_profiles() -> None:
    path = str(RULES / "qq-showhand.toml")
    result = runner.invoke(app, ["rules", "diff", path, path])
    assert result.exit_code == 0 and result.output == "no change for players\n"


def test_committed_schema_equals_the_command_output() -> None:
    """rules/profile.schema.json is what `gmtool rules schema` prints (regenerate it if not)."""
    result = runner.invoke(app, ["rules", "schema"])
    assert result.exit_code == 0
    assert (RULES / "profile.schema.json").read_text(encoding="utf-8") == result.output


def test_every_shipped_profile_points_at_the_schema() -> None:
    for path in RULES.glob("*.toml"):
        assert path.read_text(encoding="utf-8").startswith("#:schema ./profile.schema.json\n")


# -- several values at once, validated together (issue 23, item 14) --------------------------

JUNIOR_CAP_2000 = [
    "tiers.junior.street_caps",
    "[200, 500, 1000, 2000]",
    "tiers.junior.hand_cap",
    "2000",
    "tiers.junior.min_holding",
    "2000",
]


def test_q5_set_changes_the_coupled_caps_and_minimum_holding_in_one_command(gm, qq: Path) -> None:
    """Q5: the street-5 cap equals the hand cap and the minimum holding covers it, so none
    of the three can change alone; `rules set` takes them together and validates once."""
    run = gm("rules", "set", qq, *JUNIOR_CAP_2000)
    assert run.stdout.splitlines() == [
        f"{qq}: tiers.junior.street_caps = [200, 500, 1000, 2000] (was [200, 500, 1000, 1000])",
        f"{qq}: tiers.junior.hand_cap = 2000 (was 1000)",
        f"{qq}: tiers.junior.min_holding = 2000 (was 1000)",
    ]
    junior = next(t for t in compile_file(qq)["tiers"] if t["id"] == "junior")
    assert (junior["street_caps"][-1], junior["hand_cap"], junior["min_holding"]) == (
        2000,
        2000,
        2000,
    )
    assert "# Q1: 每局最大注" in qq.read_text(encoding="utf-8"), "comments are kept"


def test_set_of_several_values_writes_none_when_the_result_is_invalid(gm, qq: Path) -> None:
    """Atomic: the first two values would be fine, the third breaks Q5; nothing is written."""
    before = qq.read_bytes()
    run = gm("rules", "set", qq, *JUNIOR_CAP_2000[:4], "tiers.junior.min_holding", "1500", expect=1)
    assert "[min-holding]" in run.stderr and "left unchanged" in run.stderr
    assert qq.read_bytes() == before
    assert not list(qq.parent.glob(".qq.toml.*")), "no temporary file is left behind"


@pytest.mark.parametrize(
    "args, words",
    [
        (["tiers.junior.hand_cap", "2000", "tiers.junior.min_holding"], "has no VALUE"),
        (["tiers.junior.hand_cap", "2000", "tiers.junior.hand_cap", "3000"], "given twice"),
        (["tiers.junior.hand_cap", "2000", "tiers.nobody.ante", "1"], "no tier with id"),
    ],
    ids=["odd", "twice", "unknown tier"],
)
def test_set_pairs_that_cannot_be_used_are_a_usage_error(
    gm, qq: Path, args: list[str], words: str
) -> None:
    before = qq.read_bytes()
    run = gm("rules", "set", qq, *args, expect=2)
    assert words in run.stderr and len(run.stderr.splitlines()) == 1, run.stderr
    assert qq.read_bytes() == before


@pytest.mark.parametrize(
    "key, value",
    [
        ("tiers.junior.title", '"abc'),  # an unclosed string was written as the text `"abc`
        ("tiers.junior.street_caps", "[200, 500"),
        ("tiers.junior.hand_cap", "1 000"),
        ("betting.raise_chips", "[50,,100]"),
        ("tiers.junior.title", ""),
        ("timeouts.action_s", "{s = "),
    ],
)
def test_set_with_an_invalid_toml_value_is_a_usage_error_and_writes_nothing(
    gm, qq: Path, key: str, value: str
) -> None:
    """Issue 23, item 9: a plain message, exit 2, the file untouched."""
    before = qq.read_bytes()
    run = gm("rules", "set", qq, key, value, expect=2)
    (line,) = run.stderr.splitlines()
    assert line.startswith(f"error: {value!r} is not a TOML value ("), line
    assert line.endswith('texts in double quotes ("x"); nothing was changed'), line
    assert qq.read_bytes() == before


def test_set_still_takes_plain_words_as_a_text(gm, qq: Path) -> None:
    gm("rules", "set", qq, "tiers.senior.title", "资深 房间")
    assert next(t for t in compile_file(qq)["tiers"] if t["id"] == "senior")["title"] == "资深 房间"


def test_scenario_set_changes_coupled_values_together(gm, tmp_path: Path) -> None:
    """A scenario's `set` is validated as `rules set` validates its pairs: together (Q5)."""
    scenario = tmp_path / "cap.toml"
    scenario.write_text(
        f'profile = "{RULES / "qq-showhand.toml"}"\ntier = "junior"\n'
        'set = { "tiers.junior.street_caps" = [200, 500, 1000, 2000], '
        '"tiers.junior.hand_cap" = 2000, "tiers.junior.min_holding" = 2000 }\n'
        'players = [{ name = "ann", cards = "AS KS QS JS TS" },\n'
        '  { name = "bob", cards = "AH AD 8C 9C TC" }]\n'
        "actions = []\n\n[expect]\nto_sit = 2000\n",
        encoding="utf-8",
    )
    assert "1 passed, 0 failed" in gm("rules", "test", scenario).stdout


def test_diff_names_a_change_of_game_first() -> None:
    """Two profiles of different games are not one game with other rules: say so first."""
    result = runner.invoke(
        app,
        ["rules", "diff", str(RULES / "qq-showhand.toml"), str(RULES / "suihua-three-card.toml")],
    )
    assert result.exit_code == 0
    assert result.output.splitlines()[0] == (
        "game: stud5 (five-card stud) -> three-card: a different game; "
        "every rule below changes with it"
    )
    payload = json.loads(
        runner.invoke(
            app,
            [
                "rules",
                "diff",
                str(RULES / "suihua-three-card.toml"),
                str(RULES / "lequ-showhand.toml"),
                "--json",
            ],
        ).output
    )
    assert payload["changes"][0]["path"] == "game"
    assert (payload["changes"][0]["old"], payload["changes"][0]["new"]) == ("three-card", "stud5")


def test_diff_of_the_same_game_names_no_game_change() -> None:
    result = runner.invoke(
        app, ["rules", "diff", str(RULES / "qq-showhand.toml"), str(RULES / "lequ-showhand.toml")]
    )
    assert result.exit_code == 0 and "game:" not in result.output


def test_diff_shows_coins_with_thousands_separators(qq: Path) -> None:
    """Issue 23 item 8: amounts in `rules diff` (and so in deploy plans) read as the other
    screens print coins: `10,000`, never `10000`; the JSON keeps raw numbers."""
    pairs = ["tiers.senior.hand_cap", "20000", "tiers.senior.min_holding", "20000"]
    pairs += ["tiers.senior.street_caps", "[2000, 5000, 10000, 20000]"]
    assert runner.invoke(app, ["rules", "set", str(qq), *pairs]).exit_code == 0
    result = runner.invoke(app, ["rules", "diff", str(RULES / "qq-showhand.toml"), str(qq)])
    assert result.exit_code == 0
    assert result.output.splitlines() == [
        "senior: hand cap 10,000 -> 20,000 (+100%)",
        "senior: minimum holding to sit 10,000 -> 20,000 (+100%)",
        "senior: street-5 cap 10,000 -> 20,000 (+100%)",
    ]
    raw = runner.invoke(app, ["rules", "diff", str(RULES / "qq-showhand.toml"), str(qq), "--json"])
    assert {"old": 10000, "new": 20000} == {
        k: json.loads(raw.output)["changes"][0][k] for k in ("old", "new")
    }
