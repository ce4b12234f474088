"""`gmtool rules simulate` on the command line: reports, the CI gate, bad input, --plot."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from gmtool.cli import app

RULES = Path(__file__).resolve().parent.parent / "rules"
QQ = str(RULES / "qq-showhand.toml")
runner = CliRunner()


def simulate(*args: str, code: int = 0):
    result = runner.invoke(app, ["rules", "simulate", *args])
    assert result.exit_code == code, (result.exit_code, result.output)
    assert "Traceback" not in result.output
    return result


def test_text_report_states_the_policies_and_each_measure() -> None:
    out = simulate(
        QQ, "--tier", "junior", "--hands", "300", "--policy", "loose", "--policy", "escaper:0.1"
    ).stdout
    assert "under policies seat1 loose, seat2 escaper:0.1, seat3 loose, seat4 escaper:0.1" in out
    for words in (
        "pot",
        "seconds/hand",
        "showdown",
        "all-in",
        "escape cost",
        "coins/hand",
        "hands to out",
        "banker",
    ):
        assert words in out, words


def test_json_report_has_the_measures_of_each_game() -> None:
    report = json.loads(
        simulate(
            str(RULES / "suihua-three-card.toml"), "--hands", "200", "--players", "3", "--json"
        ).stdout
    )
    assert report["under"] == "under policies seat1 cautious, seat2 loose, seat3 aggressive"
    room = report["tiers"][0]
    assert room["tier"] == "chips-5" and room["hands"] == 200
    assert {"looks_per_hand", "buys_per_hand", "opens_per_hand"} <= set(room["measures"])
    assert "allin" not in room["measures"]  # three-card has no all-in
    qq = json.loads(simulate(QQ, "--tier", "junior", "--hands", "200", "--json").stdout)
    assert "allin" in qq["tiers"][0]["measures"]
    assert "looks_per_hand" not in qq["tiers"][0]["measures"]


def test_vs_reports_each_change_with_an_interval() -> None:
    report = json.loads(
        simulate(
            QQ,
            "--vs",
            str(RULES / "video-showhand.toml"),
            "--tier",
            "junior",
            "--hands",
            "1000",
            "--json",
        ).stdout
    )
    change = report["tiers"][0]["changes"]["pot"]["mean"]
    assert set(change) == {"old", "new", "change", "change_pct", "ci", "significant"}
    assert change["ci"][0] <= change["change"] <= change["ci"][1]
    text = simulate(
        QQ, "--vs", str(RULES / "video-showhand.toml"), "--tier", "junior", "--hands", "500"
    ).stdout
    assert "95% interval" in text and "qq-showhand" in text and "video-showhand" in text


def test_a_closed_tier_named_with_tier_is_played_as_if_open() -> None:
    report = json.loads(
        simulate(
            str(RULES / "straight-flush.toml"), "--tier", "junior", "--hands", "100", "--json"
        ).stdout
    )
    assert report["tiers"][0]["closed_in_profile"] is True


def test_fail_if_exits_1_when_a_bound_is_broken() -> None:
    result = simulate(
        QQ,
        "--tier",
        "junior",
        "--hands",
        "300",
        "--fail-if",
        "junior.seconds_per_hand.median > 1",
        code=1,
    )
    assert "bound broken: junior.seconds_per_hand.median > 1" in result.stderr
    simulate(
        QQ,
        "--tier",
        "junior",
        "--hands",
        "300",
        "--fail-if",
        "junior.seconds_per_hand.median > 90",
        "--fail-if",
        "*.showdown.rate >= 100%",
    )


def test_fail_if_verdicts_are_in_the_json() -> None:
    report = json.loads(
        simulate(
            QQ,
            "--tier",
            "junior",
            "--hands",
            "200",
            "--json",
            "--fail-if",
            "junior.pot.mean < 1",
            code=0,
        ).stdout
    )
    assert report["bounds"] == [
        {
            "bound": "junior.pot.mean < 1",
            "tier": "junior",
            "value": report["tiers"][0]["measures"]["pot"]["mean"],
            "broken": False,
        }
    ]


@pytest.mark.parametrize(
    "bound, words",
    [
        ("junior.seconds_per_hand.median >> 90", "expected TIER.MEASURE.STAT OP NUMBER"),
        (
            "junior.seconds.median > 90",
            "no measure 'seconds' in junior (measures: actions_per_hand",
        ),
        ("senior2.pot.mean > 1", "no tier 'senior2' is simulated (tiers: junior)"),
        ("junior.pot.p99 > 1", "pot has no statistic 'p99' (statistics: mean, median, p95)"),
        ("junior.pot.mean.change > 1", ".change needs --vs"),
        ("junior.looks_per_hand.mean > 1", "no measure 'looks_per_hand'"),
    ],
)
def test_a_malformed_or_unknown_bound_is_exit_2_naming_what_is_valid(bound, words) -> None:
    result = simulate(QQ, "--tier", "junior", "--hands", "10", "--fail-if", bound, code=2)
    assert words in result.stderr


@pytest.mark.parametrize(
    "args, words",
    [
        (["--tier", "nope"], "no tier 'nope'"),
        (["--policy", "reckless"], "no policy 'reckless'; policies: cautious, loose"),
        (["--policy", "escaper:2"], "escape chance must be a number from 0 to 1"),
        (["--players", "5"], "seats at most 4"),
        (["--players", "1"], "a hand needs 2 players"),
        (["--players", "two"], "a count (3) or a range (2-4)"),
        (["--plot", "/no/such/folder/x.png"], "no folder"),
    ],
)
def test_bad_input_is_exit_2_with_one_message(args, words) -> None:
    result = simulate(QQ, "--hands", "10", *args, code=2)
    assert words in result.stderr


def test_hands_out_of_range_is_a_usage_error() -> None:
    simulate(QQ, "--hands", "0", code=2)
    simulate(QQ, "--jobs", "0", code=2)


def test_missing_profile_is_exit_2() -> None:
    assert "no such profile file" in simulate("nope.toml", code=2).stderr


def test_plot_without_the_extra_says_how_to_install_it(monkeypatch) -> None:
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # as if not installed
    result = simulate(QQ, "--hands", "10", "--plot", "out.png", code=2)
    assert "pip install 'gmtool[plot]'" in result.stderr


def test_plot_writes_a_png_of_both_profiles(tmp_path: Path) -> None:
    """(matplotlib is in the dev extra: this test runs wherever the tests do.)"""
    target = tmp_path / "what-if.png"
    result = simulate(
        QQ,
        "--vs",
        str(RULES / "video-showhand.toml"),
        "--tier",
        "junior",
        "--tier",
        "training",
        "--hands",
        "200",
        "--plot",
        str(target),
    )
    assert target.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert f"wrote {target}" in result.stderr


def test_the_simulate_benchmark_runs(tmp_path: Path) -> None:
    """benchmarks/simulate.py still runs against today's code (smallest sizes; no timing
    is asserted)."""
    import subprocess

    root = RULES.parent
    run = subprocess.run(
        [
            sys.executable,
            str(root / "benchmarks" / "simulate.py"),
            "--hands",
            "200",
            "--jobs",
            "2",
            "--sample",
            "50",
            "--repeat",
            "1",
            "--seconds",
            "0.05",
        ],
        capture_output=True,
        text=True,
        cwd=root,
        timeout=600,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "overhead by wall time" in run.stdout and "Traceback" not in run.stderr
