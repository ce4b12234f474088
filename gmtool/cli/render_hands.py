"""A hand as a readable timeline: cards, actions, pot after each street, showdown, settlement."""

from __future__ import annotations

from gmtool.cli.console import Console
from gmtool.cli.formats import coins, signed_coins
from gmtool.cli.render_gm import settlement_words

_ACTION_TYPES = {
    "ante",
    "bet",
    "raise",
    "call",
    "check",
    "fold",
    "allin",
    "follow",
    "look",
    "buy",
    "open",
    "pass",
    "timeout",
    "disconnect",
    "reconnect",
    "escape",
    "kick",
    "wait",
}


def timeline(events) -> list[str]:
    """One line per event a person cares about, in order."""
    lines = []
    for e in events:
        f = e.fields
        if e.type == "hand_started":
            seats = ", ".join(f"{s['player']} {_coins(s['coins'])}" for s in f["seats"])
            lines.append(
                f"hand {f.get('tier')} (ante {_coins(f.get('ante'))}): {seats}; "
                f"banker {f.get('banker')}"
            )
        elif e.type == "deal":
            cards = ", ".join(
                f"{c['player']} {c['card']}" + (" (hole)" if c["face"] == "down" else "")
                for c in f["cards"]
            )
            where = f"street {f['street']}: " if "street" in f else ""  # three-card: one deal
            lines.append(f"{where}deal {cards}")
        elif e.type == "first_speaker":
            showing = f", showing {f['showing']}" if "showing" in f else ""  # stud5 only
            lines.append(f"  {f['player']} speaks first{showing} ({f['rule']})")
        elif e.type in _ACTION_TYPES:
            lines.append("  " + _action_line(e))
        elif e.type == "street_end":
            lines.append(f"  street {f['street']} ends, pot {_coins(f['pot'])}")
        elif e.type == "showdown":
            for hand in f["hands"]:
                lines.append(
                    f"showdown: {hand['player']} {' '.join(hand['cards'])}: {hand['description']}"
                )
            lines.append(f"  {f['explanation']}")
        elif e.type == "hand_ended":
            lines.append(
                f"hand ends ({f['reason']}): {', '.join(f['winners'])} "
                f"win{'s' if len(f['winners']) == 1 else ''} the pot of {_coins(f['pot'])}"
            )
        elif e.type == "settlement":
            lines.append(f"settlement: {settlement_words(f)}")
            if f.get("score"):
                lines.append("score: " + ", ".join(f"{p} {s:+d}" for p, s in f["score"].items()))
        elif e.type == "hand_voided":
            lines.append(f"hand voided: {_void_words(f)}; every stake returned (S20)")
        else:
            detail = ", ".join(
                f"{k} {_coins(v) if k in _COIN_FIELDS else v}"
                for k, v in f.items()
                if k not in ("rule",)
            )
            rule = f" ({f['rule']})" if "rule" in f else ""
            lines.append(f"  {e.type.replace('_', ' ')}: {detail}{rule}")
    return lines


_COIN_FIELDS = {"amount", "ante", "coins", "pot", "total", "charge", "min_holding", "price"}


def _coins(value) -> str:
    return coins(value) if isinstance(value, int) and not isinstance(value, bool) else str(value)


def _void_words(fields: dict) -> str:
    from gmtool.cli.render_settlement import EXPLAINED_ALONE, VOID_REASONS

    reason = str(fields.get("reason") or "")
    words = VOID_REASONS.get(reason, reason.replace("_", " "))
    detail = str(fields.get("detail") or "")
    return words + (f" ({detail})" if detail and reason not in EXPLAINED_ALONE else "")


def _action_line(e) -> str:
    f = e.fields
    who = f.get("player") or ""
    words = [who, e.type] if who else [e.type]
    if e.type == "kick":
        words = [who, "kicked by a GM" + (f": {f['reason']}" if f.get("reason") else "")]
    elif "amount" in f:
        words.append(str(f["amount"]) + " s" if e.type == "wait" else _coins(f["amount"]))
    if "target" in f:
        words.append(f["target"])
    tail = []
    if "total" in f:
        tail.append(f"total {_coins(f['total'])}")
    if "pot" in f:
        tail.append(f"pot {_coins(f['pot'])}")
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


def _events_of(report: dict):
    from gmtool.engine.events import Event

    return [
        Event(e["type"], {k: v for k, v in e.items() if k not in ("type", "seq")})
        for e in report["events"]
    ]


def _header(report: dict) -> list[str]:
    profile = report["profile"]
    seed = report["seed"] or "(secret until the hand ends)"
    verdict = {True: "verifies", False: "DOES NOT MATCH the commitment", None: ""}[
        report["seed_verifies"]
    ]
    if report.get("seed_problem"):  # the audit's seed check (hands show)
        verdict = f"DOES NOT VERIFY: {report['seed_problem']}"
    return [
        f"hand {report['hand']}: table {report['table']} #{report['number']}, "
        f"{profile['title']} ({profile['id']} v{profile['version']}), tier {report['tier']}",
        f"config {report['config_id']}",
        f"started {report['started_at']}, ended {report['ended_at'] or '-'}, {report['outcome']}",
        f"deck: {report['algorithm']}, commitment {report['commitment']}",
        f"seed: {seed} {verdict}".rstrip(),
    ]


def evidence_lines(result: dict) -> list[str]:
    """The verdict on a hand's whole evidence (`hands show`, `hands replay`): verified, or
    every problem in plain words; then what could not be checked."""
    evidence = result["evidence"]
    signed = evidence.get("checkpoint")
    if evidence["verified"]:
        where = (
            f"; its records are in the newest signed checkpoint, of {signed['size']:,} records"
            if signed
            else ""
        )
        lines = [
            "evidence: verified (events chain, settlement and ledger rows, evidence log "
            f"records, seed{where})"
        ]
    else:
        problems = evidence["problems"]
        lines = [
            f"EVIDENCE DOES NOT VERIFY: {len(problems)} problem(s) with this hand's records "
            "(`gmtool audit` checks the whole store):"
        ]
        lines += [f"  {p['kind']}: {p['detail']}" for p in problems]
    return lines + [f"note: {note}" for note in evidence["notes"]]


def render_report(report: dict) -> list[str]:
    """`hands show` as text: the header, the timeline, then the outcome and settlement in
    sentences with the rule behind every line."""
    from gmtool.cli.render_settlement import explain, text_lines

    lines = _header(report)
    if report["outcome"] == "running":
        lines.append("the hand is running: face-down cards are hidden (RULES G3)")
    return lines + [""] + timeline(_events_of(report)) + [""] + text_lines(explain(report))


def markdown_report(report: dict) -> str:
    """A dispute report a support agent can attach to a ticket."""
    from gmtool.cli.render_settlement import explain

    profile = report["profile"]
    header = _header(report)
    out = [f"# Hand {report['hand']} dispute report", ""]
    out += [
        f"- profile: {_md(profile['title'])} (`{profile['id']}` version {profile['version']}), "
        f"tier `{report['tier']}`",
        f"- table `{report['table']}`, hand #{report['number']}; banker "
        f"{_md(report['banker'] or '-')}, ante {_coins(report['ante'])}",
    ]
    out += [f"- {_md(line)}" for line in header[1:]]
    out += [
        "",
        "Players at the start: "
        + ", ".join(f"{_md(s['player'])} ({_coins(s['coins'])} coins)" for s in report["seats"]),
        "",
    ]
    explained = explain(report)
    summary = explained.summary[:1].upper() + explained.summary[1:]
    out += ["## Outcome", "", _md(summary), "", "## Settlement", ""]
    if explained.lines:
        out += [
            "| player | delta | reason | result | why | rules |",
            "|---|---:|---|---|---|---|",
        ]
        out += [
            f"| {_md(line.player)} | {signed_coins(line.delta)} | {line.reason} | "
            f"{line.result} | {_md(line.why)} | {line.rules} |"
            for line in explained.lines
        ]
        out += ["", _md(explained.note)] if explained.note else []
    else:
        out.append("None yet: coins move only when the hand ends (S20).")
    out.append("")
    replay = report.get("replay")
    if replay is not None:
        verdict = (
            "the engine reproduces every event and the settlement"
            if replay["ok"]
            else "MISMATCH: " + "; ".join(p["detail"] for p in replay["problems"])
        )
        out += [
            "## Verification",
            "",
            f"- seed against commitment: "
            f"{'matches' if report['seed_verifies'] else 'does not match'}",
            f"- replay under config `{report['config_id'][:12]}`: {_md(verdict)}",
            "",
        ]
    out += ["## Timeline", "", "```"] + timeline(_events_of(report)) + ["```", ""]
    return "\n".join(out)


def _md(text: str) -> str:
    """Text in a markdown line or table cell: a `|` or a backtick typed into a name or a
    reason cannot end the cell or open code."""
    return str(text).replace("\\", "\\\\").replace("|", "\\|").replace("`", "\\`")
