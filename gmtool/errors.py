"""The errors gmtool reports to its users: one hierarchy, each error carrying its exit code.

The command line's contract (docs/architecture.md): exit 0 = fine, 1 = a finding (an
invalid profile, a refused action, an audit problem), 2 = usage or environment (a bad
value, an unknown name, a store that cannot be used). Every layer raises these (the
module is pure: no I/O, importable by the engine); the command line turns them into one
message and the exit code in exactly one place (`gmtool/cli/errors.py`).
"""

from __future__ import annotations


class GmtoolError(Exception):
    """Something to tell the user in one message; `exit_code` says what kind of thing."""

    exit_code = 2


class UsageError(GmtoolError):
    """Input that cannot be used as given: a value, a file, a flag (exit 2)."""


class NotFound(UsageError):
    """A player, table, hand, config or room that does not exist (exit 2)."""


class Unavailable(GmtoolError):
    """The environment is not ready: a store that cannot be used, no host answering (exit 2)."""


class FindingError(GmtoolError):
    """Something is wrong with what was checked or asked for (exit 1)."""

    exit_code = 1


class Refused(FindingError):
    """A rule, a role or a check refused the action; nothing changed (exit 1)."""


class Damaged(FindingError):
    """A row of the store is not what gmtool writes (edited by hand or by an attacker): the
    command stops with what and where; `gmtool audit` says what else changed (exit 1)."""
