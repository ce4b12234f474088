"""GM key pairs: each GM signs what they ask for with their own Ed25519 key.

A GM's private key lives in their own configuration folder, never beside the store:
`$GMTOOL_KEYS/NAME.key`, else `$XDG_CONFIG_HOME/gmtool/keys/NAME.key`, else
`~/.config/gmtool/keys/NAME.key` (0600, in a 0700 folder), in Go's signer-key text form.
Its verifier key (`NAME+KEYID+KEY`) is what an operator registers in the store with the
GM's role. The key's name is the GM's user name, so a signature names who made it.
"""

from __future__ import annotations

import os
from pathlib import Path

from gmtool.bounds import unsafe_characters
from gmtool.errors import UsageError
from gmtool.evidence.note import NoteError, Signer, _check_name
from gmtool.evidence.witness import WitnessError, read_text, write_private


def key_dir() -> Path:
    """The folder of this user's GM keys."""
    if os.environ.get("GMTOOL_KEYS"):
        return Path(os.environ["GMTOOL_KEYS"])
    base = os.environ.get("XDG_CONFIG_HOME") or os.path.join(os.path.expanduser("~"), ".config")
    return Path(base) / "gmtool" / "keys"


def check_name(name: str) -> None:
    """UsageError unless `name` can name a key (and a key file): not empty, no spaces, '+'
    or '/', not starting with a dot, and no character `bounds.unsafe_characters` finds."""
    try:
        _check_name(name)
    except NoteError as error:
        raise UsageError(f"GM {name!r} cannot have a key: {error}") from None
    if "/" in name or "\\" in name or name.startswith((".", "-")) or "\0" in name:
        raise UsageError(
            f"GM {name!r} cannot have a key: a key name may not contain '/' or start with a "
            "dot or a dash"
        )
    unsafe = unsafe_characters(name)
    if unsafe:
        raise UsageError(
            f"GM {name!r} cannot have a key: a name may hold no control, bidirectional or "
            f"invisible character ({', '.join(unsafe)})"
        )


def key_path(name: str, folder: Path | None = None) -> Path:
    check_name(name)
    return (folder or key_dir()) / f"{name}.key"


def new_key(name: str, folder: Path | None = None, replace: bool = False) -> tuple[Signer, Path]:
    """A new key pair for GM `name`, its private half written 0600; refuses to replace a
    key (a GM who lost theirs makes a new one with `replace`, then has it registered)."""
    path = key_path(name, folder)
    if path.exists() and not replace:
        raise WitnessError(
            f"{path} already exists: that is {name}'s key (use --replace to "
            "make a new one; an operator must then register it again)"
        )
    signer = Signer.generate(name)
    try:
        path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        write_private(path, signer.text() + "\n")
    except OSError as error:
        raise WitnessError(f"cannot write {path} ({error.strerror or error})") from None
    return signer, path


def load_key(name: str, folder: Path | None = None) -> Signer | None:
    """GM `name`'s private key, or None when there is none here; WitnessError when the file
    is unreadable or not a key, or is the key of someone else."""
    path = key_path(name, folder)
    if not path.exists():
        return None
    try:
        signer = Signer.parse(read_text(path, "ascii"))
    except (OSError, NoteError) as error:
        raise WitnessError(f"{path}: not a GM key ({error})") from None
    if signer.name != name:
        raise WitnessError(f"{path} is {signer.name}'s key, not {name}'s")
    return signer
