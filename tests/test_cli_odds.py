"""`gmtool rules odds`: exact category counts by enumerating the profile's deck (RULES S5, H10)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from gmtool.cli import app

RULES = Path(__file__).resolve().parent.parent / "rules"
runner = CliRunner()

S5 = {
    "straight_flush": 12,
    "four_of_a_kind": 168,
    "full_house": 1008,
    "flush": 72,
    "straight": 3060,
    "three_of_a_kind": 6720,
    "two_pair": 15120,
    "one_pair": 53760,
    "high_card": 18360,
}
H10 = {
    "trips": 52,
    "straight_flush": 48,
    "straight": 720,
    "flush": 1096,
    "pair": 3744,
    "high_card": 16440,
}


def _odds(profile: str) -> dict:
    result = runner.invoke(app, ["rules", "odds", str(RULES / profile), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def test_s5_odds_of_the_qq_profile_report_the_nine_census_counts() -> None:
    """S5: straight flush 12, four 168, full house 1,008, flush 72 ... total 98,280."""
    odds = _odds("qq-showhand.toml")
    assert odds["hands_total"] == 98_280
    assert {c["name"]: c["count"] for c in odds["categories"]} == S5
    assert [c["rank"] for c in odds["categories"]] == list(range(1, 10))
    flush = next(c for c in odds["categories"] if c["name"] == "flush")
    assert abs(flush["probability"] - 72 / 98_280) < 1e-12
    assert any("flush" in note and "full_house" in note for note in odds["notes"])


def test_h10_odds_of_the_three_card_profile_report_the_six_census_counts() -> None:
    """H10: trips 52, straight flush 48, straight 720, flush 1,096, pair 3,744, high card 16,440."""
    odds = _odds("suihua-three-card.toml")
    assert odds["hands_total"] == 22_100
    assert {c["name"]: c["count"] for c in odds["categories"]} == H10


def test_odds_text_output_is_a_table_with_notes() -> None:
    result = runner.invoke(app, ["rules", "odds", str(RULES / "qq-showhand.toml")])
    assert result.exit_code == 0
    assert "98,280 hands" in result.output and "53,760" in result.output
    assert "note:" in result.output


def test_odds_of_a_missing_profile_is_a_usage_error() -> None:
    result = runner.invoke(app, ["rules", "odds", "nope.toml"])
    assert result.exit_code == 2
    assert "Traceback" not in result.output
