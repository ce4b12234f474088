"""`gmtool hands play`, `gmtool rules test` and `gmtool hands compare` as users and CI see
them (docs/architecture.md; rules/scenarios/README.md).

Exit codes: 0 = fine, 1 = a finding (an unmet expectation, an illegal scripted action),
2 = usage or environment error (missing file, bad cards). JSON output is the contract and
is checked field by field; no output ever contains a Python traceback.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app

ROOT = Path(__file__).resolve().parent.parent
RULES = ROOT / "rules"
STUD5 = RULES / "scenarios" / "stud5"
LEQU = RULES / "scenarios" / "lequ"
QQ = str(RULES / "qq-showhand.toml")
LEQU_PROFILE = str(RULES / "lequ-showhand.toml")
WORKED_EXAMPLE = STUD5 / "s19-escape-non-banker-worked-example.toml"

runner = CliRunner()


class Run:
    """The outcome of one command: exit code, stdout and stderr (never a traceback)."""

    def __init__(self, code: int, out: str, err: str) -> None:
        self.code, self.out, self.err = code, out, err
        assert "Traceback" not in out + err, out + err

    def json(self):
        return json.loads(self.out)


def gmtool(*args: str) -> Run:
    result = runner.invoke(app, [str(a) for a in args])
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(
        result.exception
    )
    return Run(result.exit_code, result.stdout, result.stderr)


def _scenario(tmp_path: Path, text: str, name: str = "scenario.toml") -> Path:
    """A scenario file in tmp_path/scenarios/ next to copies of the shipped profiles."""
    for profile in RULES.glob("*.toml"):
        shutil.copy(profile, tmp_path / profile.name)
    folder = tmp_path / "scenarios"
    folder.mkdir(exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    return path


PASSING = """
title = "ann bets, bob folds"
rules = ["S16"]
profile = "../qq-showhand.toml"
tier = "junior"
players = [
  { name = "ann", coins = 5000, cards = "8S AS AH 9D TD" },
  { name = "bob", coins = 5000, cards = "9S KS 8H JD QD" },
]
actions = ["ann bet 100", "bob fold"]

[expect]
winner = "ann"
settlement = { ann = 100, bob = -100 }
"""


# -- gmtool hands play ----------------------------------------------------------------------


def test_play_prints_the_hand_as_a_timeline() -> None:
    """The S19 worked example, street by street, ending with the settlement."""
    run = gmtool("hands", "play", WORKED_EXAMPLE)
    assert run.code == 0, run.out + run.err
    lines = run.out.splitlines()
    assert lines[0].endswith(
        ": RULES S19 worked example: bob escapes while ann is the "
        "banker; bob pays the 700 pot to ann"
    )
    assert (
        "street 2: deal ann 8S (hole), bob 9S (hole), carl 9H (hole), ann AS, bob KS, "
        "carl QS" in lines
    )
    assert "street 3: deal ann AH, bob 8H, carl 8C" in lines
    assert "  street 2 ends, pot 600" in lines
    assert "hand ends (escape): ann wins the pot of 700" in lines
    assert "settlement: ann +700 (escape_win), bob -700 (escape), carl +0 (returned)" in lines
    assert lines[-1] == "expectations met"
    assert run.err == ""


def test_play_json_has_winner_settlement_and_events() -> None:
    run = gmtool("hands", "play", WORKED_EXAMPLE, "--json")
    assert run.code == 0
    out = run.json()
    assert {"winner", "settlement", "events", "error", "failures"} <= set(out)
    assert out["winner"] == "ann"
    assert out["settlement"] == {"ann": 700, "bob": -700, "carl": 0}
    assert out["error"] is None and out["failures"] == []
    types = [e["type"] for e in out["events"]]
    assert types[0] == "hand_started" and types[-1] == "settlement"
    assert {"type": "escape", "player": "bob", "rule": "S19"} in out["events"]


def test_play_json_reports_an_expected_refusal() -> None:
    """Q4: the refused bet is the scenario's expectation, so the exit code is 0."""
    run = gmtool("hands", "play", STUD5 / "q4-bet-above-street-cap.toml", "--json")
    assert run.code == 0
    out = run.json()
    assert out["error"]["rule"] == "Q4" and out["error"]["action"] == "ann bet 200"
    assert out["winner"] is None and out["settlement"] == {}


def test_play_of_an_owner_table_scenario() -> None:
    """L11: the seed's example played through the owner-ante table."""
    run = gmtool("hands", "play", LEQU / "l11-seed-example-show-hand-350.toml", "--json")
    assert run.code == 0, run.out
    out = run.json()
    assert out["winner"] == "C"
    assert out["settlement"] == {"A": -350, "B": -350, "C": 700}
    allin = next(e for e in out["events"] if e["type"] == "allin")
    assert (allin["player"], allin["total"]) == ("A", 350)


def test_play_with_an_unmet_expectation_exits_1(tmp_path) -> None:
    path = _scenario(tmp_path, PASSING.replace("ann = 100, bob = -100", "ann = 200, bob = -200"))
    run = gmtool("hands", "play", path)
    assert run.code == 1
    assert (
        "FAILED settlement: expected {'ann': 200, 'bob': -200}, got {'ann': 100, "
        "'bob': -100}" in run.out
    )
    assert "expectations met" not in run.out


def test_play_with_an_unexpected_illegal_action_exits_1(tmp_path) -> None:
    """S13: a check facing a bet, not expected by the scenario, is a finding."""
    path = _scenario(tmp_path, PASSING.replace('"bob fold"', '"bob check"'))
    run = gmtool("hands", "play", path, "--json")
    assert run.code == 1
    out = run.json()
    assert out["error"]["rule"] == "S13"
    assert any("'bob check' was refused" in f for f in out["failures"])


@pytest.mark.parametrize(
    "text",
    [
        "this is = not [toml",
        'profile = "../qq-showhand.toml"\nplayers = []\n',
        PASSING.replace('"8S AS AH 9D TD"', '"8S AS AH 9D ZZ"'),
        PASSING.replace('"bob fold"', '"bob dance"'),
        PASSING + "surprise = 1\n",
        PASSING.replace('"8S AS AH 9D TD"', '["8S AS AH 9D TD", "8S AS AH 9D TD"]'),
    ],
    ids=["not-toml", "no-players", "bad-card", "bad-action", "unknown-key", "two-hands"],
)
def test_play_of_a_broken_scenario_exits_2(tmp_path, text) -> None:
    path = _scenario(tmp_path, text)
    run = gmtool("hands", "play", path)
    assert run.code == 2
    assert run.err.startswith("error: ") and run.out == ""


def test_play_of_a_missing_file_exits_2(tmp_path) -> None:
    run = gmtool("hands", "play", tmp_path / "nowhere.toml")
    assert run.code == 2
    assert "no such scenario file" in run.err


# -- gmtool rules test ----------------------------------------------------------------------


def test_rules_test_exits_0_when_every_scenario_passes() -> None:
    run = gmtool("rules", "test", RULES)
    assert run.code == 0, run.out
    total = len([line for line in run.out.splitlines() if line.startswith(("PASS", "FAIL"))])
    assert total >= 80
    assert run.out.splitlines()[-1] == f"{total} passed, 0 failed"


def test_rules_test_exits_1_on_a_failing_scenario(tmp_path) -> None:
    _scenario(tmp_path, PASSING, "good.toml")
    _scenario(tmp_path, PASSING.replace('winner = "ann"', 'winner = "bob"'), "bad.toml")
    run = gmtool("rules", "test", tmp_path / "scenarios")
    assert run.code == 1
    lines = run.out.splitlines()
    assert lines[0].startswith("FAIL ") and lines[0].endswith("bad.toml")
    assert lines[1] == "     winner: expected ['bob'], got ['ann']"
    assert lines[2].startswith("PASS ") and lines[2].endswith("good.toml")
    assert lines[-1] == "1 passed, 1 failed"


def test_rules_test_json(tmp_path) -> None:
    _scenario(tmp_path, PASSING, "good.toml")
    _scenario(tmp_path, PASSING.replace("bob = -100", "bob = -99"), "bad.toml")
    run = gmtool("rules", "test", tmp_path / "scenarios", "--json")
    assert run.code == 1
    out = run.json()
    assert (out["scenarios"], out["failed"]) == (2, 1)
    by_name = {Path(r["file"]).name: r for r in out["results"]}
    assert by_name["good.toml"] == {
        "file": by_name["good.toml"]["file"],
        "passed": True,
        "rules": ["S16"],
        "failures": [],
    }
    assert by_name["bad.toml"]["passed"] is False
    assert by_name["bad.toml"]["failures"][0].startswith("settlement: expected")


def test_rules_test_reports_an_unreadable_scenario_as_a_failure(tmp_path) -> None:
    _scenario(tmp_path, PASSING.replace('"bob fold"', '"bob dance"'), "broken.toml")
    run = gmtool("rules", "test", tmp_path / "scenarios")
    assert run.code == 1
    assert "'bob dance'" in run.out and run.out.splitlines()[-1] == "0 passed, 1 failed"


def test_rules_test_exits_2_on_a_missing_path(tmp_path) -> None:
    run = gmtool("rules", "test", tmp_path / "nowhere")
    assert run.code == 2
    assert "no such file or folder" in run.err


def test_rules_test_exits_2_when_no_scenario_is_found(tmp_path) -> None:
    run = gmtool("rules", "test", tmp_path)  # no .toml file at all
    assert run.code == 2
    assert "nothing to check" in run.err
    (tmp_path / "only-a-profile.toml").write_bytes((RULES / "qq-showhand.toml").read_bytes())
    run = gmtool("rules", "test", tmp_path)
    assert run.code == 2
    assert "no scenario files found" in run.err


def test_s8_rules_test_survives_a_table_with_no_free_seat(tmp_path) -> None:
    """S8: a fifth player at a 4-seat owner table is a refusal, not a crash of the run."""
    text = """
title = "five at a four-seat table"
rules = ["S8"]
profile = "../lequ-showhand.toml"
seed = "five"
players = [{ name = "A" }, { name = "B" }, { name = "C" }, { name = "D" }, { name = "E" }]
"""
    path = _scenario(tmp_path, text)
    run = gmtool("rules", "test", path)
    assert run.code == 1
    assert "RULES S8" in run.out and run.out.splitlines()[-1] == "0 passed, 1 failed"
    path.write_text(text + '\n[expect]\nerror = "S8"\n', encoding="utf-8")
    assert gmtool("rules", "test", path).code == 0


# -- gmtool hands compare -------------------------------------------------------------------


S6_EXAMPLE = (
    "pair of kings with the king of spades beats pair of kings with the king of "
    "hearts: RULES S6, key_then_suit"
)


def test_s6_compare_explains_a_suit_tie_break() -> None:
    """S6 key_then_suit: equal pairs are decided by the best suit inside the pair;
    kickers never count (the losing hand holds the ace)."""
    run = gmtool("hands", "compare", "--profile", QQ, "KS KD 8S 9H TC", "KH KC AS QD JD", "--json")
    assert run.code == 0
    out = run.json()
    assert set(out) == {"winner", "hands"}
    assert out["winner"] == 0
    assert [set(h) for h in out["hands"]] == [{"cards", "category", "explanation"}] * 2
    assert [h["cards"] for h in out["hands"]] == ["KS KD 8S 9H TC", "KH KC AS QD JD"]
    assert [h["category"] for h in out["hands"]] == ["one_pair", "one_pair"]
    assert out["hands"][0]["explanation"].startswith(S6_EXAMPLE)


def test_s6_compare_text_marks_the_winner() -> None:
    run = gmtool("hands", "compare", "--profile", QQ, "KH KC AS QD JD", "KS KD 8S 9H TC")
    assert run.code == 0
    lines = run.out.splitlines()
    assert lines[0].split() == ["hand", "1:", "KH", "KC", "AS", "QD", "JD", "one_pair"]
    assert lines[2].split() == ["winner:", "KS", "KD", "8S", "9H", "TC", "one_pair"]
    assert lines[3].strip().startswith(S6_EXAMPLE)


def test_s6_seed_000_compares_the_pair_not_the_kickers() -> None:
    """Seed 000 (2.5 rule 5, "对子比较对子"): one pair compares the pair, then the best suit
    in it; the ace kicker does not count, so the king of spades wins."""
    out = gmtool(
        "hands", "compare", "--profile", LEQU_PROFILE, "KS KD 8S 9H TC", "KH KC AS QD JD", "--json"
    ).json()
    assert out["winner"] == 0


def test_s6_seed_000_example_1_two_pair_by_the_suit_of_the_high_pair() -> None:
    """Seed 000 2.5 example 1, as the issue reported it: the ace of spades in the high
    pair wins; hand 2's queen kicker does not count (RULES S6, corrected)."""
    out = gmtool(
        "hands", "compare", "--profile", LEQU_PROFILE, "AS AD KC KD 8C", "AH AC KS KH QS", "--json"
    ).json()
    assert out["winner"] == 0
    assert "ranks_then_suit" in out["hands"][0]["explanation"]


def test_s3_compare_across_categories() -> None:
    """S3: a full house ranks above a flush, though rarer in 28 cards."""
    out = gmtool(
        "hands", "compare", "--profile", QQ, "8H 9H JH QH AH", "TS TC TD KS KC", "--json"
    ).json()
    assert out["winner"] == 1
    assert [h["category"] for h in out["hands"]] == ["flush", "full_house"]


def test_compare_reads_10_as_t() -> None:
    ten = gmtool(
        "hands", "compare", "--profile", QQ, "10D 10S 8S 9H JC", "KH KC AS QD JD", "--json"
    )
    t = gmtool("hands", "compare", "--profile", QQ, "TD TS 8S 9H JC", "KH KC AS QD JD", "--json")
    assert ten.code == t.code == 0
    assert ten.json() == t.json()
    assert ten.json()["hands"][0]["cards"] == "TD TS 8S 9H JC"


@pytest.mark.parametrize(
    "hands, message",
    [
        (["KS KD 8S 9H ZZ", "KH KC AS QD JD"], "'ZZ' is not a card"),
        (["KS KD 8S 9H 2C", "KH KC AS QD JD"], "is not a card"),
        (["KS KD 8S 9H", "KH KC AS QD JD"], "has 4 cards"),
        (["KS KD 8S 9H TC", "KS KC AS QD JD"], "appears in hand 1 and hand 2"),
        (["KS KD 8S 9H TC"], "at least two hands"),
    ],
    ids=["unknown-card", "not-in-28-card-deck", "four-cards", "card-twice", "one-hand"],
)
def test_compare_bad_cards_exit_2(hands, message) -> None:
    run = gmtool("hands", "compare", "--profile", QQ, *hands)
    assert run.code == 2
    assert message in run.err and run.out == ""


def test_compare_with_a_missing_profile_exits_2(tmp_path) -> None:
    run = gmtool(
        "hands", "compare", "--profile", tmp_path / "none.toml", "KS KD 8S 9H TC", "KH KC AS QD JD"
    )
    assert run.code == 2
