"""GM actions from the console, with roles: who may do what, and a log entry for every attempt.

Roles (issue: GM console): support may read, replay and audit; only operators may kick,
close tables, adjust coins, deploy and roll back, and manage GM users. Reading needs no
role (whoever can open the database file can read it; file permissions guard that).
Every privileged action is a request the GM signs with their own key (evidence/request.py);
it is carried out only when the signature holds for the key an operator registered for
that GM, who must be an operator, and it is logged with the action. Bootstrap: `gmtool db
init` registers the first operator's key, once; after that only operators register GMs
and their keys. A refusal is itself logged.
"""

from __future__ import annotations

from gmtool.bounds import MAX_BALANCE, MAX_TEXT, composed, unsafe_characters
from gmtool.errors import GmtoolError, NotFound, Refused, UsageError
from gmtool.evidence import request as requests
from gmtool.evidence.gm_keys import check_name, key_dir
from gmtool.evidence.note import NoteError, Verifier
from gmtool.evidence.request import PRIVILEGED, Gm
from gmtool.store import gm, ledger, log_append, log_history
from gmtool.store import hands as hand_store
from gmtool.store.db import Store
from gmtool.store.gm import failure


def authorize(
    store: Store,
    actor: Gm,
    action: str,
    target: str | None,
    reason: str | None = None,
    args: dict | None = None,
) -> str | None:
    """The GM's signed request for `action`, once it shows they may perform it; Refused
    (after logging the refusal, with the request) otherwise. Reading needs no request.

    A fresh store with no operator yet is being set up by whoever holds the file: deploy
    and rollback then need no key (signed all the same where the GM has one); the first
    operator is registered by `gmtool db init`, never by `gm users add`.
    """
    if action not in PRIVILEGED:
        return None
    if not gm.has_operator(store):
        if action in ("deploy", "rollback"):
            return (
                sign_request(store, actor, action, target, reason, args or {})
                if actor.signer
                else None
            )
        if action == "users_add":
            raise UsageError(
                "this store has no operator yet: `gmtool db init --as NAME` "
                "registers the first one, with NAME's key"
            )
    request = sign_request(store, actor, action, target, reason, args or {})
    why = gm.request_problem(store, request, actor.name, action, target, reason, args or {})
    if why is None:
        return request
    with store.write():
        gm.log_action(
            store, actor.name, action, target, reason, {"ok": False, "refused": why}, request
        )
    raise Refused(f"refused: {why} (logged)")


def sign_request(
    store: Store, actor: Gm, action: str, target: str | None, reason: str | None, args: dict
) -> str:
    """`actor`'s signed request; UsageError when they have no key here."""
    if actor.signer is None:
        check_name(actor.name)  # a name no key can have: said so, not "make one"
        raise UsageError(
            f"no GM key for {actor.name} in {key_dir()}: make one with `gmtool gm "
            f"keys new {actor.name}` and have an operator register it (or pick "
            "your key with --as)"
        )
    return requests.make(
        actor,
        log_append.store_id(store),
        action,
        target,
        reason,
        args,
        store.now(),
        log_history.now(store),
    )


def signed_here(store: Store, actor: Gm, request: str | None) -> str | None:
    """`request` (which `authorize` accepted) signed again inside the caller's write
    transaction, bound to the log as that transaction finds it: the action it logs is then
    the log's next record, and the audit holds it to that (a request signed on a copy of
    the store cannot be carried out on the original, even one the copy had not yet left)."""
    if request is None:
        return None
    fields = requests.fields_of(request)
    return sign_request(
        store, actor, fields["action"], fields["target"], fields["reason"], fields["args"]
    )


def log(
    store: Store,
    actor: str | None,
    action: str,
    target: str | None,
    reason: str | None,
    outcome: dict,
    request: str | None = None,
) -> int:
    with store.write():
        return gm.log_action(store, actor, action, target, reason, outcome, request)


def text(value: str | None, what: str, required: bool = True) -> str | None:
    """A GM user name or a reason as the log will keep it: not blank (when `required`), no
    control, bidirectional or invisible characters (`bounds.unsafe_characters`), at most
    MAX_TEXT characters. UsageError otherwise."""
    if value is None or not value.strip():
        if required:
            raise UsageError(f"{what} may not be empty")
        return None
    unsafe = unsafe_characters(value)
    if unsafe:
        raise UsageError(
            f"{what} {value!r} contains control, bidirectional or invisible characters "
            f"({', '.join(unsafe)}): type it without them"
        )
    if len(value) > MAX_TEXT:
        raise UsageError(f"{what} is {len(value)} characters long; at most {MAX_TEXT}")
    return value.strip()


def plain_name(value: str, what: str) -> str:
    """A player or table named in a GM command, as the log will keep it: UsageError when it
    holds a control, bidirectional or invisible character (no such player or table exists:
    gmtool never makes one, and the GM log never keeps a disguised name); in composed
    form (NFC), as every name gmtool makes is."""
    unsafe = unsafe_characters(value)
    if unsafe:
        raise UsageError(
            f"{what} {value!r} contains control, bidirectional or invisible characters "
            f"({', '.join(unsafe)})"
        )
    return composed(value)  # typed decomposed, it names the player who looks the same


def add_user(store: Store, actor: Gm, name: str, role: str, key: str | None = None) -> bool:
    """Register GM `name` with `role` and, for a new GM, their verifier `key` (`gmtool gm keys
    new` prints it); False when nothing changed."""
    name = text(name, "a GM user name")
    if role not in gm.ROLES:
        raise UsageError(f"unknown role {role!r}; use {' or '.join(gm.ROLES)}")
    key = verifier_key(name, key) if key is not None else None
    args = {"role": role, "key": key}
    request = authorize(store, actor, "users_add", name, None, args)
    if key is None and gm.registered_key(store, name) is None:
        raise UsageError(
            f"{name} has no key yet: give theirs with --key (they make it with "
            f"`gmtool gm keys new {name}`)"
        )
    try:
        with store.write():
            request = signed_here(store, actor, request)
            changed = gm.add_user(store, name, role, key)
            if changed:
                gm.log_action(
                    store, actor.name, "users_add", name, None, {"ok": True, **args}, request
                )
    except Refused as refused:
        log(store, actor.name, "users_add", name, None, {**failure(refused), **args}, request)
        raise
    return changed


def verifier_key(name: str, text_: str) -> str:
    """The verifier key `text_` in its canonical text, once it is an Ed25519 key named `name`."""
    try:
        verifier = Verifier.parse(text_)
    except NoteError as error:
        raise UsageError(
            f"--key: {error} (give the line `gmtool gm keys new {name}` printed)"
        ) from None
    if verifier.name != name:
        raise UsageError(f"--key is {verifier.name}'s key, not {name}'s")
    return verifier.text()


def bootstrap(store: Store, actor: Gm) -> bool:
    """Register `actor` as the store's first operator, with their key: once, while no GM
    user has a key (a new store, or one from before GM keys). False when that is done."""
    if actor.signer is None:
        check_name(actor.name)  # a name no key can have: said so, not "make one"
        raise UsageError(f"no GM key for {actor.name}")
    key = actor.signer.verifier.text()
    args = {"role": "operator", "key": key, "bootstrap": True}
    with store.write(durable=True):
        if gm.has_keys(store):
            return False
        request = sign_request(store, actor, "users_add", actor.name, None, args)
        gm.add_user(store, actor.name, "operator", key)
        gm.log_action(
            store, actor.name, "users_add", actor.name, None, {"ok": True, **args}, request
        )
    return True


def adjust(store: Store, actor: Gm, player: str, delta: int, reason: str) -> dict:
    """A GM coin adjustment: one ledger row tied to the GM action that made it.

    A balance is never negative, now or when a hand settles: a deduction from a player
    seated in a running hand must leave them at least the coins they brought to it (the
    most that hand can take, D-9); deduct after the hand ends. Balances stay within
    MAX_BALANCE.
    """
    reason = text(reason, "the reason")
    player = plain_name(player, "the player")
    if delta == 0:
        raise UsageError("an adjustment of 0 changes nothing")
    request = authorize(store, actor, "adjust", player, reason, {"delta": delta})
    error: GmtoolError | None = None
    with store.write(durable=True):
        request = signed_here(store, actor, request)
        held = ledger.coins_or_none(store, player, to_move=True)
        stake = hand_store.at_stake(store, player) if held is not None else None
        if held is None:
            error = NotFound(f"no player {player!r}")
        elif held + delta < 0:
            error = Refused(
                f"{player} holds {held:,}; an adjustment of {delta:+,} would make it negative"
            )
        elif delta < 0 and stake and held + delta < stake[1]:
            error = Refused(
                f"{player} is in running hand {stake[0]} and could lose up to "
                f"{stake[1]:,} there; a deduction of {-delta:,} could leave a negative "
                "balance when it settles: deduct after the hand ends"
            )
        elif held + delta > MAX_BALANCE:
            error = Refused(
                f"{player} would hold {held + delta:,}, above the most a player may "
                f"hold ({MAX_BALANCE:,})"
            )
        outcome = (
            failure(error) if error else {"ok": True, "coins_before": held, "coins": held + delta}
        )
        action_id = gm.log_action(
            store, actor.name, "adjust", player, reason, {**outcome, "delta": delta}, request
        )
        if error is None:
            ledger.post(store, [(player, delta, "gm_adjust")], gm_action_id=action_id)
    if error is not None:
        raise error  # logged above, with the refusal
    return outcome
