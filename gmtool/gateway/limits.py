"""What one connection may ask of a host: frames per second, and tokens used once.

`FrameBudget` is a token bucket on the host's monotonic clock: a connection may send
`BURST` frames at once and `RATE_PER_S` a second after that. A frame past the budget is
not carried out; the first of a run gets a `too_fast` error frame, and a connection that
goes on sending `FLOOD` frames past its budget without a pause is closed (4007). On the
virtual clock of the tests a flood takes no time at all, so the budget never refills
during it: what a test sees does not depend on the machine's speed.

`TokenIds` remembers the `jti` of every token a hello used until the token expires: a
token that carries one opens one connection (RFC 7519 4.1.7); a token without one may be
used again until it expires (what `players token` mints, and what the browser page's
reconnects rely on).
"""

from __future__ import annotations

from typing import Literal

RATE_PER_S = 20.0  # a person clicks a few times a second; a bot acts once a turn
BURST = 40  # a resume, a lobby and a sit at once, with room to spare
FLOOD = 200  # frames past the budget, in a row, that close the connection

Verdict = Literal["take", "refuse", "quiet", "close"]


class FrameBudget:
    """Frames a connection may still send now."""

    def __init__(self, now: float) -> None:
        self.left = float(BURST)
        self.at = now
        self.refused = 0  # frames past the budget since the last one taken

    def take(self, now: float) -> Verdict:
        """`take` the frame; `refuse` it with an error frame (the first of a run); refuse it
        `quiet`ly (the run goes on); `close` the connection (a flood)."""
        self.left = min(float(BURST), self.left + (now - self.at) * RATE_PER_S)
        self.at = now
        if self.left >= 1.0:
            self.left -= 1.0
            self.refused = 0
            return "take"
        self.refused += 1
        if self.refused >= FLOOD:
            return "close"
        return "refuse" if self.refused == 1 else "quiet"


class TokenIds:
    """The `jti` of each token used, kept until the token expires."""

    def __init__(self) -> None:
        self.seen: dict[str, int] = {}  # jti -> the token's expiry (Unix seconds)

    def use(self, token_id: str, expires: int, now: float) -> bool:
        """True the first time `token_id` is used (it is remembered until `expires`);
        False when it was used before (a replayed token)."""
        if len(self.seen) > 1024:  # forget what expired, now and then
            self.seen = {jti: until for jti, until in self.seen.items() if until >= now}
        if token_id in self.seen and self.seen[token_id] >= now:
            return False
        self.seen[token_id] = expires
        return True


REFUSALS_SAID = 20  # refused hellos said on the host's output a minute, at most
REFUSAL_PERIOD_S = 60.0


class Quieted:
    """The host's lines about refused hellos, at most `REFUSALS_SAID` a minute: a client
    that never authenticates may send junk hellos at any pace, and each would otherwise
    be a line of the host's output (an outside probe wrote 24 MB in 10 s so). The lines
    held back are counted, and their number said with the next line shown."""

    def __init__(self) -> None:
        self.since = float("-inf")  # when the current minute began
        self.said = 0
        self.held = 0

    def line(self, now: float, text: str) -> str | None:
        """`text` to show now (after how many were held back), or None to hold it back."""
        if now - self.since >= REFUSAL_PERIOD_S:
            self.since, self.said = now, 0
        if self.said >= REFUSALS_SAID:
            self.held += 1
            return None
        self.said += 1
        if self.held:
            text = f"{text} ({self.held} more refused hello(s) not shown before it)"
            self.held = 0
        return text
