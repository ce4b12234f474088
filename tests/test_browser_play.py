"""A person plays in a real browser (issue 25 item 7): Debian's Chromium, driven by
Playwright's Python API, opens the page a real `gmtool house run --listen` serves, signs in
with a token from `gmtool players token`, sits in a room, plays a hand to the end against
the host's bots by clicking the legal buttons, reloads the page in the middle of the next
hand and finds the table again (the page resumes with the last event number it kept), and
the store's audit is clean at the end.

The test waits for what the page shows (Playwright's auto-waiting and `expect`, with
generous timeouts), never for a fixed time. The host's clock is real here (a browser
cannot follow virtual time), so the person's turns run on it: the reload test runs the
host at `--speed 1` (15 s a turn, RULES S17: a reload on a loaded machine must find the
same hand running), the owner-ante test at `--speed 2` (7.5 s a turn). A turn that runs
out before the click lands (the host folds her, S17) is part of the game, not an error:
the tests go on to the end of that hand."""

from __future__ import annotations

import json
import os
from pathlib import Path

from playwright.sync_api import Page, expect, sync_playwright
from playwright.sync_api import TimeoutError as PlaywrightTimeout

CHROMIUM = Path("/usr/bin/chromium")  # Debian's package: .ci/run installs it when missing
WAIT = 90_000  # ms: what a busy 2-core machine may need for one step of the page
STAYS_IN = ("check", "call", "allin", "follow", "look", "open", "pass", "fold")
GRANT = 200_000
TURN_MS = 5_000  # a click that has not landed by then: her turn has run out


def test_a_person_plays_a_hand_in_chromium_reloads_mid_hand_and_resumes(
    gm, start_host, deployed_db: Path
) -> None:
    assert CHROMIUM.exists(), "Debian's chromium is missing: apt-get install chromium"
    host = start_host(
        deployed_db,
        *("--tables", "2", "--system", "qq-showhand", "--speed", "1"),
        *("--listen", "127.0.0.1:0"),
    )
    page_url = host.wait_for_line(r"the browser page: (http://[^\s)]+)").group(1)
    token = gm("players", "token", "ann", "--ttl", "1h", "--db", deployed_db, "--as", "boss")
    grant = ("players", "adjust", "ann", str(GRANT), "--reason", "browser test grant")
    gm(*grant, "--db", deployed_db, "--as", "boss")

    problems: list[str] = []
    hellos: list[dict] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            page = browser.new_page(viewport={"width": 900, "height": 760})
            page.set_default_timeout(WAIT)
            expect.set_options(timeout=WAIT)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.on("console", lambda m: m.type == "error" and problems.append(m.text))
            page.on("websocket", lambda socket: socket.on("framesent", _hello_into(hellos)))

            page.goto(f"{page_url}#token={token.stdout.strip()}")
            expect(page.locator("#status")).to_have_attribute("data-state", "connected")
            assert "token" not in page.url, "the token stays off the address bar"
            expect(page.locator("#coins")).to_have_text(f"{GRANT:,}")
            room = page.locator('#rooms tr[data-room="qq-showhand/junior"]')
            expect(room).to_contain_text("stud5", timeout=WAIT)
            room.get_by_role("button", name="sit").click()
            expect(page.locator("#table")).to_be_visible(timeout=WAIT)
            expect(page.locator("#table-name")).to_have_text("qq-showhand-junior-1")

            played = 0
            while not played:  # a hand that asks ann to act at least once, to its end
                played = play_to_the_end(page, next_hand(page))
            me = page.locator("#seats li.me")
            expect(page.locator("#result")).to_contain_text("won")
            expect(me.locator(".card")).not_to_have_count(0)

            hand = next_hand(page)
            turn = page.locator('#turn[data-sent="no"] #actions button').first
            expect(turn.or_(_over(page, hand))).to_be_visible(timeout=WAIT)
            hole = me.locator(".card.hole").all_inner_texts()
            if os.environ.get("GMTOOL_PLAY_SCREENSHOT"):  # how docs/play.png is made
                page.screenshot(path=os.environ["GMTOOL_PLAY_SCREENSHOT"])
            assert len(hole) == 1 and "?" not in hole[0], hole  # her own face-down card

            page.reload()  # mid-hand: the socket drops, the page comes back
            expect(page.locator("#status")).to_have_attribute("data-state", "connected")
            resume = hellos[-1].get("resume")
            assert resume and resume["table"] == "qq-showhand-junior-1", hellos[-1]
            assert resume["seq"] >= int(hand), "the page resumes from the last event it kept"
            expect(page.locator("#felt")).to_have_attribute("data-hand", hand, timeout=WAIT)
            expect(me.locator(".card.hole")).to_have_text(hole)
            play_to_the_end(page, hand)

            seqs = page.locator("#log li").evaluate_all("items => items.map(i => +i.dataset.seq)")
            assert seqs == list(range(seqs[0], seqs[0] - len(seqs), -1)), (
                seqs
            )  # none lost, none twice
            assert problems == [], problems
        finally:
            browser.close()
    assert host.stop() == 0, host.output
    audit = gm("audit", "--db", deployed_db, expect=None)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def test_a_person_agrees_to_an_owners_ante_in_chromium_plays_and_presses_start_again(
    gm, start_host, deployed_db: Path
) -> None:
    """An owner-ante room (RULES L1-L6) in the page: the host's one bot owns the table and
    sets the ante; the person agrees with the page's button, plays the hand the owner
    starts, and presses start again after it (L6: 15 game seconds, 7.5 s at --speed 2).
    If the bot lost its every coin in that hand it leaves (L7: below the minimum holding)
    and the table is hers: then the page offers her the owner's ante buttons instead."""
    host = start_host(
        deployed_db,
        *("--tables", "1", "--system", "lequ-showhand", "--speed", "2", "--bots", "1"),
        *("--listen", "127.0.0.1:0"),
    )
    page_url = host.wait_for_line(r"the browser page: (http://[^\s)]+)").group(1)
    token = gm("players", "token", "ann", "--ttl", "1h", "--db", deployed_db, "--as", "boss")
    grant = ("players", "adjust", "ann", str(GRANT), "--reason", "browser test grant")
    gm(*grant, "--db", deployed_db, "--as", "boss")
    problems: list[str] = []
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM))
        try:
            page = browser.new_page(viewport={"width": 900, "height": 760})
            page.set_default_timeout(WAIT)
            expect.set_options(timeout=WAIT)
            page.on("pageerror", lambda error: problems.append(str(error)))
            page.goto(f"{page_url}#token={token.stdout.strip()}")
            room = page.locator('#rooms tr[data-room="lequ-showhand/table"]')
            room.get_by_role("button", name="sit").click()
            expect(page.locator("#setup")).to_be_visible()
            expect(page.locator("#setup-state")).to_contain_text("Owner: bot-001")
            page.locator('#setup-actions button[data-setup="agree"]').click()
            play_to_the_end(page, next_hand(page))  # (her turns, if the bot left her any)
            again = page.locator('#setup-actions button[data-setup="start"]')
            hers = page.locator("#setup-state", has_text="Owner: you")
            expect(again.or_(page.locator('#felt[data-over="no"]')).or_(hers)).to_be_visible()
            if again.is_visible():
                again.click()
                expect(again).to_be_hidden()
            elif hers.is_visible():  # the bot went broke and left: she owns the table now
                expect(page.locator('#setup-actions button[data-setup="ante-max"]')).to_be_visible()
            assert problems == [], problems
        finally:
            browser.close()
    assert host.stop() == 0, host.output
    audit = gm("audit", "--db", deployed_db, expect=None)
    assert audit.returncode == 0, audit.stdout + audit.stderr


def next_hand(page: Page) -> str:
    """The hand ann is dealt into and that is not over (the running one, else the next),
    by its number (its first event's), once she holds her face-down card."""
    dealt = page.locator('#felt[data-over="no"] #seats li.me .card.hole')
    expect(dealt).to_have_count(1, timeout=WAIT)
    return page.locator("#felt").get_attribute("data-hand") or ""


def play_to_the_end(page: Page, hand: str) -> int:
    """Click a legal button at each of ann's turns until the hand is over; the clicks."""
    buttons = page.locator('#turn[data-sent="no"] #actions button')
    over = _over(page, hand)
    clicks = 0
    while True:
        expect(buttons.first.or_(over)).to_be_visible(timeout=WAIT)
        if over.is_visible():
            return clicks
        verbs = [button.get_attribute("data-verb") for button in buttons.all()]
        if not verbs:  # the turn ran out as she looked (S17): the host acted for her
            continue
        verb = next((v for v in STAYS_IN if v in verbs), verbs[0])
        try:
            buttons.and_(page.locator(f'[data-verb="{verb}"]')).click(timeout=TURN_MS)
        except PlaywrightTimeout:  # the turn ran out before the click landed
            continue
        clicks += 1


def _over(page: Page, hand: str):
    return page.locator(f'#felt[data-hand="{hand}"][data-over="yes"]')


def _hello_into(hellos: list[dict]):
    def sent(payload: str | bytes) -> None:
        frame = json.loads(payload)
        if frame.get("type") == "hello":
            hellos.append(frame)

    return sent
