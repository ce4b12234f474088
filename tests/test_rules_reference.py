"""Every rule id gmtool cites resolves in docs/rules.md (issue 13: the rules reference).

Refusals (`IllegalAction("Q4", ...)`), events (`rule="S19"`), findings ("(RULES Q5)") and
the profile format's rule column all name rule ids; a user who meets one must find its
meaning in the repository.
"""

from __future__ import annotations

import re
from pathlib import Path

from gmtool.rules.schema import walk

ROOT = Path(__file__).resolve().parent.parent
REFERENCE = (ROOT / "docs" / "rules.md").read_text(encoding="utf-8")
RULE_ID = r"(?:[SQLHG]\d{1,2}|D-\d{1,2})"
DOCUMENTED = set(re.findall(rf"^\| ({RULE_ID}) \|", REFERENCE, flags=re.M))
CITED = re.compile(
    rf"(?:RULES |rule=|rule: |IllegalAction\(|SetupError\()[\"']?({RULE_ID})\b"
    rf"|[\"']({RULE_ID})[\"']"
)


def cited_in_code() -> dict[str, str]:
    found = {}
    for path in sorted((ROOT / "gmtool").rglob("*.py")):
        for match in CITED.finditer(path.read_text(encoding="utf-8")):
            found.setdefault(match.group(1) or match.group(2), str(path.relative_to(ROOT)))
    return found


def test_every_rule_id_in_the_code_is_documented() -> None:
    missing = {rule: where for rule, where in cited_in_code().items() if rule not in DOCUMENTED}
    assert not missing, f"rule ids cited but not in docs/rules.md: {missing}"


def test_every_rule_of_the_profile_format_is_documented() -> None:
    cited = {rule for _, field in walk() for rule in re.findall(RULE_ID, field.rule)}
    assert cited and cited <= DOCUMENTED, sorted(cited - DOCUMENTED)


def test_the_reference_covers_every_family() -> None:
    for family, count in (("S", 23), ("Q", 6), ("L", 14), ("H", 11), ("G", 5), ("D-", 10)):
        assert {f"{family}{n}" for n in range(1, count + 1)} <= DOCUMENTED, family
    assert len(cited_in_code()) > 40  # the pattern does find the code's citations
