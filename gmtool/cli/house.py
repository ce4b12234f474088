"""`gmtool house run`: host live tables with bots into the store."""

from __future__ import annotations

from pathlib import Path

import typer

from gmtool.bounds import MAX_COUNT
from gmtool.cli.common import (
    DB_OPTION,
    MAX_SPEED,
    WITNESS_OPTION,
    number_option,
    open_store,
)
from gmtool.cli.console import Abort, console

app = typer.Typer(
    help="Host live tables (bots stand in for players).",
    no_args_is_help=True,
    rich_markup_mode=None,
)

# The longest a host of a PostgreSQL store may sit inside a transaction (its lease, if
# longer): a host frozen mid-write (a stopped process, a paused machine) loses its session.
FROZEN_HOLD_S = 5.0


@app.command()
def run(
    tables: int = typer.Option(4, "--tables", min=1, max=10_000, help="Tables to host."),
    system: list[str] | None = typer.Option(
        None, "--system", help="Profile id to host (repeat); default all."
    ),
    speed: float = number_option(
        1.0, "--speed", min=0.001, max=MAX_SPEED, help="Time scale: 10 = ten times faster."
    ),
    hands: int | None = typer.Option(
        None, "--hands", min=1, max=MAX_COUNT, help="Stop after N hands."
    ),
    duration: float | None = number_option(
        None, "--duration", min=0.0, max=10**9, help="Stop after S seconds."
    ),
    chaos: float = number_option(
        0.0, "--chaos", min=0.0, max=1.0, help="Chance per turn of a disconnect, stall or escape."
    ),
    seed: str | None = typer.Option(
        None,
        "--seed",
        help="Reproducible bots and decks (demo/test stores only: the seed text reveals "
        "every deck). A store without a host key takes it as its key; on a store with "
        "another key it is refused.",
    ),
    grace: float = number_option(
        10.0,
        "--grace",
        min=0.0,
        max=3600.0,
        help="Seconds running hands get to finish on stop before they are voided.",
    ),
    verbose: bool = typer.Option(
        False, "--verbose", "-v", help="A line for every hand that starts or settles."
    ),
    witness: str | None = WITNESS_OPTION,
    checkpoint_every: float = number_option(
        1.0,
        "--checkpoint-every",
        min=0.1,
        max=86_400.0,
        help="The most seconds an appended record waits for a signed checkpoint "
        "of the evidence log: what a killed host leaves unsigned (also signed at start "
        "and stop; none while nothing is appended).",
    ),
    listen: str | None = typer.Option(
        None,
        "--listen",
        help="HOST:PORT: serve players over WebSocket (docs/protocol.md); port 0 picks one.",
    ),
    public_address: str | None = typer.Option(
        None,
        "--public-address",
        help="With --listen: the address every host's lobby gives players for this host "
        "(ws:// or wss://, e.g. a TLS proxy's); default: the address it is bound to.",
    ),
    bots: int | None = typer.Option(
        None,
        "--bots",
        min=0,
        max=10_000,
        help="Bots that take the seats people leave empty (default: 5 a table, at least 8; "
        "0: people only, with --listen).",
    ),
    home: Path | None = typer.Option(
        None,
        "--home",
        envvar="GMTOOL_HOME",
        help="PostgreSQL only: the folder this host keeps its keys and witness folder in "
        "(a SQLite store keeps them beside its file). Hosts of one store share one.",
    ),
    lease: float = number_option(
        10.0,
        "--lease",
        min=1.0,
        max=3600.0,
        help="PostgreSQL only: seconds a table stays this host's without a renewal; "
        "another host takes a dead host's tables over once they pass.",
    ),
    db: str | None = DB_OPTION,
) -> None:
    """Play tables of every deployed system until stopped (Ctrl-C), --hands or --duration.
    Its lines go on stdout as they happen; if stdout's reader goes away, it plays on.
    On PostgreSQL several hosts share one store, each playing the tables it holds."""
    from gmtool.house.host import HostOptions
    from gmtool.store.url import locate

    options = HostOptions(
        tables=tables,
        systems=system or None,
        speed=speed,
        hands=hands,
        duration=duration,
        chaos=chaos,
        seed=seed,
        grace=grace,
        verbose=verbose,
        witness=witness,
        checkpoint_every=checkpoint_every,
        listen=_address(listen),
        public_address=_public(public_address, listen),
        bots=bots,
        lease=lease,
    )
    if bots == 0 and listen is None:
        raise typer.BadParameter("no bots and no players: give --listen too", param_hint="--bots")
    say = HostLines()
    if locate(db).is_postgres:
        report = _host_shared(db, _home(home), options, say)
    else:
        if home is not None:
            raise typer.BadParameter(
                "a SQLite store keeps its host's files beside it; --home is for PostgreSQL",
                param_hint="--home",
            )
        report = _host_alone(db, options, say)
    _summary(report, say)


def _host_alone(db: str | None, options, say: HostLines):
    """The store's one host (SQLite): it holds `<db>.host.lock` while it plays."""
    import asyncio

    from gmtool.house.host import prepare_host
    from gmtool.house.lock import HostLock, check_writable
    from gmtool.house.privacy import make_private
    from gmtool.store.db import resolve_path

    check_writable(resolve_path(db))  # a read-only mount: one plain message, nothing written
    path = resolve_path(db)
    if path.is_file() and path.stat().st_size:  # (an empty file: the open below says so)
        with open_store(db):  # a gmtool store (read only): no mode changed on another file
            pass
        if made_private := make_private(path):  # before the host writes its -wal
            console.warning(made_private)
    with open_store(db, write=True) as store:
        lock = HostLock(store.path).acquire()
        try:
            host = prepare_host(store, options, notify=say)
        except BaseException:
            lock.abandon()  # refused before hosting: no lock file left behind
            raise
        try:
            return asyncio.run(host.run())
        finally:
            lock.release()


def _host_shared(db: str | None, home: Path, options, say: HostLines):
    """One of the hosts of a PostgreSQL store: its files in `home`, its tables leased."""
    import asyncio

    from gmtool.house.host import prepare_host

    with open_store(db, write=True, postgres=True) as store:
        store.at_home(_made(home))  # (made once the database was reached)
        # a host frozen inside a transaction holds every writer up: the server ends its
        # session after this long (it then stops when it runs again: house/host.py)
        store.hold_transactions_at_most(max(options.lease, FROZEN_HOLD_S))
        with store.one_at_a_time():  # hosts started together: their files made once
            host = prepare_host(store, options, notify=say)
        return asyncio.run(host.run())


def _home(home: Path | None) -> Path:
    """The host's home folder as given, or a usage error."""
    if home is None:
        raise typer.BadParameter(
            "a host on PostgreSQL keeps its keys and witness folder in a folder of its own: "
            "give --home DIR (or $GMTOOL_HOME); hosts of one store share one",
            param_hint="--home",
        )
    if home.exists() and not home.is_dir():
        raise typer.BadParameter(f"{home}: not a folder", param_hint="--home")
    return home


def _made(home: Path) -> Path:
    """The home folder, made (owner only) if missing; a usage error if it cannot be."""
    import os

    try:
        home.mkdir(mode=0o700, parents=True, exist_ok=True)
    except OSError as error:
        raise typer.BadParameter(
            f"{home}: cannot make this folder ({error.strerror or error})", param_hint="--home"
        ) from None
    if not home.is_dir() or not os.access(home, os.W_OK | os.X_OK):
        raise typer.BadParameter(f"{home}: not a folder this user may write", param_hint="--home")
    return home.resolve()


def _summary(report, say: HostLines) -> None:
    say(f"stopped: {report.hands} hand(s) settled")
    if report.voided_on_stop:
        say(
            f"voided on stop (every stake returned): hand(s) "
            f"{', '.join(map(str, report.voided_on_stop))}"
        )
    if report.finished_on_stop:
        say(f"finished their hand before stopping: {', '.join(report.finished_on_stop)}")
    if report.failed_tables:
        raise Abort(
            f"table(s) stopped by an internal error: {', '.join(report.failed_tables)}"
            " (their running hands were voided, every stake returned)",
            code=1,
        )
    if report.interrupted:
        raise typer.Exit(130)


def _address(text: str | None) -> str | None:
    """--listen as given (HOST:PORT, a port from 0 to 65535), or BadParameter."""
    if text is None:
        return None
    host, colon, port = text.rpartition(":")
    if not colon or not host or not port.isascii() or not port.isdigit() or int(port) > 65535:
        raise typer.BadParameter(
            f"{text!r} is not HOST:PORT (e.g. 127.0.0.1:8765; port 0: any free port)",
            param_hint="--listen",
        )
    return text


def _public(text: str | None, listen: str | None) -> str | None:
    """--public-address as given (a ws:// or wss:// URL), or BadParameter."""
    from urllib.parse import urlsplit

    if text is None:
        return None
    if listen is None:
        raise typer.BadParameter(
            "it is the gateway's address: give --listen too", param_hint="--public-address"
        )
    try:
        parts = urlsplit(text)
        parts.port  # noqa: B018 - a port that is not a number raises ValueError
    except ValueError:
        parts = None
    if (
        parts is None
        or parts.scheme not in ("ws", "wss")
        or not parts.hostname
        or parts.query
        or parts.fragment
        or len(text) > 255
        or not text.isascii()
        or not text.isprintable()
        or " " in text
    ):
        raise typer.BadParameter(
            f"{text[:80]!r} is not a ws:// or wss:// address (e.g. wss://room.example.com/)",
            param_hint="--public-address",
        )
    return text


class HostLines:
    """The host's lines on stdout, each flushed as it is written (a reader through a pipe,
    `tee` or a log shipper sees it at once). When the reader goes away (`| head -1`, a log
    shipper restarting), the host plays on, as a service does when its log is cut: its
    hands go on, its lines go nowhere, and one warning on stderr says how to stop it."""

    def __init__(self) -> None:
        self.gone = False

    def __call__(self, message: str) -> None:
        if self.gone:
            return
        console.line(message)
        console.flush()
        if console.reader_left:
            import os

            self.gone = True
            try:
                console.warning(
                    "stdout was closed: the host plays on without printing; stop it with "
                    f"Ctrl-C or `kill {os.getpid()}` (a clean stop: running hands get --grace)"
                )
            except OSError:
                pass  # stderr went with it
