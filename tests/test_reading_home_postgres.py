"""The reading commands of a PostgreSQL store read its hosts' files where the GM writes
do: in `$GMTOOL_HOME`, the hosts' home folder (their checkpoint verifier key, the witness
folder). Before, `gmtool audit` and `hands show|export|replay` ignored it: an operator who
had set it for `players adjust` was told "no verifier key at the store (none beside
PostgreSQL)" and had to spell out `--key HOME/<database>.checkpoint.pub`.

A real `gmtool house run` on a real database of the test server; the commands as
subprocesses.
"""

from __future__ import annotations

import json

from backends import pg_server_fixture, shared_fixture  # noqa: F401
from helpers import clean_env


def _played(url, home, start_host) -> None:
    host = start_host(url, "--home", home, "--tables", "2", "--hands", "4", "--speed", "50")
    assert host.wait() == 0, host.output


def test_audit_and_hands_read_the_hosts_files_in_gmtool_home(shared, gm, start_host) -> None:
    url, home = shared
    _played(url, home, start_host)
    env = clean_env(GMTOOL_HOME=str(home))
    audit = gm.json("audit", "--db", url, "--json", env=env)
    assert audit["problems"] == [] and audit["hands_checked"] >= 4, audit
    name = url.rsplit("/", 1)[1]
    keyed = gm.json("audit", "--db", url, "--json", "--key", home / f"{name}.checkpoint.pub")
    assert keyed == audit  # the same report as with the key named
    shown = gm("hands", "show", "1", "--db", url, env=env).stdout
    assert "evidence: verified" in shown and "newest signed checkpoint" in shown, shown
    export = ("hands", "export", "1", "--db", url, "--format", "json")
    exported = json.loads(gm(*export, env=env).stdout)
    assert exported["hand"] == 1 and exported["proof"]["verifier_key"], exported  # its proof


def test_without_a_home_or_a_key_the_audit_says_where_to_find_the_key(shared, gm, start_host):
    url, home = shared
    _played(url, home, start_host)
    refused = gm("audit", "--db", url, expect=2)
    assert refused.stdout == "" and refused.stderr.count("\n") == 1, refused.stderr
    assert "set $GMTOOL_HOME to it, or pass --key" in refused.stderr, refused.stderr
    elsewhere = gm("audit", "--db", url, env=clean_env(GMTOOL_HOME=str(home / "no")), expect=2)
    assert "is not a folder (the hosts' home folder)" in elsewhere.stderr, elsewhere.stderr
