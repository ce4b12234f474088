"""Which store a `--db` value (else `$GMTOOL_DB`, else `./gmtool.db`) names: a SQLite file
or a PostgreSQL database.

- `postgresql://user@host:port/dbname` (or `postgres://`): PostgreSQL, the URL handed to
  libpq as it is (so `?sslmode=`, `?host=/run/postgresql` and the `PG*` variables work);
  it must name its database: libpq would otherwise pick the user's own, and gmtool
  would make its schema in a database nobody meant;
- `sqlite:///PATH`: the SQLite file PATH, written as SQLAlchemy writes it: three slashes
  then the path, so `sqlite:///live.db` is relative and `sqlite:////srv/live.db` absolute;
- anything else: a file path, as before there were URLs.

A value that looks like another URL (`mysql://...`) is refused rather than taken for a
file name. A URL is only ever shown with its password masked (`redacted`).
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

from gmtool.errors import UsageError

DEFAULT_DB = "gmtool.db"
POSTGRES_SCHEMES = ("postgresql", "postgres")
_SCHEME = re.compile(r"^([A-Za-z][A-Za-z0-9+.-]*)://")


@dataclass(frozen=True)
class Location:
    """A store's place: a SQLite file (`path`) or a PostgreSQL database (`url`)."""

    path: Path | None = None
    url: str | None = None

    @property
    def is_postgres(self) -> bool:
        return self.url is not None

    def shown(self) -> str:
        """How messages name the store (a PostgreSQL URL without its password)."""
        return redacted(self.url) if self.url is not None else str(self.path)


def locate(db: str | None) -> Location:
    """`--db`, else `$GMTOOL_DB`, else `./gmtool.db`, as a Location; a blank `--db` is
    refused (an empty `$GMTOOL_DB` counts as unset, as shells have it)."""
    if db is not None and not db.strip():
        raise UsageError("--db is blank: name the database file (or a postgresql:// URL)")
    value = db or os.environ.get("GMTOOL_DB") or DEFAULT_DB
    scheme = _SCHEME.match(value)
    if scheme is None:
        return Location(path=_beside_its_files(Path(value)))
    name = scheme.group(1).lower()
    if name in POSTGRES_SCHEMES:
        if not _names_a_database(value):
            raise UsageError(
                f"{redacted(value)[:80]!r} names no database: give it, "
                "postgresql://USER@HOST/DBNAME (libpq's default, the user's own database, "
                "is never taken for a store)"
            )
        return Location(url=value)
    if name == "sqlite":
        if not value.startswith("sqlite:///") or value == "sqlite:///":
            raise UsageError(
                f"{value[:80]!r}: a SQLite URL is sqlite:///PATH (relative) or "
                "sqlite:////ABSOLUTE/PATH; or give the file path itself"
            )
        return Location(path=_beside_its_files(Path(value[len("sqlite:///") :])))
    raise UsageError(
        f"{redacted(value)[:80]!r}: gmtool stores are SQLite files (a path, or "
        "sqlite:///PATH) or PostgreSQL databases (postgresql://USER@HOST/DBNAME); "
        f"{name}:// is neither"
    )


def _beside_its_files(path: Path) -> Path:
    """A store named through a symbolic link is the file it points to: its keys, witness,
    lock and leases are beside the real file (`<db>.seed.key`...), never beside the link,
    where a second set would make the store's own evidence read as forged."""
    return Path(os.path.realpath(path)) if path.is_symlink() else path


def _names_a_database(url: str) -> bool:
    """Whether a PostgreSQL URL names its database (its path, or ?dbname=)."""
    try:
        parts = urlsplit(url)
    except ValueError:
        return True  # libpq says what is wrong with it
    return bool(parts.path.strip("/")) or "dbname=" in parts.query


def redacted(url: str) -> str:
    """`url` with its password, if it has one, replaced by ***."""
    try:
        parts = urlsplit(url)
        if parts.password is None:
            return url
        user = parts.username or ""
        host = parts.hostname or ""
        port = f":{parts.port}" if parts.port is not None else ""
        return urlunsplit(parts._replace(netloc=f"{user}:***@{host}{port}"))
    except ValueError:  # a port that is not a number: say nothing of what it holds
        return f"{url.split('://', 1)[0]}://***"
