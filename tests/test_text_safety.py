"""Issue 23, item 5: bidirectional and invisible characters, refused where text enters and
escaped wherever text is printed.

A reason like `evil \u202egnp.exe` reads "evil exe.png" on a terminal, and a zero-width
space makes two names look the same. Names and reasons refuse every control,
bidirectional or invisible character (Unicode categories Cc, Cf, Zl, Zp, the
 default-ignorable characters of other categories, private-use and unassigned), as they
refused ESC and BEL; text output shows them escaped (`\u202e`); JSON stays exact; a
profile string holding one is an `unsafe-text` finding for `rules validate` and
`rules set`. Every command runs the real console script on a real store.
"""

from __future__ import annotations

import shutil
import sys
import unicodedata
from pathlib import Path

import pytest
from conftest import OPERATOR, RULES, Gmtool, copy_db
from helpers import clean_env, public_key, query

from gmtool.cli.console import printable
from gmtool.store import ledger
from gmtool.store.db import connect

RLO = "evil \u202egnp.exe"  # reads "evil exe.png"
ZWSP = "bot\u200b-001"  # looks like bot-001
DISGUISES = {
    "right-to-left override": "\u202e",
    "left-to-right embedding": "\u202a",
    "pop directional formatting": "\u202c",
    "first strong isolate": "\u2068",
    "pop directional isolate": "\u2069",
    "right-to-left mark": "\u200f",
    "left-to-right mark": "\u200e",
    "arabic letter mark": "\u061c",
    "zero-width space": "\u200b",
    "zero-width non-joiner": "\u200c",
    "zero-width joiner": "\u200d",
    "word joiner": "\u2060",
    "byte order mark": "\ufeff",
    "soft hyphen (Cf)": "\u00ad",
    "invisible times (Cf)": "\u2062",
    "language tag (Cf)": "\U000e0001",
    "line separator": "\u2028",
    "hangul filler (Lo, default ignorable)": "\u3164",
    "halfwidth hangul filler": "\uffa0",
    "combining grapheme joiner (Mn, default ignorable)": "\u034f",
    "variation selector-16": "\ufe0f",
    "mongolian free variation selector": "\u180b",
    "variation selector-17": "\U000e0100",
    "private use": "\ue000",
    "unassigned": "\U0003fffd",
    "braille pattern blank": "\u2800",
    "escape": "\x1b",
    "bell": "\x07",
}


@pytest.fixture(scope="module")
def base(tmp_path_factory, gm: Gmtool) -> Path:
    """A store with every profile deployed, `boss` and `sue`, and a player `bot-001`."""
    db = tmp_path_factory.mktemp("text") / "base.db"
    gm.deploy_all(db)
    gm.add_roles(db)
    with connect(db) as store:
        ledger.grant(store, "bot-001", 100, "opening_balance")
    return db


@pytest.fixture
def store(base: Path, tmp_path: Path) -> Path:
    return copy_db(base, tmp_path)


def _gm_log_rows(db: Path) -> int:
    return query(db, "SELECT COUNT(*) FROM gm_actions")[0][0]


# -- refused where they enter ---------------------------------------------------------------


@pytest.mark.parametrize("character", DISGUISES.values(), ids=DISGUISES.keys())
def test_a_reason_with_a_bidi_or_invisible_character_is_refused(
    gm: Gmtool, store: Path, character: str
) -> None:
    """`players adjust ... --reason` refuses it: exit 2, one message naming the character,
    no ledger row, nothing in the GM log."""
    before = (_gm_log_rows(store), query(store, "SELECT COUNT(*) FROM ledger")[0][0])
    run = gm(
        "players",
        "adjust",
        "bot-001",
        "5",
        "--reason",
        f"refund {character}x",
        "--as",
        OPERATOR,
        "--db",
        store,
        expect=2,
    )
    assert run.stderr.startswith("error: the reason"), run.stderr
    assert f"U+{ord(character):04X}" in run.stderr, run.stderr
    assert character not in run.stderr  # the message itself shows it escaped
    assert (
        _gm_log_rows(store),
        query(store, "SELECT COUNT(*) FROM ledger")[0][0],
    ) == before


def test_the_issue_s_reason_is_refused_and_never_echoed_raw(gm: Gmtool, store: Path) -> None:
    run = gm(
        "players",
        "adjust",
        "bot-001",
        "5",
        "--reason",
        RLO,
        "--as",
        OPERATOR,
        "--db",
        store,
        expect=2,
    )
    assert "U+202E RIGHT-TO-LEFT OVERRIDE" in run.stderr, run.stderr
    assert "\\u202e" in run.stderr and "\u202e" not in run.stdout + run.stderr


def test_a_kick_reason_with_a_zero_width_space_is_refused_before_it_is_queued(
    gm: Gmtool, store: Path
) -> None:
    before = query(store, "SELECT COUNT(*) FROM gm_commands")[0][0], _gm_log_rows(store)
    run = gm(
        "tables",
        "kick",
        "qq-showhand-junior-1",
        "bot-001",
        "--reason",
        "spam\u200bbot",
        "--as",
        OPERATOR,
        "--db",
        store,
        expect=2,
    )
    assert "U+200B ZERO WIDTH SPACE" in run.stderr, run.stderr
    assert (query(store, "SELECT COUNT(*) FROM gm_commands")[0][0], _gm_log_rows(store)) == before


@pytest.mark.parametrize("name", [RLO.replace(" ", ""), "su\u200be", "bo\u2060ss"])
def test_a_gm_user_name_with_a_bidi_or_invisible_character_is_refused(
    gm: Gmtool, store: Path, name: str
) -> None:
    before = _gm_log_rows(store)
    run = gm(
        "gm",
        "users",
        "add",
        name,
        "--role",
        "support",
        "--key",
        public_key("sue"),
        "--db",
        store,
        "--as",
        OPERATOR,
        expect=2,
    )
    assert "invisible characters" in run.stderr and "U+" in run.stderr, run.stderr
    assert _gm_log_rows(store) == before
    assert name not in [r["name"] for r in gm.json("gm", "users", "list", "--db", store, "--json")]


def test_a_gm_key_cannot_be_made_for_a_disguised_name(gm: Gmtool, tmp_path: Path) -> None:
    keys = tmp_path / "keys"
    run = gm("gm", "keys", "new", "bo\u200bss", expect=2, env=clean_env(GMTOOL_KEYS=str(keys)))
    assert "U+200B ZERO WIDTH SPACE" in run.stderr, run.stderr
    assert not keys.exists() or not list(keys.iterdir())


@pytest.mark.parametrize("player", [ZWSP, "bot-001\u202e"])
def test_a_disguised_player_name_in_a_gm_command_is_refused_not_logged(
    gm: Gmtool, store: Path, player: str
) -> None:
    before = _gm_log_rows(store)
    run = gm(
        "players",
        "adjust",
        player,
        "5",
        "--reason",
        "r",
        "--as",
        OPERATOR,
        "--db",
        store,
        expect=2,
    )
    assert "invisible characters" in run.stderr, run.stderr
    assert _gm_log_rows(store) == before


# -- escaped wherever text is printed -------------------------------------------------------


def test_bidi_and_zero_width_names_are_shown_escaped_and_exact_in_json(
    gm: Gmtool, store: Path
) -> None:
    """Names that reached the store some other way (another system's players) are shown
    escaped in every text view and exactly in JSON."""
    with connect(store) as db:
        ledger.grant(db, RLO, 100, "opening_balance")
        ledger.grant(db, ZWSP, 100, "opening_balance")
    for args in (("players", "list"), ("players", "show", RLO), ("players", "show", ZWSP)):
        out = gm(*args, "--db", store).stdout
        assert "\u202e" not in out and "\u200b" not in out, repr(out)
        assert "\\u202e" in out or "\\u200b" in out, out
    listed = gm.json("players", "list", "--db", store, "--json")["players"]
    assert {RLO, ZWSP} <= {p["name"] for p in listed}
    assert gm.json("players", "show", RLO, "--db", store, "--json")["name"] == RLO


def test_every_control_and_format_character_is_escaped_in_text_output() -> None:
    """The one place text output is made safe (cli/console.py `printable`) escapes every
    character of categories Cc (but newline and tab), Cf, Zl, Zp, Cs, Co and Cn and every
    other default-ignorable character (Hangul fillers, variation selectors, U+034F), as
    `\\xNN`, `\\uNNNN` or `\\UNNNNNNNN`, and nothing else."""
    ignorable = {0x34F, 0x115F, 0x1160, 0x17B4, 0x17B5, 0x3164, 0xFFA0, 0x2800}
    ignorable |= {*range(0x180B, 0x1810), *range(0xFE00, 0xFE10), *range(0xE0100, 0xE01F0)}
    for code in range(sys.maxunicode + 1):
        character = chr(code)
        category = unicodedata.category(character)
        unsafe = category in ("Cc", "Cf", "Zl", "Zp", "Cs", "Co", "Cn") or code in ignorable
        shown = printable(character)
        if unsafe and character not in "\n\t":
            assert shown.startswith("\\") and len(shown) in (2, 4, 6, 10), hex(code)
            assert shown.encode().decode("unicode_escape") == character, hex(code)
        else:
            assert shown == character, hex(code)


# -- profile strings: rules validate and rules set ------------------------------------------


@pytest.mark.parametrize(
    "character", ["\u202e", "\u200b", "\ufeff", "\x1b", "\x07", "\r"], ids=repr
)
def test_rules_validate_reports_unsafe_text_in_a_profile_string(
    gm: Gmtool, tmp_path: Path, character: str
) -> None:
    profile = tmp_path / "qq.toml"
    escaped = f"\\u{ord(character):04X}"
    profile.write_text(
        (RULES / "qq-showhand.toml")
        .read_text(encoding="utf-8")
        .replace('title = "初级"', f'title = "初{escaped}级"', 1),
        encoding="utf-8",
    )
    run = gm("rules", "validate", profile, expect=1)
    assert "[unsafe-text] tiers.junior.title" in run.stdout + run.stderr, run
    assert character not in run.stdout + run.stderr
    found = gm.json("rules", "validate", profile, "--format", "json", expect=1)["errors"]
    assert [f["code"] for f in found] == ["unsafe-text"], found


@pytest.mark.parametrize("value", [RLO, "QQ\u200b梭哈", "QQ\x1b[2J"], ids=repr)
def test_rules_set_refuses_a_profile_string_with_unsafe_text(
    gm: Gmtool, tmp_path: Path, value: str
) -> None:
    profile = tmp_path / "qq.toml"
    shutil.copy(RULES / "qq-showhand.toml", profile)
    before = profile.read_bytes()
    run = gm("rules", "set", profile, "profile.title", value, expect=1)
    assert "unsafe-text" in run.stdout + run.stderr, run
    assert profile.read_bytes() == before
