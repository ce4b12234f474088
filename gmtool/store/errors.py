"""The store's errors: what a command reports when the database cannot serve it."""

from __future__ import annotations

from gmtool.errors import NotFound, Unavailable


class StoreError(Unavailable):
    """The database cannot be opened or used (missing, corrupt, locked, newer schema)."""


class NoSuchRecord(StoreError, NotFound):
    """A hand, player, config, room or table the store does not hold (exit 2)."""


class StoreGone(StoreError):
    """The connection to the database server is lost (the server restarted or ended the
    session, the network failed): nothing more can be read or written through it."""
