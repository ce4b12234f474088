"""`gmtool bots --connect`: bot players that reach a host through its player gateway."""

from __future__ import annotations

from pathlib import Path

import typer

from gmtool.cli.common import AS_OPTION, DB_OPTION, JSON_OPTION, number_option
from gmtool.cli.console import console


def bots(
    connect: str = typer.Option(
        ..., "--connect", help="The host's player gateway: ws://HOST:PORT (house run --listen)."
    ),
    count: int | None = typer.Option(
        None, "--count", min=1, max=10_000, help="How many bots (default 1; or every token)."
    ),
    token_file: Path | None = typer.Option(
        None, "--token-file", help="Tokens from your login service, one a line (else --db)."
    ),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
    grant: int | None = typer.Option(
        None,
        "--grant",
        min=1,
        max=10**15,
        help="With --db: top each bot up to COINS (a GM adjustment, logged as evidence).",
    ),
    prefix: str = typer.Option(
        "netbot", "--name", help="With --db: the bots are NAME-0001, NAME-0002..."
    ),
    policy: list[str] | None = typer.Option(
        None, "--policy", help="Policy to play (repeat; dealt in turn): cautious, loose, ..."
    ),
    room: str | None = typer.Option(
        None, "--room", help="Sit in PROFILE:TIER (default: a room of the lobby at random)."
    ),
    hands: int = typer.Option(
        0, "--hands", min=0, max=10**9, help="Each bot leaves after N hands (0: never)."
    ),
    think: float = number_option(
        0.0, "--think", min=0.0, max=60.0, help="Mean seconds a bot thinks before acting."
    ),
    ttl: int = typer.Option(
        86_400, "--ttl", min=60, max=30 * 86_400, help="With --db: token lifetime (seconds)."
    ),
    seed: str | None = typer.Option(None, "--seed", help="Seed of the bots' choices."),
    as_json: bool = JSON_OPTION,
) -> None:
    """Play bots through the player protocol (load test; proof that the protocol is
    complete). Tokens: minted with the store's token key (--db, an operator testing their
    room) or read from --token-file. Decisions come only from what each bot is told."""
    from gmtool.cli.common import acting_user, with_any_store, writing_any
    from gmtool.errors import UsageError
    from gmtool.ops import netbots

    _gateway_address(connect)  # before anything is written (tokens, grants)
    where = _room(room)
    styles = netbots.policies(policy or [])
    rules: dict = {}
    if token_file is not None:
        tokens = netbots.read_tokens(token_file)[: count or None]
        if db is not None:
            rules = with_any_store(db, netbots.published_rules)
    elif db is not None:
        names = netbots.bot_names(prefix, count or 1)
        made = writing_any(db, netbots.prepare, acting_user(as_user), names, grant, ttl)
        tokens, rules = made["tokens"], made["rules"]
        if made["granted"]:
            console.diagnostic(f"granted coins to {len(made['granted'])} bots (GM log)")
    else:
        raise UsageError("say where the tokens come from: --db (minted) or --token-file")
    made_bots = netbots.make_bots(connect, tokens, rules, styles, where, hands, think, seed)
    report = netbots.run(
        made_bots,
        lambda: console.diagnostic(f"{len(tokens)} bots playing at {connect} (Ctrl-C stops them)"),
    ).summary()
    if as_json:
        console.json(report)
        return
    trip = report["round_trip_ms"]
    console.line(
        f"{report['bots']} bots, {report['hands']} hands, {report['actions']} actions; "
        f"round trip p50 {trip['p50']} ms, p99 {trip['p99']} ms; "
        f"{report['resumes']} resumes, {report['errors']} error frames"
        + (" (interrupted)" if report["interrupted"] else "")
    )
    for refused in report["refused"]:
        console.warning(f"refused: {refused}")


def _gateway_address(connect: str) -> None:
    """A usage error unless `connect` is a ws:// address with a host and, if any, a port
    from 1 to 65535 (the URL parser's own complaint said plainly)."""
    from urllib.parse import urlsplit

    from gmtool.errors import UsageError

    usage = f"--connect {connect!r}: a gateway address is ws://HOST:PORT"
    try:
        parts = urlsplit(connect)
        port = parts.port
    except ValueError as error:
        raise UsageError(f"{usage} ({error})") from None
    if parts.scheme != "ws" or not parts.hostname or port == 0:
        raise UsageError(usage)


def _room(text: str | None) -> tuple[str, str] | None:
    if text is None:
        return None
    profile, _, tier = text.partition(":")
    if not profile or not tier:
        raise typer.BadParameter(f"{text!r}: a room is PROFILE:TIER", param_hint="--room")
    return profile, tier
