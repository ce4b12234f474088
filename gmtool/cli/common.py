"""What the commands share: the options every group uses, the store, and how data is shown.

A command parses its arguments, calls one function of a lower layer, and hands the
result to `emit`, which prints it as JSON (`--json`, the contract scripts rely on) or
renders it as text.
"""

from __future__ import annotations

import contextlib
import getpass
import math
import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import typer

from gmtool.cli.console import console

T = TypeVar("T")

DB_OPTION = typer.Option(
    None,
    "--db",
    help="Database file or sqlite:///PATH, or a postgresql:// URL where the command runs on "
    "PostgreSQL (default: $GMTOOL_DB, else ./gmtool.db).",
)
WITNESS_OPTION = typer.Option(
    None,
    "--witness",
    envvar="GMTOOL_WITNESS",
    help="Folder of signed checkpoints. The store records its witnesses (`gmtool gm witness "
    "list`): another folder is refused (audit: checked instead, with a warning). A store "
    "that records none uses this, else <db>.witness/; its first host start records it.",
)
AS_OPTION = typer.Option(
    None,
    "--as",
    help="Acting GM user, whose key signs the request "
    "(default: $GMTOOL_USER, else your login name).",
)
JSON_OPTION = typer.Option(
    False, "--json", help="Print JSON (the contract for scripts) instead of text."
)
FORMAT_OPTION = typer.Option(
    None,
    "--format",
    help="text (the default), json (the same as --json), github (workflow annotations) or "
    "sarif (SARIF 2.1.0).",
    show_default=False,
)


def _moment(flag: str) -> Callable[..., str | None]:
    def parse(ctx: typer.Context, value: str | None) -> str | None:
        from gmtool.cli.when import check_window, parse_when

        if value is None:
            return None
        moment = parse_when(value, flag)
        # whichever of --since and --until is read second sees the other (click reads them
        # in the order they were typed)
        if flag == "--since":
            check_window(moment, ctx.params.get("until"))
        else:
            check_window(ctx.params.get("since"), moment)
        return moment

    return parse


SINCE_OPTION = typer.Option(
    None,
    "--since",
    callback=_moment("--since"),
    help="Started at or after: an ISO time (offset or Z allowed, "
    "UTC without), today, yesterday, or a span back: 2h, 3d.",
)
UNTIL_OPTION = typer.Option(
    None, "--until", callback=_moment("--until"), help="Started before: the same forms as --since."
)
LIMIT_HELP = "At most this many, newest first; 0 = all."
MAX_SPEED = 10_000.0  # the fastest time scale a host plays at (house run, demo)


def _finite(value: float | None) -> float | None:
    # typer's float range lets nan through (every comparison with nan is false) and, where a
    # side has no bound, inf: a host told to play for nan seconds never stops.
    if value is not None and not math.isfinite(value):
        raise typer.BadParameter(f"must be a finite number, not {value}.")
    return value


def number_option(
    default: float | None,
    *flags: str,
    min: float | None = None,
    max: float | None = None,
    help: str,
) -> Any:
    """A float option that refuses nan, inf and anything outside [min, max] with one usage
    message (exit 2) before the command runs: every float option of the CLI is one of these."""
    return typer.Option(default, *flags, min=min, max=max, callback=_finite, help=help)


def open_store(db: str | None, create: bool = False, write: bool = False, postgres: bool = False):
    """The store for reading (read-only: nothing is changed, not even the schema), or with
    `write` for writing (the file is checked; an older schema is refused: `db init`, the
    one command that `create`s, upgrades it). A PostgreSQL URL is refused (exit 2) but
    where the command runs on it (`postgres`)."""
    from gmtool.store.db import open_location

    return open_location(
        db, create=create, write=write or create, postgres=postgres, upgrade=create
    )


def with_store(db: str | None, action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """Open the store for reading, run `action(store, *args, **kwargs)`, close it: its result."""
    with open_store(db) as store, _edits_named(store):
        return action(store, *args, **kwargs)


@contextlib.contextmanager
def _edits_named(store: Any) -> Iterator[None]:
    """A reading command that stops on an error a row edited into a value of a type gmtool
    never writes explains (a blob, text in a number's column) says which rows, exit 1."""
    from gmtool.errors import GmtoolError

    try:
        yield
    except Exception as error:
        from gmtool.store.row_types import TYPE_ERRORS, damaged_by_edits

        if isinstance(error, GmtoolError) or not isinstance(error, TYPE_ERRORS):
            raise

        damaged = damaged_by_edits(store)
        if damaged is None:
            raise
        raise damaged from None


@contextlib.contextmanager
def reading_any(db: str | None) -> Iterator[Any]:
    """The store for a reading command that runs on PostgreSQL too; there, with the hosts'
    files read in `$GMTOOL_HOME` when it is set (their checkpoint verifier key and witness
    folders, found as beside a SQLite file: the same home the GM writes read)."""
    with open_store(db, postgres=True) as store, _edits_named(store):
        yield _at_home(store)


def with_any_store(db: str | None, action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`with_store` for a reading command that runs on PostgreSQL too (its repositories are
    tested on both backends: docs/architecture.md, "PostgreSQL: the state of this step")."""
    with reading_any(db) as store:
        return action(store, *args, **kwargs)


def writing(db: str | None, action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`with_store` for an action that writes (a GM command, an adjustment, a deployment):
    whatever it logged is covered by a signed checkpoint before it returns (ops/cover.py),
    signed by the host's key or the acting GM's (the `Gm` among `args`)."""
    return _writing(db, False, action, *args, **kwargs)


def writing_any(db: str | None, action: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """`writing` for an action that runs on PostgreSQL too. There the store has no file
    to keep its hosts' files beside: the console reads them in the hosts' home folder,
    `$GMTOOL_HOME` (the checkpoint key that covers the write, else its .pub, which checks
    the hosts' checkpoints while the acting GM's key covers it)."""
    return _writing(db, True, action, *args, **kwargs)


def _writing(
    db: str | None, postgres: bool, action: Callable[..., T], *args: Any, **kwargs: Any
) -> T:
    from gmtool.evidence.request import Gm
    from gmtool.ops.cover import covering

    actor = next((arg for arg in args if isinstance(arg, Gm)), None)
    change = getattr(action, "changes_witnesses", False)  # (ops/witnesses.py)
    with (
        open_store(db, write=True, postgres=postgres) as store,
        covering(_at_home(store), actor, console.warning, witness_change=change),
    ):
        return action(store, *args, **kwargs)


def _at_home(store: Any) -> Any:
    """A PostgreSQL store given its hosts' home folder, `$GMTOOL_HOME` if set (a write the
    store's witnesses must cover is refused without it: ops/cover.py), or a usage error."""
    from gmtool.errors import UsageError

    home = os.environ.get("GMTOOL_HOME", "").strip()
    if not getattr(store, "is_postgres", False) or not home:
        return store
    if not Path(home).is_dir():
        raise UsageError(f"$GMTOOL_HOME: {home} is not a folder (the hosts' home folder)")
    store.at_home(Path(home).resolve())
    return store


def write_output(path: Path, text: str, flag: str, example: str) -> None:
    """`text` into the file a user named with `flag`, whole or not at all (a temporary file
    beside it, then a rename; a device such as /dev/stdout is written as it is). A folder,
    a missing folder or a file that cannot be written is one plain message (exit 2);
    `example` is a file name to suggest inside a folder."""
    import stat
    import tempfile

    from gmtool.errors import UsageError

    if str(path) == "." or not str(path).strip():
        raise UsageError(
            f"{flag} is blank or names this folder: name the file to write ({example})"
        )
    if path.is_dir():
        raise UsageError(f"{flag} {path} is a folder: name the file to write ({path / example})")
    if path.is_symlink():  # written through, never replaced by a file of its own
        target = Path(os.path.realpath(path))
        if not target.exists():
            raise UsageError(f"{flag} {path} is a symbolic link to nothing ({target})")
        path = target
    try:
        if path.exists() and not stat.S_ISREG(path.stat().st_mode):
            with open(path, "w", encoding="utf-8") as device:
                device.write(text)
            return
        mode = path.stat().st_mode & 0o7777 if path.exists() else 0o666 & ~_umask()
        fd, temporary = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
        try:
            with os.fdopen(fd, "w", encoding="utf-8", newline="") as handle:
                handle.write(text)
            os.chmod(temporary, mode)  # (mkstemp makes it 0600)
            os.replace(temporary, path)
        except BaseException:
            os.unlink(temporary)
            raise
    except FileNotFoundError:
        raise UsageError(f"{flag} {path}: there is no folder {path.parent}") from None
    except OSError as error:
        raise UsageError(f"{flag} {path}: cannot write it ({error.strerror or error})") from None


def _umask() -> int:
    mask = os.umask(0o022)
    os.umask(mask)
    return mask


def emit(value: Any, as_json: bool, render: Callable[[Any], None]) -> None:
    """Print `value` as JSON, or hand it to `render` for text."""
    if as_json:
        console.json(value)
    else:
        render(value)


def acting_name(name: str | None) -> str:
    """`--as`, else $GMTOOL_USER, else the login name; a blank one given is refused."""
    if name is not None:
        if not name.strip():
            from gmtool.errors import UsageError

            raise UsageError("the GM name given is blank: give your GM user name")
        return name
    if os.environ.get("GMTOOL_USER"):
        return os.environ["GMTOOL_USER"]
    try:
        return getpass.getuser()
    except (KeyError, OSError):
        return "unknown"


def acting_user(name: str | None):
    """The acting GM (`acting_name`) with their private key where they have one here: the
    name selects the key; only the signature, checked against the key an operator
    registered for that name, proves anything."""
    from gmtool.errors import UsageError
    from gmtool.evidence.gm_keys import load_key
    from gmtool.evidence.request import Gm

    name = acting_name(name)
    try:
        return Gm(name, load_key(name))
    except UsageError:
        return Gm(name)  # a name no key can have: refused (and logged) as it stands
