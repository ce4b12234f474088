"""A hand as a readable timeline: cards, actions, pot after each street, showdown, settlement."""

from __future__ import annotations

from gmtool.cli.console import Console

_ACTION_TYPES = {"bet", "raise", "call", "check", "fold", "allin", "follow", "look", "buy",
                 "open", "pass", "timeout", "disconnect", "reconnect", "escape", "kick", "wait"}


def timeline(events) -> list[str]:
    """One line per event a person cares about, in order."""
    lines = []
    for e in events:
        f = e.fields
        if e.type == "hand_started":
            seats = ", ".join(f"{s['player']} {s['coins']}" for s in f["seats"])
            lines.append(f"hand {f.get('tier')} (ante {f.get('ante')}): {seats}; "
                         f"banker {f.get('banker')}")
        elif e.type == "deal":
            cards = ", ".join(f"{c['player']} {c['card']}" + (" (hole)" if c["face"] == "down"
                                                              else "") for c in f["cards"])
            where = f"street {f['street']}: " if "street" in f else ""  # three-card: one deal
            lines.append(f"{where}deal {cards}")
        elif e.type == "first_speaker":
            showing = f", showing {f['showing']}" if "showing" in f else ""  # stud5 only
            lines.append(f"  {f['player']} speaks first{showing} ({f['rule']})")
        elif e.type in _ACTION_TYPES:
            lines.append("  " + _action_line(e))
        elif e.type == "street_end":
            lines.append(f"  street {f['street']} ends, pot {f['pot']}")
        elif e.type == "showdown":
            for hand in f["hands"]:
                lines.append(f"showdown: {hand['player']} {' '.join(hand['cards'])}: "
                             f"{hand['description']}")
            lines.append(f"  {f['explanation']}")
        elif e.type == "hand_ended":
            lines.append(f"hand ends ({f['reason']}): {', '.join(f['winners'])} "
                         f"win{'s' if len(f['winners']) == 1 else ''} the pot of {f['pot']}")
        elif e.type == "settlement":
            parts = ", ".join(f"{x['player']} {x['delta']:+d} ({x['reason']})" for x in f["entries"])
            lines.append(f"settlement: {parts}")
            if f.get("score"):
                lines.append("score: " + ", ".join(f"{p} {s:+d}" for p, s in f["score"].items()))
        else:
            detail = ", ".join(f"{k} {v}" for k, v in f.items() if k not in ("rule",))
            rule = f" ({f['rule']})" if "rule" in f else ""
            lines.append(f"  {e.type.replace('_', ' ')}: {detail}{rule}")
    return lines


def _action_line(e) -> str:
    f = e.fields
    who = f.get("player") or ""
    words = [who, e.type] if who else [e.type]
    if "amount" in f:
        words.append(str(f["amount"]) + (" s" if e.type == "wait" else ""))
    if "target" in f:
        words.append(f["target"])
    tail = []
    if "total" in f:
        tail.append(f"total {f['total']}")
    if "pot" in f:
        tail.append(f"pot {f['pot']}")
    if "cause" in f:
        tail.append(f"because of {f['cause'].replace('_', ' ')}")
    if "rule" in f:
        tail.append(f["rule"])
    return " ".join(words) + (f"  ({', '.join(tail)})" if tail else "")


def render_outcome(outcome, console: Console) -> None:
    scenario = outcome.scenario
    console.line(f"{scenario.path}" + (f": {scenario.title}" if scenario.title else ""))
    console.lines(timeline(outcome.events))
    if outcome.error is not None:
        console.line(f"refused: {outcome.error_action}: {outcome.error}")
