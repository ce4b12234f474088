"""`gmtool audit`: every check on every selected hand, in one streaming pass per table.

Each table's events are read once, in chain order (`tables.TableAudit`): every link and
hash, and each hand as soon as its last event has passed (commitment, replay, zero-sum
settlement, ledger rows). Then the global checks (`GLOBAL_CHECKS`: coins against the
ledger, event row ids, chain names, the GM log's chain, ledger links, grants, the host's
signatures over opening balances, seeds, GM signatures, command fates, configs,
deployments, witnesses), players' tallies against their settled hands (in a full audit),
and the evidence log against the rows and the signed checkpoints.
Hands, events and ledger rows are streamed, so memory stays flat however many hands the
store holds.

With `jobs` the tables go to worker processes while this one checks the log and the
rest (`jobs.TablePasses`); the report is the same. With `base` (a signed checkpoint a
previous clean audit covered) only what the log recorded after it is checked
(`log_from.LogFrom`; docs/evidence.md says what that does and does not prove).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field

from gmtool.audit.chain import verify_chain_names, verify_event_ids, verify_gm_log
from gmtool.audit.coins import verify_balances, verify_grants, verify_ledger_links
from gmtool.audit.commands import verify_command_fates
from gmtool.audit.configs import verify_configs
from gmtool.audit.deployments import verify_deployments
from gmtool.audit.jobs import TablePasses
from gmtool.audit.log_check import LogCheck, checkpoint_problems
from gmtool.audit.log_from import LogFrom
from gmtool.audit.openings import verify_openings
from gmtool.audit.scope import Scope, Window
from gmtool.audit.seeds import verify_seeds
from gmtool.audit.signatures import verify_signatures
from gmtool.audit.tallies import verify_tallies
from gmtool.audit.witnesses import verify_witnesses
from gmtool.errors import GmtoolError, UsageError
from gmtool.evidence.note import Checkpoint, Verifier
from gmtool.findings import Finding, finding_of
from gmtool.store import scan
from gmtool.store.db import Store, undecodable
from gmtool.store.queries import check_names
from gmtool.store.row_types import TYPE_ERRORS, mistyped_rows


@dataclass
class AuditReport:
    """What `gmtool audit` reports (a `gmtool.findings.Report`): the hands checked, every
    problem (kept as its JSON: table passes in other processes send them so), and the
    checkpoint the log was checked against."""

    hands_checked: int = 0
    problems: list[dict] = field(default_factory=list)
    checkpoint: dict | None = None  # the newest signed checkpoint the log was checked against
    incremental: dict | None = None  # an audit from a checkpoint: which, at what size
    window: dict | None = None  # an audit of a time window: its --since and --until
    witnesses: list[dict] | None = None  # the served witnesses' answers (ops/witness_audit.py)
    extended: set[str] = field(default_factory=set)  # checkpoints the log extends (not JSON)
    tool = "gmtool audit"
    artifact: str | None = None  # the store's file

    def add(self, problem: Finding | dict) -> None:
        self.problems.append(problem.as_json() if isinstance(problem, Finding) else problem)

    @property
    def findings(self) -> list[Finding]:
        return [finding_of(problem) for problem in self.problems]

    def lines(self) -> Iterator[str]:
        return (str(finding) for finding in self.findings)

    def summary(self, strict: bool = False) -> str:
        """ "N hand(s) checked: ok; the log (R records) extends the checkpoint signed at S"."""
        verdict = "ok" if not self.problems else f"{len(self.problems)} problem(s)"
        if self.checkpoint:
            signed = self.checkpoint
            held = f" in {signed['witness']}" if signed.get("witness") else ""
            against = f"the checkpoint signed at {signed['size']} ({signed['file']}{held})"
            if self.extends_checkpoint:
                verdict += f"; the log ({signed['records']} records) extends {against}"
            else:  # a rollback, a rewrite or a bad signature: never claimed to extend it
                verdict += (
                    f"; the log ({signed['records']} records) does NOT extend {against}: "
                    "see the checkpoint problem(s) above"
                )
        if self.witnesses:
            agree = sum(1 for w in self.witnesses if w["status"] == "agrees")
            verdict += f"; {agree} of {len(self.witnesses)} served witness(es) agree"
        after = self.incremental
        since = f" after the checkpoint at {after['size']} ({after['from']})" if after else ""
        if self.window:
            since = (
                f" in the window {self.window['since'] or 'from the first'} to "
                f"{self.window['until'] or 'now'}"
            )
        return f"{self.hands_checked} hand(s) checked{since}: {verdict}"

    @property
    def extends_checkpoint(self) -> bool:
        """Whether the log extends every checkpoint checked: no checkpoint finding (a
        rollback, a rewrite, a checkpoint whose signature does not hold) and no served
        witness that holds another history."""
        return not any(
            str(p.get("kind", "")).startswith("checkpoint") or p.get("kind") == "witness_disagrees"
            for p in self.problems
        )

    def exit_code(self, strict: bool = False) -> int:
        return 1 if self.problems else 0

    def as_json(self) -> dict:
        out = {"hands_checked": self.hands_checked, "problems": self.problems}
        if self.incremental is not None:
            out["incremental"] = self.incremental
        if self.window is not None:
            out["window"] = self.window
        if self.checkpoint is not None:
            out["checkpoint"] = {**self.checkpoint, "extended": self.extends_checkpoint}
        if self.witnesses is not None:
            out["witnesses"] = self.witnesses
        return out


def _within(store: Store, window: Window | None, problems: list) -> list:
    """The problems (findings or their JSON) about what lies in `window` (all without one)."""
    if window is None:
        return problems
    return [problem for problem in problems if window.covers(store, finding_of(problem))]


# -- the global checks: each (store, scope) -> problems, run in this order ------------------
# A check that is cheap over the whole store ignores `scope.after` and so stays global in an
# audit from a checkpoint; the others take up where the checkpoint left them.


def _balances(store: Store, scope: Scope) -> Iterable[Finding]:
    if scope.window is not None:
        return ()  # a balance is the sum of every ledger row ever: no window holds it
    return verify_balances(store, scope.player)  # one aggregate over the ledger: global


def _gm_log(store: Store, scope: Scope) -> Iterable[Finding]:
    after = scope.after
    return (
        verify_gm_log(store)
        if after is None
        else verify_gm_log(store, (after.gm_action - 1, after.gm_head))
    )


def _ledger_links(store: Store, scope: Scope) -> Iterable[Finding]:
    return verify_ledger_links(store, scope.after.ledger if scope.after else 1)


def _grants(store: Store, scope: Scope) -> Iterable[Finding]:
    after = scope.after
    return (
        verify_grants(store)
        if after is None
        else verify_grants(store, after.ledger, after.gm_action)
    )


def _openings(store: Store, scope: Scope) -> Iterable[Finding]:
    return verify_openings(store, scope.host_key, scope.after.ledger if scope.after else 1)


def _seeds(store: Store, scope: Scope) -> Iterable[Finding]:
    after = scope.after
    return verify_seeds(
        store,
        scope.seed_key,
        None if after is None else (after.hand, list(after.ended)),
        host_key=scope.host_key,
    )


def _configs(store: Store, scope: Scope) -> Iterable[Finding]:
    return verify_configs(store)  # a handful of rows: global


def _signatures(store: Store, scope: Scope) -> Iterable[Finding]:
    return verify_signatures(store)  # the GM records only (a few per GM action): global


def _commands(store: Store, scope: Scope) -> Iterable[Finding]:
    return verify_command_fates(store)  # a row per GM command: global


def _deployments(store: Store, scope: Scope) -> Iterable[Finding]:
    return verify_deployments(store)  # a row per deploy or rollback: global


def _witnesses(store: Store, scope: Scope) -> Iterable[Finding]:
    return verify_witnesses(store)  # a row per change of witness: global


def _event_ids(store: Store, scope: Scope) -> Iterable[Finding]:
    return verify_event_ids(store)  # one aggregate over the events' ids: global


def _chain_names(store: Store, scope: Scope) -> Iterable[Finding]:
    return verify_chain_names(store)  # a row per table: global


GLOBAL_CHECKS: list[Callable[[Store, Scope], Iterable[Finding]]] = [
    _balances,
    _event_ids,
    _chain_names,
    _gm_log,
    _ledger_links,
    _grants,
    _openings,
    _seeds,
    _signatures,
    _commands,
    _configs,
    _deployments,
    _witnesses,
]


def run_audit(
    store: Store,
    since: str | None = None,
    until: str | None = None,
    table: str | None = None,
    player: str | None = None,
    progress: Callable[[int], None] | None = None,
    checkpoints: list[tuple[str, Checkpoint]] = (),
    origin: str = "",
    seed_key: bytes | None = None,
    jobs: int = 1,
    base: tuple[str, Checkpoint] | None = None,
    host_key: Verifier | None = None,
) -> AuditReport:
    """Every check; with `checkpoints` (name, signed checkpoint whose signature the
    caller verified), also that the log extends each of them; with the host's
    `seed_key`, that every seed is the one it derives; with its verifier `host_key`, that
    it signed every opening balance; with `jobs`, tables in that many processes; with
    `base` (name, signed checkpoint), only what came after it.

    The store is read in a strict snapshot (text as SQLite decodes it, the fast way); one
    that holds text that is not UTF-8 (edited in) is audited again in a lenient one, which
    reads it with its bad bytes kept, to be reported: the report is that audit's."""
    check_names(store, table, player)
    selection = (since, until, table, player)
    if base is not None and any(selection):
        raise UsageError(
            "an audit from a checkpoint covers everything after it: it takes "
            "no --since, --until, --table or --player"
        )
    args = (store, selection, checkpoints, origin, seed_key, jobs, base, host_key)
    told = 0

    def monotone(count: int) -> None:  # (the second audit counts again from 0)
        nonlocal told
        if count > told:
            told = count
            progress(count)

    try:
        try:
            return _audit(*args, monotone if progress else None, strict=True)
        except Exception as error:
            if not undecodable(error):
                raise
        return _audit(*args, monotone if progress else None, strict=False)
    except Exception as error:
        if isinstance(error, GmtoolError) or not isinstance(error, TYPE_ERRORS):
            raise
        stopped = stopped_by_edits(store)
        if stopped is None:  # no edited row explains it: gmtool's own error, not hidden
            raise
        report = AuditReport()
        for finding in stopped:
            report.add(finding)
        return report


def stopped_by_edits(store: Store) -> list[Finding] | None:
    """After a check stopped on an error: the rows that hold a value of a type gmtool never
    writes (a blob in a text column, text in an integer one), which stopped it, and a
    finding that says the rest was not checked; None when there are none."""
    rows = mistyped_rows(store)
    if not rows:
        return None
    findings = [
        Finding(
            "row_type",
            f"{row.table} row {row.key}: {row.column} holds {row.found}, which gmtool never "
            f"writes there (its column is {row.declared}): edited",
        )
        for row in rows
    ]
    findings.append(
        Finding(
            "audit_stopped",
            "the checks stopped on the edited row(s) above and the rest of the store was not "
            "checked: restore those rows (from a backup) and audit again",
        )
    )
    return findings


def _audit(
    store: Store,
    selection: tuple,
    checkpoints: Iterable[tuple[str, Checkpoint]],
    origin: str,
    seed_key: bytes | None,
    jobs: int,
    base: tuple[str, Checkpoint] | None,
    host_key: Verifier | None,
    progress: Callable[[int], None] | None,
    strict: bool,
) -> AuditReport:
    since, until, _, player = selection
    report = AuditReport()
    checkpoints = list(checkpoints)
    with store.snapshot(strict), TablePasses(store, jobs, progress, strict) as passes:
        log = LogCheck(store) if base is None else LogFrom(store, base)
        starts: dict[str, int] = {}
        if base is not None:
            report.incremental = {"from": base[0], "size": base[1].size}
            stop = log.anchor(origin)
            if stop:
                for problem in stop:
                    report.add(problem)
                return report
            checkpoints = [item for item in checkpoints if item[1].size >= base[1].size]
        tables = scan.audit_tables(store, *selection)
        if base is not None:
            starts = log.table_starts(tables)
        # A full audit holds tallies to the hands settled in this snapshot: a table's hands
        # settle in order, so up to its last settled one here, whenever a worker reads it.
        tally = base is None and not any(selection)
        settled = scan.last_settled_hands(store) if tally else {}
        passes.start(
            [(t, starts.get(t), settled.get(t, 0)) for t in tables],
            selection,
            scan.table_sizes(store),
        )
        log_problems = log.run({c.size for _, c in checkpoints})
        window = Window(since, until) if since or until else None
        scope = Scope(player, seed_key, log.after, host_key, window)
        global_problems = [problem for check in GLOBAL_CHECKS for problem in check(store, scope)]
        tallies: Counter = Counter()
        untallied: set[str] = set()
        for result in passes.results():
            report.problems += _within(store, window, result.problems)
            report.hands_checked += result.hands_checked
            tallies.update(result.tallies)
            untallied |= result.untallied
        if tally:  # every settled hand was replayed
            global_problems += verify_tallies(store, tallies, untallied)
        if progress:
            progress(report.hands_checked)
        for problem in (
            *_within(store, window, [*global_problems, *log_problems]),
            *checkpoint_problems(log, checkpoints, origin),
        ):
            report.add(problem)
        report.extended = {
            name
            for name, signed in checkpoints
            if signed.origin == origin
            and signed.size <= log.frontier.size
            and log.roots.get(signed.size) == signed.root
        }
        if window is not None:
            report.window = {"since": since, "until": until}
        if base is not None:
            report.incremental["records"] = log.frontier.size
            checkpoints = checkpoints or [base]
        if checkpoints:
            name, newest = max(checkpoints, key=lambda item: item[1].size)
            report.checkpoint = {"file": name, "size": newest.size, "records": log.frontier.size}
    return report
