"""`gmtool deploy`: make a profile's compiled rules active; history and rollback (G4, G5)."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.core import TyperGroup

from gmtool.cli.common import (
    AS_OPTION,
    DB_OPTION,
    JSON_OPTION,
    acting_user,
    emit,
    with_any_store,
    with_store,
    writing_any,
)
from gmtool.cli.console import console


class _DeployGroup(TyperGroup):
    """`gmtool deploy PROFILE` deploys; `deploy history` and `deploy rollback` are commands."""

    def parse_args(self, ctx, args):  # noqa: ANN001 - click's signature
        if (
            args
            and args[0] not in ("-h", "--help")
            and not set(args) & (set(self.commands) - {"profile"})
        ):  # `deploy [OPTIONS] PROFILE [OPTIONS]`
            args = ["profile", *args]
        return super().parse_args(ctx, args)


app = typer.Typer(
    cls=_DeployGroup,
    no_args_is_help=True,
    rich_markup_mode=None,
    help="Deploy a rule profile: `gmtool deploy PROFILE [--rooms ID]`; "
    "see also `deploy apply`, `deploy history` and `deploy rollback`.",
)


@app.command("profile", hidden=True)
def deploy(
    profile: Path = typer.Argument(..., help="The profile to deploy."),
    rooms: list[str] | None = typer.Option(None, "--rooms", help="Only these tiers (repeat)."),
    dry_run: bool = typer.Option(
        False,
        "--dry-run",
        "--plan",
        help="Show what would change for players, then anything that would refuse the "
        "deployment (exit 1, or 2 for a room the profile lacks); change nothing.",
    ),
    plan_out: Path | None = typer.Option(
        None,
        "--plan-out",
        metavar="FILE",
        help="Write the plan, signed with your GM key, to FILE and change nothing; "
        "`gmtool deploy apply FILE` deploys exactly that plan later.",
    ),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Compile PROFILE and make it active; tables switch at their next hand (G5)."""
    from gmtool.ops.deploy import deploy_profile, plan_deployment
    from gmtool.ops.deploy_plan import save_plan

    if plan_out is not None or dry_run:
        if plan_out is not None:
            plan = with_store(db, save_plan, profile, rooms or None, acting_user(as_user), plan_out)
        else:
            plan = with_store(db, plan_deployment, profile, rooms or None, acting_user(as_user))
        emit(plan, as_json, _render_planned)
        _stop_if_blocked(plan, "; no plan was written" if plan_out is not None else "")
        return
    result = writing_any(db, deploy_profile, profile, rooms or None, acting_user(as_user))
    emit(result, as_json, _render_deployment)


@app.command()
def apply(
    plan_file: Path = typer.Argument(
        ..., metavar="FILE", help="A plan that `gmtool deploy PROFILE --plan-out FILE` wrote."
    ),
    db: str | None = DB_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Deploy exactly the saved plan FILE, as its GM signed it; refuse (exit 1) if it was
    altered, is not an operator's, or the store moved since it was made."""
    from gmtool.ops.deploy_plan import apply_plan

    emit(writing_any(db, apply_plan, plan_file), as_json, _render_deployment)


def _render_planned(plan: dict) -> None:
    _render_plan(plan, "would change", "nothing would change")
    if plan.get("plan_file"):
        console.success(
            f"plan written to {plan['plan_file']}, signed; `gmtool deploy apply "
            f"{plan['plan_file']}` deploys exactly this, unless the store moves meanwhile"
        )


def _stop_if_blocked(plan: dict, note: str) -> None:
    """After the plan: every blocker, one line each, and the first one's exit code."""
    for number, blocker in enumerate(plan["blockers"], start=1):
        last = number == len(plan["blockers"])
        console.error(f"blocked: {blocker['message']}" + (note if last else ""))
    if plan["blockers"]:
        raise typer.Exit(plan["blockers"][0]["exit_code"])


def _render_plan(plan: dict, verb: str, nothing: str) -> None:
    for warning in plan["warnings"]:
        console.diagnostic(warning)
    head = f"{plan['profile']} v{plan['version']} (config {plan['config_id'][:12]})"
    if not plan["changes"]:
        if plan.get("planned_rooms", True):
            console.line(f"{head} is already live in every room named: {nothing}")
        return
    console.line(f"{head} {verb}, at each table's next hand:")
    for change in plan["changes"]:
        live = f"live now {change['live'][:12]}" if change["live"] else "nothing live"
        console.line(f"  rooms {', '.join(change['rooms'])} ({live}):")
        console.lines(
            f"    {line}"
            for line in change["changes"] or ["no change for players (names or metadata)"]
        )


def _render_deployment(result: dict) -> None:
    if result["unchanged"]:
        _render_plan(result, "", "nothing deployed")
        return
    _render_plan(result, "deployed", "")
    console.success(
        f"deployed {result['profile']} v{result['version']} to "
        f"{', '.join(result['rooms']) if result['rooms'] else 'every room'}; "
        "tables switch at their next hand"
    )


@app.command()
def history(
    profile: str | None = typer.Option(None, "--profile", help="Only this profile id."),
    db: str | None = DB_OPTION,
    as_json: bool = JSON_OPTION,
) -> None:
    """Every deployment: what, which rooms, who, when, and whether it is active."""
    from gmtool.store.configs import history as deployment_history

    emit(with_any_store(db, deployment_history, profile), as_json, _render_history)


def _render_history(rows: list[dict]) -> None:
    from gmtool.cli.formats import moment

    console.table(
        "deployments (in effect: the rules tables play now; other active rows are "
        "what `deploy rollback` returns to)",
        ["id", "profile", "version", "config", "rooms", "by", "at", "in effect", "note"],
        [
            (
                r["id"],
                r["profile_id"],
                r["version"],
                r["config_id"][:12],
                ", ".join(r["rooms"]) if r["rooms"] else "all",
                r["deployed_by"],
                moment(r["deployed_at"]),
                "yes" if r["in_effect"] else ("rollback target" if r["active"] else "no"),
                r["note"] or "",
            )
            for r in rows
        ],
        right_align=(0, 2),
        keep=("id", "profile", "config", "by"),
    )


@app.command()
def rollback(
    profile: str = typer.Argument(..., help="The profile to roll back: its id, or its file."),
    db: str | None = DB_OPTION,
    as_user: str | None = AS_OPTION,
) -> None:
    """Retire the newest deployment of PROFILE; the one before it applies at the next hand."""
    from gmtool.ops.deploy import rollback_profile

    result = writing_any(db, rollback_profile, profile, acting_user(as_user))
    console.success(
        f"{profile}: rolled back {result['rolled_back'][:12]}; active again: "
        f"{result['active'][:12]} (tables switch at their next hand)"
    )
