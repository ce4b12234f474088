"""Virtual time for the table host: an asyncio loop whose clock jumps instead of waiting.

The host sleeps with asyncio (`asyncio.sleep`, `wait_for`), and asyncio reads time only
from its loop (`loop.time()`). On a `VirtualTimeLoop` that time is a number the loop
keeps: when every task waits for a timer, the loop moves its time to the first timer's
moment at once instead of blocking. So the same host code plays an hour of game time in
a moment, tasks interleave exactly as they would in real time, and a run depends only on
its seeds, never on how busy the machine is. Real file descriptors (the loop's own wake
pipe) are still watched, without blocking.

`LoopClock` is the `gmtool.store.clock.Clock` of such a loop: its monotonic time is the
loop's, and its wall time starts at a given moment and runs with it, so the rows a
virtual host stores carry virtual timestamps.
"""

from __future__ import annotations

import asyncio
import math
import selectors
import time
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

T = TypeVar("T")
TICK_S = 1e-9  # virtual time a loop cycle with work to do costs


class LoopClock:
    """A loop's time as a Clock: monotonic = `loop.time()`, wall = `wall_start` + elapsed."""

    def __init__(self, loop: asyncio.AbstractEventLoop, wall_start: float | None = None) -> None:
        self._loop = loop
        self._start = loop.time()
        self._wall_start = time.time() if wall_start is None else wall_start

    def monotonic(self) -> float:
        return self._loop.time()

    def wall(self) -> float:
        return self._wall_start + (self._loop.time() - self._start)


class _JumpingSelector(selectors.BaseSelector):
    """Watches real file descriptors without blocking; a wait for a timer moves time on."""

    def __init__(self, loop: VirtualTimeLoop) -> None:
        self._real = selectors.DefaultSelector()
        self._loop = loop

    def register(self, fileobj, events, data=None):  # noqa: ANN001 - selectors' signature
        return self._real.register(fileobj, events, data)

    def unregister(self, fileobj):  # noqa: ANN001
        return self._real.unregister(fileobj)

    def modify(self, fileobj, events, data=None):  # noqa: ANN001
        return self._real.modify(fileobj, events, data)

    def get_map(self):
        return self._real.get_map()

    def close(self) -> None:
        self._real.close()

    def select(self, timeout: float | None = None):
        ready = self._real.select(0)
        if ready or timeout == 0:
            # Work is waiting: a loop cycle costs a tick of time, as it does in real time.
            # (asyncio fires a timer up to its clock resolution early; without the tick a
            # task waiting for a deadline a few ulps away would wait for ever.)
            self._loop.tick()
            return ready
        if timeout is None:  # no timer at all: only another thread or a signal can wake us
            return self._real.select(None)
        self._loop.advance(timeout)  # every task waits for a timer: go to the first one
        return []


class VirtualTimeLoop(asyncio.SelectorEventLoop):
    """An event loop on virtual time (see the module's docstring)."""

    def __init__(self, wall_start: float | None = None) -> None:
        self._virtual_now = 0.0
        super().__init__(_JumpingSelector(self))
        self.clock = LoopClock(self, wall_start)

    def time(self) -> float:
        return self._virtual_now

    def advance(self, seconds: float) -> None:
        self._virtual_now += seconds

    def tick(self) -> None:
        """The least step of time: a nanosecond, or one float step where that is more."""
        now = self._virtual_now
        self._virtual_now = max(now + TICK_S, math.nextafter(now, math.inf))


class Stepper:
    """Runs coroutines on a `VirtualTimeLoop` a step at a time, for tests and simulations.

    Between steps the loop is still: every task waits where it was, so other processes
    can read a store the host writes and see it at rest.
    """

    def __init__(self, wall_start: float | None = None) -> None:
        self.loop = VirtualTimeLoop(wall_start)
        self.clock = self.loop.clock

    def start(self, coroutine: Awaitable[T]) -> asyncio.Task:
        """Schedule a coroutine (the host's `run`); it runs during the steps."""
        return self.loop.create_task(coroutine)

    def run(self, coroutine: Awaitable[T]) -> T:
        """Run the loop until `coroutine` is done (every started task runs meanwhile)."""
        return self.loop.run_until_complete(coroutine)

    def run_until(
        self,
        predicate: Callable[[], Any],
        within: float = 3600.0,
        every: float = 0.05,
        what: str = "the condition",
    ) -> Any:
        """Run until `predicate()` is truthy (checked every `every` virtual seconds); its
        value. AssertionError after `within` virtual seconds."""

        async def watch() -> Any:
            deadline = self.loop.time() + within
            while not (value := predicate()):
                if self.loop.time() >= deadline:
                    raise AssertionError(f"{what} did not happen within {within:g} virtual s")
                await asyncio.sleep(every)
            return value

        return self.run(watch())

    def advance(self, seconds: float) -> None:
        """Let `seconds` of virtual time pass."""
        self.run(asyncio.sleep(seconds))

    def close(self) -> None:
        for task in asyncio.all_tasks(self.loop):
            task.cancel()
        self.loop.run_until_complete(asyncio.sleep(0))
        self.loop.run_until_complete(self.loop.shutdown_asyncgens())
        self.loop.close()
