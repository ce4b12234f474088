"""The operations library: everything the console does, as calls a program can make.

Each `gmtool` command parses its arguments, makes one call here (or into a lower layer
for reads), and prints what it returns. So a script or a service gets exactly what the
command line gets:

    from gmtool.ops import audit
    from gmtool.store.db import connect
    with connect(path) as store:
        report = audit(store)          # report.as_json() is `gmtool audit --json`

- `ops.audit`: the audit with its checkpoints and keys (`audit`, `Audit`);
- `ops.verify`: a store against a checkpoint, an exported report offline;
- `ops.checkpoints`: which signed checkpoints and keys a store is checked with;
- `ops.deploy`, `ops.profile`: plan, deploy and roll back profiles, each read once;
  `ops.deploy_plan`: saved plans, signed by their GM and applied exactly or not at all;
- `ops.gm`: GM requests with roles, signed and logged: users, coin adjustments;
- `ops.tables`: GM commands to tables: kick and close through the host, reopening;
- `ops.demo`: the demo's store, operator and tables.

The live host is `gmtool.house`; this layer sits above it, the store and the audit, and
below the command line only.
"""

from gmtool.ops.audit import Audit, audit
from gmtool.ops.deploy import deploy_profile, plan_deployment, rollback_profile
from gmtool.ops.deploy_plan import apply_plan, save_plan
from gmtool.ops.profile import Profile, read_profile
from gmtool.ops.verify import verify_checkpoint, verify_report

__all__ = [
    "Audit",
    "Profile",
    "apply_plan",
    "audit",
    "deploy_profile",
    "plan_deployment",
    "read_profile",
    "rollback_profile",
    "save_plan",
    "verify_checkpoint",
    "verify_report",
]
