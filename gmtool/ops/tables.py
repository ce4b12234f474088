"""Reopening a table a GM closed: the GM action the console carries out itself.

A close goes through the host, which voids the table's running hand; a closed table has
no host and no hand, so `gmtool tables open` needs none: the operator's signed request,
the table made hostable again (the next host start hosts it) and the GM action that logs
it are one transaction, checked by `gmtool audit` like every signed GM action.
"""

from __future__ import annotations

from gmtool.errors import GmtoolError, NotFound
from gmtool.evidence.request import Gm
from gmtool.ops.gm import authorize, signed_here, text
from gmtool.store import gm
from gmtool.store import tables as table_store
from gmtool.store.db import Store
from gmtool.store.gm import failure


def reopen(store: Store, actor: Gm, table_id: str, reason: str | None = None) -> dict:
    """Reopen closed table `table_id` (operators): `opened`, or `not_closed` (its status)
    when there was nothing to reopen (then nothing is logged)."""
    reason = text(reason, "the reason", required=False)
    request = authorize(store, actor, "open", table_id, reason)
    error: GmtoolError | None = None
    with store.write(durable=True):
        request = signed_here(store, actor, request)  # bound to the log as it is now
        state = table_store.status(store, table_id)
        if state is None:
            error = NotFound(f"no table {table_id!r} (see `gmtool tables list --closed`)")
            gm.log_action(store, actor.name, "open", table_id, reason, failure(error), request)
        elif state["status"] != "closed":
            return {"ok": True, "not_closed": state["status"], "table": table_id}
        else:
            table_store.reopen_table(store, table_id)
            outcome = {"ok": True, "opened": table_id}
            gm.log_action(store, actor.name, "open", table_id, reason, outcome, request)
    if error is not None:
        raise error  # logged above, with the request
    return outcome
