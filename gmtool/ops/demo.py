"""`gmtool demo`: a fresh store, every shipped profile deployed, tables of every system.

The demo database is the demo's own, marked as such when it is made: a demo store at
the demo path is replaced (with its key file), never merged into, so every run starts
from the same state. Any other file there (a real store, another application's
database, a text file) is refused and left as it is.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from gmtool.evidence import witness
from gmtool.evidence.gm_keys import new_key
from gmtool.evidence.request import Gm
from gmtool.ops.deploy import deploy_profile
from gmtool.ops.gm import bootstrap
from gmtool.store.db import (
    Store,
    StoreError,
    connect,
    demo_store_problem,
    ensure_unused,
    mark_demo,
)

DEMO_DB = "gmtool-demo.db"
SHIPPED = ("lequ-showhand", "qq-showhand", "video-showhand", "straight-flush", "suihua-three-card")


def rules_dir() -> Path:
    """The shipped profiles: the repository's rules/ (next to the package), else ./rules."""
    for candidate in (Path(__file__).resolve().parents[2] / "rules", Path.cwd() / "rules"):
        if all((candidate / f"{name}.toml").is_file() for name in SHIPPED):
            return candidate
    raise StoreError(
        "cannot find the shipped profiles (rules/*.toml): run the demo from the "
        "gmtool repository, where `pip install -e .` was run"
    )


def fresh_store(path: Path) -> Store:
    """A new demo store at `path`: an earlier demo store there (with its WAL and key) is
    replaced; anything else at `path` is refused (StoreError, exit 2) and left alone."""
    if path.exists() or path.is_symlink():
        why = demo_store_problem(path)
        if why:
            raise StoreError(
                f"{path} {why}: the demo only creates a new store or replaces "
                "its own; choose another --db path (or move the file away)"
            )
        ensure_unused(path)  # no other process may be writing what is about to go
        for suffix in ("", "-wal", "-shm", ".key", ".checkpoint.key", ".checkpoint.pub"):
            path.with_name(path.name + suffix).unlink(missing_ok=True)
        for old in (witness.witness_dir(path), gm_key_dir(path)):  # the old demo's own
            if old.is_dir() and not old.is_symlink():
                shutil.rmtree(old)
    store = connect(path, create=True)
    mark_demo(store)
    return store


def gm_key_dir(path: Path) -> Path:
    """The demo GM's key folder, beside the demo store (a real GM's is their own)."""
    return path.with_name(path.name + ".gm-keys")


def demo_operator(store: Store, name: str = "demo") -> Gm:
    """The demo's GM: a key made in the demo's own folder, registered as first operator."""
    signer, _ = new_key(name, gm_key_dir(Path(store.path)), replace=True)
    gm = Gm(name, signer)
    bootstrap(store, gm)
    return gm


def deploy_shipped(store: Store, by: Gm) -> list[dict]:
    folder = rules_dir()
    return [deploy_profile(store, folder / f"{name}.toml", None, by) for name in SHIPPED]


def demo_table_plan(store: Store) -> list[tuple[str, str, str]]:
    """One table per open room of every system, up to two per system."""
    from gmtool.store.configs import active_config_id, latest_config_id, load_config

    plan = []
    for name in SHIPPED:
        config = load_config(store, latest_config_id(store, name))
        open_rooms = [t["id"] for t in config["tiers"] if t["enabled"]]
        for tier in open_rooms[:2]:
            plan.append(
                (name, tier, load_config(store, active_config_id(store, name, tier))["game"])
            )
    return plan
