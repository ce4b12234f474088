"""The engine's front door for its drivers (gmtool/engine/play.py)."""

from __future__ import annotations


def test_coins_to_sit_follow_each_room_kind() -> None:
    """Q1/S22/L7/H3: the minimum to sit is the tier's, nothing in training rooms,
    min_holding_antes x ante at the owner-ante table, and in three-card the ante plus one
    follow at the cap (H12)."""
    from pathlib import Path

    from gmtool.engine.play import coins_to_sit
    from gmtool.rules.compile import compile_file

    rules = Path(__file__).resolve().parent.parent / "rules"
    qq = compile_file(rules / "qq-showhand.toml")
    assert coins_to_sit(qq, "middle") == 5000 and coins_to_sit(qq, "training") == 0
    assert coins_to_sit(compile_file(rules / "lequ-showhand.toml"), "table", ante=5) == 1000
    # H12 (D-11): a three-card seat takes the ante plus one follow at the cap, whatever a
    # config compiled before the rule says (its min_holding was 0)
    suihua = compile_file(rules / "suihua-three-card.toml")
    assert coins_to_sit(suihua, "chips-5") == 25 and coins_to_sit(suihua, "chips-10") == 50
    old = {
        **suihua,
        "config_id": None,
        "tiers": [{**tier, "min_holding": 0} for tier in suihua["tiers"]],
    }
    assert coins_to_sit(old, "chips-5") == 25
