"""A recorded hand's outcome in sentences, every settlement line with the rule behind it.

`hands show` and `hands export` print it for every outcome: a settled hand (who won what
and why, each ledger entry's rule: S14 showdown, S16 all folded, S19 escape with D-1,
D-9 and D-10, S22 training rooms, H6-H8 and H11 in three-card), a voided hand (why it was
voided, and that no coins moved: S20), a running one (nothing settled yet). It reads the
recorded events only; the engine decided everything it explains.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from gmtool.cli.formats import coins, signed_coins


@dataclass(frozen=True)
class Line:
    """One player's part of the settlement: the change of coins, why, and the rules."""

    player: str
    delta: int
    why: str
    rules: str
    reason: str = ""  # the ledger entry's own reason (`escape_win`), as JSON gives it
    result: str = ""  # the player's result (win, loss, draw, escape, void)


@dataclass(frozen=True)
class Explained:
    summary: str  # how the hand ended, in sentences that begin with a word of ours
    lines: list[Line]
    note: str  # what holds for the whole settlement (zero-sum, no coins moved ...)


VOID_REASONS = {
    "host_stopped": "the host was stopped before the hand ended, and the hand did not end "
    "within the stop's grace period",
    "crash_recovery": "the host stopped without ending it (killed or crashed); the next "
    "host start voided it",
    "host_error": "the host met an internal error at this table",
    "closed by GM": "a GM closed the table during the hand (see the GM log)",
}

EXPLAINED_ALONE = {"host_stopped", "crash_recovery"}  # their recorded detail says no more

_SUMMARY_RULES = {  # hand_ended reason -> the rules behind the winner taking the pot
    "showdown": "S14",
    "all_folded": "S16",
    "all_passed": "H6",
    "buy": "H7",
    "open": "H8",
    "round_limit": "H11, D-8",
}


def explain(report: dict) -> Explained:
    """How the hand of `report` (audit/dispute.py's report) ended, and its settlement."""
    events = {e["type"]: e for e in report["events"]}
    if report["outcome"] == "running":
        return Explained("the hand is running: nothing is settled until it ends (S20)", [], "")
    voided = events.get("hand_voided")
    if report["outcome"] == "voided" or voided:
        return _voided(report, voided or {})
    return _settled(report, events.get("hand_ended") or {}, events.get("settlement") or {})


def _voided(report: dict, voided: dict) -> Explained:
    reason = str(voided.get("reason") or "")
    why = VOID_REASONS.get(reason, reason.replace("_", " ") or "no reason was recorded")
    detail = str(voided.get("detail") or "")
    if detail and reason not in EXPLAINED_ALONE:
        why += f" ({detail})"
    lines = [
        Line(seat["player"], 0, "stake returned: the hand was voided", "S20", "voided", "void")
        for seat in report["seats"]
    ]
    return Explained(
        f"the hand was voided: {why}.",
        lines,
        "No coins moved: coins leave a player only when a hand is settled (S20), so every "
        "stake stays with its player.",
    )


def _settled(report: dict, ended: dict, settlement: dict) -> Explained:
    events = report["events"]
    reason = str(ended.get("reason") or settlement.get("reason") or "")
    winners = ", ".join(ended.get("winners") or settlement.get("winners") or [])
    pot = ended.get("pot")
    pot_words = f"the pot of {coins(pot)}" if isinstance(pot, int) else "the pot"
    training = any(e.get("reason") == "training" for e in settlement.get("entries", []))
    if reason == "escape":
        summary = _escape_summary(events, ended, winners, training)
    else:
        how = {
            "showdown": f"showdown: {winners} win{_s(winners)} {pot_words} with the best hand",
            "all_folded": f"every other player folded: {winners} wins {pot_words} without a "
            "showdown",
            "all_passed": f"every other player passed: {winners} wins {pot_words}",
            "buy": f"the last buy left one player: {winners} wins {pot_words}",
            "open": f"the last two players opened: {winners} wins {pot_words}",
            "round_limit": f"the round limit was reached and the system opened the hands "
            f"left: {winners} wins {pot_words}",
        }.get(reason, f"the hand ended ({reason}): {winners} win{_s(winners)} {pot_words}")
        summary = f"{how} ({_SUMMARY_RULES.get(reason, 'S20')})."
    if training:
        summary += " A training room: no coins move, only results and score (S22)."
    scores = settlement.get("score") or {}
    results = settlement.get("results") or {}
    lines = [
        replace(
            _line(entry, reason, ended, events, results, scores),
            reason=entry["reason"],
            result=str(results.get(entry["player"], "")),
        )
        for entry in settlement.get("entries", [])
    ]
    removed = [e for e in events if e["type"] == "below_minimum"]
    note = (
        "No coins moved: a training room counts results and score only (S22)."
        if training
        else "The entries sum to zero: coins only move between players (S20)."
    )
    if removed:
        note += " " + " ".join(
            f"{e['player']} now holds {coins(e['coins'])}, below the "
            f"{coins(e['min_holding'])} the room requires: removed from the table "
            f"({e.get('rule', 'S21')})."
            for e in removed
        )
    return Explained(summary, lines, note)


def _escape_summary(events: list[dict], ended: dict, winner: str, training: bool) -> str:
    escapee = str(ended.get("escaped") or "")
    charge, pot = ended.get("charge"), ended.get("pot")
    cause, cause_rule = _escape_cause(events, escapee)
    capped = isinstance(charge, int) and isinstance(pot, int) and charge < pot
    charged = (
        f"charged {coins(charge)}, all they held when the hand started, of the "
        f"{coins(pot)} on the table"
        if capped
        else f"charged the whole pot on the table, {coins(pot) if isinstance(pot, int) else '?'}"
    )
    replaced = next((e for e in reversed(events) if e["type"] == "banker_replaced"), None)
    instead = ""
    if replaced is not None and replaced.get("rule") == "D-10":
        instead = f", in place of the banker {replaced.get('folded')}, who had folded"
    elif replaced is not None:
        instead = ", in place of the banker, who escaped"
    replaced_rule = replaced.get("rule", "") if replaced else ""
    rules = ", ".join(r for r in (cause_rule, "S19", "D-9" if capped else "", replaced_rule) if r)
    outcome = (
        f"{winner} wins{instead}"
        if training
        else f"{escapee} is {charged}, and {winner} wins it{instead}"
    )
    return (
        f"an escape: {escapee} escaped ({cause}) and, under policy forfeit_to_banker, the "
        f"hand ended at once; {outcome} ({rules})."
    )


def _escape_cause(events: list[dict], player: str) -> tuple[str, str]:
    """Why `player` escaped, and the rule that made it an escape."""
    for event in reversed(events):
        if event.get("player") != player:
            continue
        if event["type"] == "kick":
            why = f": {event['reason']}" if event.get("reason") else ""
            return f"kicked by a GM{why}", "G2"
        if event["type"] == "window_expired":
            return "not back within the reconnect window", "S18"
        if event["type"] == "escape":
            return "left the running hand", ""
    return "left the running hand", ""


def _line(
    entry: dict, reason: str, ended: dict, events: list[dict], results: dict, scores: dict
) -> Line:
    player, delta, kind = entry["player"], entry["delta"], entry["reason"]
    if kind == "training":
        score = scores.get(player)
        result = results.get(player, "")
        scored = f", score {score:+d}" if isinstance(score, int) else ""
        rules = "S22, D-2"
        if reason == "escape" and result in ("escape", "win"):  # the result S19 gave them
            replaced = [
                e.get("rule", "")
                for e in events
                if e["type"] == "banker_replaced" and e.get("player") == player
            ]
            rules = ", ".join(["S19", *replaced, rules])
        return Line(player, delta, f"training room, no coins move: {result}{scored}", rules)
    if kind == "won":
        rule = _SUMMARY_RULES.get(reason, "S20")
        return Line(player, delta, "wins the pot (net of their own stake in it)", f"{rule}, S20")
    if kind == "split":
        return Line(player, delta, "shares the pot: equal hands", "S6, S20")
    if kind == "lost":
        rule = {"open": "H8", "round_limit": "H11"}.get(reason, "S14")
        return Line(player, delta, "loses what they put in: a weaker hand", f"{rule}, S20")
    if kind in ("folded", "passed"):
        return _left_line(player, delta, kind, events)
    if kind == "bought_out":
        return Line(player, delta, "lost a buy and is out: forfeits the ante and bets", "H7")
    if kind == "escape":
        cause, cause_rule = _escape_cause(events, player)
        rules = ", ".join(r for r in (cause_rule, "S19") if r)
        if reason != "escape":  # policy fold: out of the hand, as a fold
            return Line(
                player,
                delta,
                f"escaped ({cause}): out of the hand, forfeits what they put in",
                rules,
            )
        capped = isinstance(ended.get("pot"), int) and -delta < ended["pot"]
        why = f"escaped ({cause}): charged " + (
            "all they held when the hand started" if capped else "the whole pot on the table"
        )
        return Line(player, delta, why, rules + (", D-9" if capped else ""))
    if kind == "escape_win":
        return _escape_win_line(player, delta, events)
    if kind == "returned":
        return Line(
            player,
            delta,
            "stake returned: after an escape only the escapee and the winner move coins",
            "S19",
        )
    return Line(player, delta, kind.replace("_", " "), "S20")


def _left_line(player: str, delta: int, kind: str, events: list[dict]) -> Line:
    """A fold (stud5) or a pass (three-card): by the player, the clock or an escape."""
    verb = "fold" if kind == "folded" else "pass"
    own = next((e for e in reversed(events) if e["type"] == verb and e.get("player") == player), {})
    stake = "forfeits what they put in"
    if own.get("cause") == "timeout":
        return Line(player, delta, f"timed out, {kind} by the system: {stake}", "S17, S20")
    if own.get("rule") == "S19":
        cause, cause_rule = _escape_cause(events, player)
        rules = ", ".join(r for r in (cause_rule, "S19") if r)
        return Line(player, delta, f"escaped ({cause}) under policy fold: {stake}", rules)
    return Line(player, delta, f"{kind}: {stake}", "S13, S20" if verb == "fold" else "H6")


def _escape_win_line(player: str, delta: int, events: list[dict]) -> Line:
    replaced = next(
        (e for e in reversed(events) if e["type"] == "banker_replaced" and e["player"] == player),
        None,
    )
    if replaced is None:
        return Line(player, delta, "wins what the escapee is charged, as the banker", "S19")
    if replaced.get("rule") == "D-10":
        return Line(
            player,
            delta,
            f"wins what the escapee is charged, in place of the banker {replaced.get('folded')}, "
            "who had folded",
            "S19, D-10",
        )
    return Line(
        player,
        delta,
        "wins what the escapee is charged, taking the place of the banker who escaped",
        f"S19, {replaced.get('rule', 'D-1')}",
    )


def text_lines(explained: Explained) -> list[str]:
    """The settlement as `hands show` prints it."""
    if not explained.lines:
        return [f"outcome: {explained.summary}"]
    width = max(len(line.player) for line in explained.lines)
    amounts = [signed_coins(line.delta) for line in explained.lines]
    amount_width = max(len(a) for a in amounts)
    out = [f"outcome: {explained.summary}", "settlement:"]
    out += [
        f"  {line.player:<{width}}  {amount:>{amount_width}}  {line.why} ({line.rules})"
        for line, amount in zip(explained.lines, amounts, strict=True)
    ]
    return out + ([f"  {explained.note}"] if explained.note else [])


def _s(winners: str) -> str:
    return "" if "," in winners else "s"
