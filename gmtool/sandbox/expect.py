"""Checking a scenario's `[expect]` table against what the engine did."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from gmtool.sandbox.run import Outcome


def check(outcome: Outcome) -> list[str]:
    """Every unmet expectation, as sentences; empty when the scenario passes."""
    expect = outcome.scenario.expect
    failures = _check_error(outcome, expect)
    for key, value in expect.items():
        if key == "error":
            continue
        actual = _ACTUAL[key](outcome)
        wanted = _normalise(key, value)
        if actual != wanted:
            failures.append(f"{key}: expected {_show(wanted)}, got {_show(actual)}")
    return failures


def _check_error(outcome: Outcome, expect: dict) -> list[str]:
    wanted = expect.get("error")
    error = outcome.error
    if wanted is None:
        return [f"{outcome.error_action!r} was refused: {error}"] if error else []
    if error is None:
        return [
            f"error: expected an action refused under RULES {wanted}, but every action was accepted"
        ]
    if error.rule != wanted:
        return [f"error: expected RULES {wanted}, got {error}"]
    remaining = len(outcome.scenario.actions) - outcome.actions_run - 1
    if remaining > 0 and outcome.error_action != "(start of the hand)":
        return [
            f"error: {remaining} action(s) after the refused {outcome.error_action!r} "
            "never ran; end the scenario there"
        ]
    return []


def _normalise(key: str, value: Any) -> Any:
    if key in ("below_minimum", "removed", "seated", "legal", "seen"):
        return sorted(value) if key != "seated" else list(value)
    if key == "winner":
        return [value]
    return value


def _show(value: Any) -> str:
    return repr(value)


def _types(outcome: Outcome) -> list[str]:
    return [e.type for e in outcome.events]


def _subsequence(outcome: Outcome) -> Any:
    wanted = outcome.scenario.expect["events"]
    types = iter(_types(outcome))
    return wanted if all(any(t == w for t in types) for w in wanted) else _types(outcome)


def _first_speakers(outcome: Outcome) -> list[str]:
    return [e.get("player") for e in outcome.events if e.type == "first_speaker"]


def _showdown_hands(outcome: Outcome) -> dict:
    for e in outcome.events:
        if e.type == "showdown":
            return {h["player"]: h["category"] for h in e.get("hands")}
    return {}


def _deal_order(outcome: Outcome) -> list[list[str]]:
    """For every deal of the scenario, the players in the order they received cards (S10)."""
    orders = []
    for e in outcome.events:
        if e.type == "deal":
            order: list[str] = []
            for card in e.get("cards"):
                if card["player"] not in order:
                    order.append(card["player"])
            orders.append(order)
    return orders


def _legal_amounts(outcome: Outcome) -> dict[str, list[int]]:
    """[min, max] of each action with an amount the player to act may take (L12, Q3, Q4)."""
    if outcome.state is None or getattr(outcome.state, "to_act", None) is None:
        return {}
    return {
        legal.verb: [legal.min_amount, legal.max_amount]
        for legal in outcome.state.legal_actions()
        if legal.min_amount is not None
    }


def coins_after(outcome: Outcome) -> dict[str, int]:
    """Each player's coins now: the owner table's running count, else the last hand's
    starting coins plus its settlement (coins of a training room never move, S22)."""
    table_coins = getattr(outcome.state, "coins", None)
    if isinstance(table_coins, dict):
        return dict(table_coins)
    start = {}
    for e in outcome.events:
        if e.type == "hand_started":
            start = {seat["player"]: seat["coins"] for seat in e.get("seats")}
    deltas = outcome.deltas()
    return {player: coins + deltas.get(player, 0) for player, coins in start.items()}


def _titles(outcome: Outcome) -> dict[str, str]:
    """S23: each listed player's title after the scenario under the profile's ladder;
    "" = no title (below the first step, or no ladder). Metric "score" reads the score
    this hand gave (a scenario starts every player at score 0)."""
    from gmtool.engine.settlement import player_title

    ladder = outcome.config.get("ladder")
    score = dict(outcome.settlement.score) if outcome.settlement else {}
    coins = coins_after(outcome)
    wanted = outcome.scenario.expect["titles"]
    return {
        player: player_title(coins.get(player, 0), score.get(player, 0), ladder) or ""
        for player in wanted
    }


def _to_sit(outcome: Outcome) -> int:
    """The coins a player needs to sit in the scenario's room (the engine's one answer:
    `coins_to_sit`, which the host and the hands ask too)."""
    from gmtool.engine.seating import coins_to_sit
    from gmtool.sandbox.run import pick_tier

    tier = pick_tier(outcome.scenario, outcome.config)
    return coins_to_sit(
        outcome.config, tier["id"], getattr(outcome.state, "ante", None) or outcome.scenario.ante
    )


def _seen(outcome: Outcome) -> list[str]:
    """Players the public view shows as seen (three-card, H4): what the console shows."""
    from gmtool.engine.view import public_view

    hand = getattr(outcome.state, "hand", outcome.state)
    if hand is None or hand.is_over:
        return []
    return sorted(p["name"] for p in public_view(hand)["players"] if p.get("seen"))


def _legal_verbs(state) -> list[str]:
    """The verbs legal in the hand being played; none when no hand is (an owner table
    before its hand starts, say)."""
    legal = getattr(state, "legal_actions", None) if state is not None else None
    return sorted(action.verb for action in legal()) if legal else []


def _state(name: str, default: Any = None) -> Callable[[Outcome], Any]:
    return lambda outcome: getattr(outcome.state, name, default)


_ACTUAL: dict[str, Callable[[Outcome], Any]] = {
    "winner": lambda o: o.winners,
    "winners": lambda o: o.winners,
    "settlement": lambda o: {
        p: d for p, d in o.deltas().items() if d or p in o.scenario.expect["settlement"]
    },
    "reason": lambda o: o.settlement.reason if o.settlement else None,
    "results": lambda o: (
        {p: str(r) for p, r in o.settlement.results.items() if p in o.scenario.expect["results"]}
        if o.settlement
        else {}
    ),
    "score": lambda o: (
        {p: s for p, s in o.settlement.score.items() if p in o.scenario.expect["score"]}
        if o.settlement
        else {}
    ),
    "pot": lambda o: getattr(o.state, "pot", None),
    "below_minimum": lambda o: sorted(
        e.get("player") for e in o.events if e.type == "below_minimum"
    ),
    "events": _subsequence,
    "first_speakers": _first_speakers,
    "legal": lambda o: _legal_verbs(o.state),
    "to_act": _state("to_act"),
    "over": lambda o: bool(o.settlement),
    "hands": _showdown_hands,
    "street": _state("street"),
    "owner": _state("owner"),
    "ante": _state("ante"),
    "seated": lambda o: list(getattr(o.state, "seated", [])),
    "removed": lambda o: sorted(getattr(o.state, "removed", [])),
    "messages": lambda o: list(getattr(o.state, "messages", [])),
    "deal_order": _deal_order,
    "legal_amounts": _legal_amounts,
    "coins": lambda o: {p: c for p, c in coins_after(o).items() if p in o.scenario.expect["coins"]},
    "titles": _titles,
    "to_sit": _to_sit,
    "seen": _seen,
}
