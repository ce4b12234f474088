"""GM actions in words: the outcome column of `gm log`, what `tables kick/close` print.

Support reads the GM log to answer "who did what, to whom, why, and what came of it", so
an outcome says more than "ok": where a kick landed (during a hand, an escape; while a
hand ran that the player had no stake in; between hands), which hand a close voided, the
coins an adjustment moved, the deployment a deploy made.
"""

from __future__ import annotations

from gmtool.cli.formats import coins, signed_coins


def kick_words(outcome: dict) -> str:
    """What a carried-out kick did, in one sentence: where it landed, what became of the
    player's stake, and the rule and profile option that decided it (G2, S19, D-9, S22)."""
    player, hand = outcome.get("kicked"), outcome.get("hand")
    if outcome.get("during_hand"):
        return _escape_words(outcome, player, hand)
    if hand:
        return (
            f"kicked {player} while hand {hand} ran, with nothing at stake in it (folded "
            "or not dealt in): no escape (G2), the kick moved none of their coins; the seat "
            "is free"
        )
    return (
        f"kicked {player} between hands: no escape (G2), nothing was at stake and the kick "
        "moved none of their coins; the seat is free"
    )


def _escape_words(outcome: dict, player: object, hand: object) -> str:
    """A kick during a hand: an escape (G2) under the profile's escape_policy (S19)."""
    policy = outcome.get("escape_policy")
    where = f"during hand {hand}" if hand else "during a hand"
    head = f"kicked {player} {where}: an escape (G2) under the profile's escape_policy {policy}"
    stake, pot = outcome.get("stake"), outcome.get("pot")
    entries = (outcome.get("settlement") or {}).get("entries") or []
    if outcome.get("training"):
        return (
            f"{head} (S19), in a training room: no coins move, the escape counts in their "
            "results and score (S22, D-2)"
        )
    if policy == "forfeit_to_banker":
        charge = next((-e["delta"] for e in entries if e["reason"] == "escape"), None)
        winner = next((e["player"] for e in entries if e["reason"] == "escape_win"), None)
        if charge is None or winner is None:
            return f"{head} (S19): the hand ended at once"
        capped = isinstance(pot, int) and charge < pot
        charged = (
            f"all they held when the hand started, of the {coins(pot)} on the table (S19, D-9)"
            if capped
            else "the whole pot on the table (S19)"
        )
        return (
            f"{head}: the hand ended at once; {player} is charged {coins(charge)}, "
            f"{charged}, and {winner} wins it; every other stake is returned"
        )
    if policy == "fold":
        forfeits = (
            f"the {coins(stake)} they had put in the pot"
            if isinstance(stake, int)
            else "their chips in the pot"
        )
        then = (
            "that left one player in the hand, who wins the pot (S16)"
            if entries
            else "the others play on"
        )
        return f"{head}: {player} is folded and forfeits {forfeits} (S19); {then}"
    return f"{head} (S19)"


def close_words(outcome: dict) -> str:
    voided = outcome.get("voided_hand")
    return f"closed {outcome['closed']}" + (
        f"; hand {voided} voided, every stake returned" if voided else ""
    )


def settlement_words(settlement: dict) -> str:
    """`bot-1 +1,500 (escape_win), bot-2 -1,500 (escape)`."""
    return ", ".join(
        f"{e['player']} {signed_coins(e['delta'])} ({e['reason']})" for e in settlement["entries"]
    )


def outcome_words(action: str, outcome: dict) -> str:
    """A GM log entry's outcome for people: refused or failed and why, or what it did."""
    if outcome.get("refused"):
        return "REFUSED: " + str(outcome["refused"])
    if outcome.get("fate") == "withdrawn" or outcome.get("withdrawn"):
        error = str(outcome.get("error", ""))
        return error if error.startswith("withdrawn") else "withdrawn: " + error
    if not outcome.get("ok", True):
        return "failed: " + str(outcome.get("error", ""))
    done = _DONE.get(action)
    detail = done(outcome) if done else ""
    return f"ok: {detail}" if detail else "ok"


def _adjusted(outcome: dict) -> str:
    if "coins_before" not in outcome:
        return ""
    return (
        f"{coins(outcome['coins_before'])} -> {coins(outcome['coins'])} coins "
        f"({signed_coins(outcome['coins'] - outcome['coins_before'])})"
    )


def _deployed(outcome: dict) -> str:
    if outcome.get("unchanged"):
        return "unchanged"
    made = outcome.get("deployment")
    config = str(outcome.get("config_id") or "")[:12]
    return ", ".join(
        part
        for part in (
            f"deployment {made}" if made else "",
            f"v{outcome['version']}" if outcome.get("version") is not None else "",
            f"config {config}" if config else "",
        )
        if part
    )


def _rolled_back(outcome: dict) -> str:
    if "rolled_back" not in outcome:
        return ""
    return (
        f"rolled back {str(outcome['rolled_back'])[:12]}, active again "
        f"{str(outcome.get('active') or '')[:12]}"
    )


def _user_added(outcome: dict) -> str:
    role = outcome.get("role")
    if not role:
        return ""
    return f"{role}, the store's first" if outcome.get("bootstrap") else str(role)


_DONE = {
    "kick": lambda o: kick_words(o) if "kicked" in o else "",
    "close": lambda o: close_words(o) if "closed" in o else "",
    "adjust": _adjusted,
    "deploy": _deployed,
    "rollback": _rolled_back,
    "users_add": _user_added,
    "token_key": lambda o: f"player tokens signed by {o['key']}" if "key" in o else "",
}
