"""What a host is asked to do (`house run`'s options) and what it reports when it stops."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass
class HostOptions:
    tables: int = 4
    systems: list[str] | None = None  # profile ids; None = every deployed profile
    speed: float = 1.0
    hands: int | None = None
    duration: float | None = None
    chaos: float = 0.0
    seed: str | None = None
    bots: int | None = None
    grace: float = 10.0
    verbose: bool = False  # a line for every hand that starts, settles or is voided
    witness: str | None = None  # the checkpoint folder (default `<db>.witness/`)
    checkpoint_every: float = 1.0  # the most seconds an append waits for a checkpoint
    tick: float = 0.1  # seconds between the main loop's rounds (heartbeat, stop, checkpoint)
    listen: str | None = None  # HOST:PORT of the player gateway (port 0: any free one)
    public_address: str | None = None  # what lobbies give players for it (default: bound)
    lease: float = 10.0  # a shared store's table leases (house/ownership.py): seconds


@dataclass
class HostReport:
    recovered: list[int] = field(default_factory=list)
    hands: int = 0
    finished_on_stop: list[str] = field(default_factory=list)
    voided_on_stop: list[int] = field(default_factory=list)
    tables: list[str] = field(default_factory=list)
    commands: int = 0
    failed_tables: list[str] = field(default_factory=list)  # stopped by an internal error
    interrupted: bool = False  # stopped by Ctrl-C (SIGINT)
