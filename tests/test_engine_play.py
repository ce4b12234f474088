"""The engine's front door for its drivers (gmtool/engine/play.py)."""

from __future__ import annotations


def test_coins_to_sit_follow_each_room_kind() -> None:
    """Q1/S22/L7/H3: the minimum to sit is the tier's, nothing in training rooms,
    min_holding_antes x ante at the owner-ante table, and at least the ante in three-card."""
    from pathlib import Path

    from gmtool.engine.play import coins_to_sit
    from gmtool.rules.compile import compile_file

    rules = Path(__file__).resolve().parent.parent / "rules"
    qq = compile_file(rules / "qq-showhand.toml")
    assert coins_to_sit(qq, "middle") == 5000 and coins_to_sit(qq, "training") == 0
    assert coins_to_sit(compile_file(rules / "lequ-showhand.toml"), "table", ante=5) == 1000
    # H3: the system posts the ante for everyone, so a room needs at least the ante
    # whatever its min_holding (0 in the shipped suihua rooms)
    assert coins_to_sit(compile_file(rules / "suihua-three-card.toml"), "chips-5") == 5
