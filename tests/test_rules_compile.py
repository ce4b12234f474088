"""Compilation: canonical JSON, resolved defaults and a content id (docs/profile-reference.md)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gmtool.rules.compile import (
    InvalidProfile,
    compile_data,
    compile_file,
    compile_text,
)

RULES = Path(__file__).resolve().parent.parent / "rules"
SHIPPED = sorted(p for p in RULES.glob("*.toml"))


def test_five_shipped_profiles_exist_with_exact_names() -> None:
    assert [p.name for p in SHIPPED] == [
        "lequ-showhand.toml",
        "qq-showhand.toml",
        "straight-flush.toml",
        "suihua-three-card.toml",
        "video-showhand.toml",
    ]


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
def test_compiled_form_has_id_version_and_every_default(path: Path) -> None:
    compiled = compile_file(path)
    assert compiled["schema_version"] == 3
    assert len(compiled["config_id"]) == 64
    assert set(compiled["profile"]) == {"id", "title", "version", "game"}
    assert compiled["timeouts"]["action_s"] == 15
    assert compiled["deck"]["cards"][:2] in (["8S", "8H"], ["2S", "2H"])
    for tier in compiled["tiers"]:
        assert None not in tier.values(), tier


def test_defaults_resolve_by_game_and_style() -> None:
    minimal = (
        '[profile]\nid = "m"\ngame = "stud5"\n[betting]\nstyle = "owner_ante"\n'
        '[[tiers]]\nid = "t"\n'
    )
    compiled = compile_text(minimal)
    assert compiled["betting"]["escape_policy"] == "fold"
    assert compiled["betting"]["allin_amount"] == "smallest_stack"
    assert compiled["table"]["first_banker"] == "owner"
    assert compiled["owner_ante"]["max_divisor"] == 200
    assert compiled["profile"]["title"] == "m"
    assert len(compiled["deck"]["cards"]) == 28


def test_invalid_profile_is_refused_with_its_findings() -> None:
    with pytest.raises(InvalidProfile) as refused:
        compile_text('[profile]\nid = "x"\ngame = "stud5"\n')
    assert [f.code for f in refused.value.findings] == ["missing-key"]


def test_bet_unit_defaults_to_the_ante_d5() -> None:
    """D-5: bets and raises are whole multiples of the bet unit, by default the ante."""
    text = (RULES / "qq-showhand.toml").read_text(encoding="utf-8")
    text = text.replace("bet_unit = 500\n", "")
    middle = next(t for t in compile_text(text)["tiers"] if t["id"] == "middle")
    assert middle["bet_unit"] == 500


# -- config_id properties -----------------------------------------------------------------


def _write_toml(data: dict, draw) -> str:
    """Serialise `data` as TOML with a drawn key order, spacing and comments."""

    def scalar(value) -> str:
        if isinstance(value, bool):
            return "true" if value else "false"
        if isinstance(value, str):
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, list):
            sep = draw(st.sampled_from([", ", ",", " , ", ",\n  "]))
            return "[" + sep.join(scalar(v) for v in value) + "]"
        if isinstance(value, dict):
            return "{ " + ", ".join(f"{k} = {scalar(v)}" for k, v in value.items()) + " }"
        return str(value)

    def keyvals(table: dict) -> list[str]:
        keys = draw(st.permutations(sorted(table)))
        eq = draw(st.sampled_from([" = ", "=", "   =  "]))
        comment = draw(st.sampled_from(["", "  # note", '\t# 说明 [x] "q"']))
        return [f"{k}{eq}{scalar(table[k])}{comment}" for k in keys]

    lines = [draw(st.sampled_from(["", "#:schema ./profile.schema.json", "# header"]))]
    sections = [k for k in data if k != "tiers"]
    for name in draw(st.permutations(sections)):
        lines += [f"[{name}]", *keyvals(data[name]), draw(st.sampled_from(["", "\n"]))]
    for tier in data["tiers"]:
        lines += ["[[tiers]]", *keyvals(tier), ""]
    return "\n".join(lines) + "\n"


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_formatting_comments_and_key_order_never_change_config_id(path: Path, data) -> None:
    text = path.read_text(encoding="utf-8")
    parsed = tomllib.loads(text)
    rewritten = _write_toml(parsed, data.draw)
    assert tomllib.loads(rewritten) == parsed
    assert compile_text(rewritten)["config_id"] == compile_text(text)["config_id"]


def _leaves(value, path=()):
    if isinstance(value, dict):
        for key, item in value.items():
            yield from _leaves(item, path + (key,))
    elif isinstance(value, list) and value and all(isinstance(v, (dict, list)) for v in value):
        for index, item in enumerate(value):
            yield from _leaves(item, path + (index,))
    else:
        yield path, value


def _changed(value, draw):
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return value + draw(st.integers(1, 1000)) * draw(st.sampled_from([1, -1]))
    if isinstance(value, str):
        return value + draw(st.text(min_size=1, max_size=3).filter(lambda s: s.strip()))
    if isinstance(value, list):
        return value[:-1] if len(value) > 1 else value + value
    raise AssertionError(value)


@pytest.mark.parametrize("path", SHIPPED, ids=lambda p: p.stem)
@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_changing_any_value_always_changes_config_id(path: Path, data) -> None:
    parsed = tomllib.loads(path.read_text(encoding="utf-8"))
    leaves = [(p, v) for p, v in _leaves(parsed) if p[0] != "deck"]
    where, value = data.draw(st.sampled_from(leaves))
    mutated = json.loads(json.dumps(parsed))
    target = mutated
    for part in where[:-1]:
        target = target[part]
    target[where[-1]] = _changed(value, data.draw)
    assert compile_data(mutated)["config_id"] != compile_data(parsed)["config_id"], where


def test_changing_the_deck_changes_config_id() -> None:
    text = (RULES / "qq-showhand.toml").read_text(encoding="utf-8")
    changed = text.replace('ranks = "8 9 T J Q K A"', 'ranks = "7 8 9 T J Q K A"')
    assert compile_text(changed)["config_id"] != compile_text(text)["config_id"]


def test_compile_is_byte_identical_across_processes(tmp_path: Path) -> None:
    """compile(load(x)) gives the same bytes in separate runs, whatever the hash seed."""
    outputs = []
    for seed in ("1", "2", "3"):
        env = {**os.environ, "PYTHONHASHSEED": seed}
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "gmtool",
                "rules",
                "compile",
                str(RULES / "video-showhand.toml"),
            ],
            capture_output=True,
            env=env,
            check=True,
        )
        outputs.append(result.stdout)
    assert outputs[0] == outputs[1] == outputs[2]
    compiled = json.loads(outputs[0])
    assert outputs[0].decode("utf-8").rstrip("\n") == json.dumps(
        compiled, sort_keys=True, separators=(",", ":"), ensure_ascii=False
    )
