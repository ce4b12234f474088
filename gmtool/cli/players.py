"""`gmtool players`: a player's coins, title, score, tallies, table, hands and ledger."""

from __future__ import annotations

import typer

from gmtool.bounds import MAX_COINS, MAX_COUNT
from gmtool.cli.common import (
    AS_OPTION,
    DB_OPTION,
    JSON_OPTION,
    acting_user,
    emit,
    with_any_store,
    writing_any,
)
from gmtool.cli.console import console
from gmtool.cli.formats import coins, moment, signed_coins

app = typer.Typer(
    help="Show a player; adjust a player's coins (operators).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command("list")
def list_(
    db: str | None = DB_OPTION,
    limit: int = typer.Option(
        50, "--limit", min=0, max=MAX_COUNT, help="At most this many, richest first; 0 = all."
    ),
    as_json: bool = JSON_OPTION,
) -> None:
    """Players with their coins, title, score and the table they sit at, richest first."""
    from gmtool.store.queries import players_with_titles

    emit(with_any_store(db, players_with_titles, limit), as_json, _render_players)


def _render_players(listing: dict) -> None:
    rows, total = listing["players"], listing["total"]
    shown = (
        f"{total} player(s)"
        if len(rows) == total
        else f"showing the richest {len(rows)} of {total} players "
        "(use --limit N, or --limit 0 for all)"
    )
    console.table(
        shown,
        ["player", "kind", "coins", "title", "score", "table"],
        [
            (
                p["name"],
                p["kind"],
                coins(p["coins"]),
                ", ".join(t for t in p["titles"].values() if t) or "-",
                p["score"],
                p["table"] or "-",
            )
            for p in rows
        ],
        right_align=(2, 4),
        keep=("player", "coins"),
        drop=("kind", "score", "title"),
    )


@app.command()
def show(
    name: str = typer.Argument(..., help="Player name."),
    db: str | None = DB_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Coins, title (S23), score and tallies (S22), current table and connection, recent
    hands, ledger."""
    emit(with_any_store(db, _player_view, name), as_json, _render_player)


def _player_view(store, name: str) -> dict:
    """The player, and at their table (a host with the gateway) whether they are connected
    or away, for how long (`connection`: None when no host reports them)."""
    from gmtool.cli.render_tables import table_summaries
    from gmtool.store.queries import player_with_titles

    player = player_with_titles(store, name)
    player["connection"] = None
    if player["table"]:
        for summary in table_summaries(store):
            if summary["id"] != player["table"]["table_id"]:
                continue
            person = next((p for p in summary.get("people", ()) if p["name"] == name), None)
            if person is not None:
                player["connection"] = {"table": summary["id"], **person}
    return player


def _connection_words(connection: dict | None) -> str:
    if connection is None:
        return "-"
    at = f" at {connection['table']}"
    if connection["away_s"] is not None:
        return f"away {connection['away_s']:.0f} s{at} (reconnect window running)"
    if connection["connected_s"] is not None:
        return f"connected {connection['connected_s']:.0f} s{at}"
    return f"not connected{at}"


def _render_player(player: dict) -> None:
    table = player["table"]
    titles = ", ".join(f"{t or 'no title'} ({p})" for p, t in player["titles"].items())
    console.lines(
        [
            f"{player['name']} ({player['kind']}): {coins(player['coins'])} coins, "
            f"score {player['score']}",
            f"title: {titles or '-'}",
            f"tallies: {player['wins']} won, {player['losses']} lost, {player['draws']} drawn, "
            f"{player['escapes']} escaped, {player['disconnects']} disconnected",
            f"table: {table['table_id'] + ' seat ' + str(table['seat']) if table else '-'}",
            f"connection: {_connection_words(player['connection'])}",
        ]
    )
    console.table(
        "recent hands",
        ["hand", "table", "started", "outcome", "delta"],
        [
            (
                h["id"],
                h["table_id"],
                moment(h["started_at"]),
                h["outcome"],
                signed_coins(h["delta"]),
            )
            for h in player["recent_hands"]
        ],
        right_align=(0, 4),
        keep=("hand", "table"),
    )
    console.table(
        "ledger (newest first)",
        ["row", "hand", "gm action", "delta", "reason", "at"],
        [
            (
                r["id"],
                r["hand_id"] or "",
                r["gm_action_id"] or "",
                signed_coins(r["delta"]),
                r["reason"],
                moment(r["created_at"]),
            )
            for r in player["ledger"]
        ],
        right_align=(0, 3),
        keep=("row", "hand", "gm action"),
    )


@app.command(context_settings={"ignore_unknown_options": True})
def adjust(
    name: str = typer.Argument(..., help="Player name."),
    delta: str = typer.Argument(
        ...,
        help="Coins to add (negative to remove): digits "
        f"0-9 with an optional sign, at most {MAX_COINS:,}.",
    ),
    reason: str = typer.Option(..., "--reason", help="Why (recorded in the GM log)."),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
) -> None:
    """Adjust coins (operators): one ledger row tied to the logged GM action."""
    from gmtool.ops.gm import adjust as adjust_coins

    delta = _amount(delta)
    outcome = writing_any(db, adjust_coins, acting_user(as_user), name, delta, reason)
    console.success(
        f"{name}: {coins(outcome['coins_before'])} -> {coins(outcome['coins'])} coins "
        f"({signed_coins(delta)}, {reason})"
    )


def _amount(text: str) -> int:
    """A coin amount as a GM types it: ASCII digits with an optional sign, within the bound
    (no full-width digits, underscores or exponents, which int() would take)."""
    digits = text[1:] if text[:1] in "+-" else text
    if (
        not digits.isascii()
        or not digits.isdigit()
        or len(digits) > 13
        or abs(int(text)) > MAX_COINS
    ):
        raise typer.BadParameter(
            f"{text!r} is not a valid amount of coins: digits 0-9 with an "
            f"optional sign, at most {MAX_COINS:,}",
            param_hint="DELTA",
        )
    return int(text)


TTL_UNITS = {"s": 1, "m": 60, "h": 3600, "d": 86_400}


def _ttl(text: str) -> int:
    """A token's lifetime as typed: a whole number and a unit (s, m, h or d), e.g. 1h."""
    number, unit = text[:-1], text[-1:]
    if unit not in TTL_UNITS or not number.isascii() or not number.isdigit() or len(number) > 9:
        raise typer.BadParameter(
            f"{text!r} is not a lifetime: a whole number and s, m, h or d (e.g. 1h)",
            param_hint="--ttl",
        )
    return int(number) * TTL_UNITS[unit]


@app.command()
def token(
    name: str = typer.Argument(..., help="The player the token lets act (its subject)."),
    ttl: str = typer.Option("1h", "--ttl", help="How long it is valid: 90s, 30m, 1h, 7d."),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Mint a player token for testing (operators): signed with <db>.token.key, which is
    made and registered (a logged GM action) when there is none."""
    from gmtool.ops.player_tokens import mint

    out = writing_any(db, mint, acting_user(as_user), name, _ttl(ttl))
    if as_json:
        console.json(out)
        return
    if out["made"]:
        console.diagnostic(f"made the token key {out['made']} (mode 0600)")
    if out["registered"]:
        console.diagnostic(f"registered token key {out['kid']} (logged in `gmtool gm log`)")
    console.line(out["token"])


@app.command("token-key")
def token_key(
    key: str = typer.Argument(..., help="The login service's public key: ed25519:BASE64."),
    reason: str | None = typer.Option(None, "--reason", help="Why (recorded in the GM log)."),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
) -> None:
    """Register a login service's key for player tokens (operators; a logged GM action)."""
    from gmtool.ops.player_tokens import register

    out = writing_any(db, register, acting_user(as_user), key, reason)
    said = "registered" if out["new"] else "already registered"
    console.success(f"token key {out['kid']} {said}: tokens it signs open this store")
