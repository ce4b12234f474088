"""Every stored config is what its id says: the id is the hash of the compiled rules, and
the columns a console shows (profile, version, title, game) are the compiled rules' own.

The evidence log records each config by its id only; this check is what makes that
enough: compiled rules edited in place (a changed cap, a changed ranking) no longer hash
to the id the log, the deployments and the hands name.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

from gmtool.findings import Finding
from gmtool.rules.compile import config_id_of
from gmtool.store.configs import stored_configs


def verify_configs(store) -> Iterator[Finding]:
    for config_id, profile_id, version, title, game, compiled_text in stored_configs(store):
        name = f"config {str(config_id)[:12]}"
        try:
            compiled = json.loads(compiled_text)
            profile = compiled["profile"]
            shown = (profile["id"], profile["version"], profile["title"], compiled["game"])
        except (TypeError, ValueError, KeyError):
            yield Finding(
                "config", f"{name}: its compiled rules are not a compiled config (edited)"
            )
            continue
        if compiled.get("config_id") != config_id or config_id_of(compiled) != config_id:
            yield Finding("config", f"{name}: its compiled rules do not hash to its id (edited)")
        elif (profile_id, version, title, game) != shown:
            yield Finding(
                "config",
                f"{name}: profile, version, title or game differ from its compiled rules (edited)",
            )
