"""`gmtool witness serve`: the reference witness that cosigns a store's checkpoints (C2SP
tlog-witness over HTTP), run by someone the store's host cannot reach (docs/evidence.md)."""

from __future__ import annotations

from pathlib import Path

import typer

from gmtool.cli.console import Abort, console

app = typer.Typer(
    help="A witness that checks and cosigns stores' checkpoints (C2SP tlog-witness).",
    no_args_is_help=True,
    rich_markup_mode=None,
)


@app.command("serve")
def serve(
    listen: str = typer.Option(
        ..., "--listen", metavar="HOST:PORT", help="Where to listen (port 0: any free port)."
    ),
    state: Path = typer.Option(
        ..., "--state", metavar="DIR", help="The witness's own state: the checkpoints it holds."
    ),
    key: Path = typer.Option(
        ...,
        "--key",
        metavar="FILE",
        help="Its signing key (made if missing, 0600; the verifier key goes to FILE.pub).",
    ),
    logs: list[Path] = typer.Option(
        ...,
        "--log",
        metavar="PUB",
        help="A store's <db>.checkpoint.pub: a log it witnesses (repeat for several).",
    ),
    name: str = typer.Option(
        "gmtool-witness", "--name", help="The key's name, when the key is made."
    ),
) -> None:
    """Serve POST /add-checkpoint (cosign a checkpoint consistent with the last one held)
    and GET /checkpoint/ORIGIN (the cosigned checkpoint held, for auditors) until stopped
    (SIGTERM or Ctrl-C). Give its URL and FILE.pub to `gmtool gm witness add`."""
    import signal

    from gmtool.ops.witness_serve import open_witness, parse_listen

    host, port = parse_listen(listen)
    witness, made = open_witness(state, key, logs, name)
    from gmtool.evidence.witness_http import WitnessServer

    try:
        server = WitnessServer((host, port), witness, console.diagnostic)
    except OSError as error:
        raise Abort(f"--listen {listen}: cannot listen there: {error.strerror or error}") from None
    if made:
        console.diagnostic(f"made the witness key {key} (verifier key {made})")

    def stop(signum, frame) -> None:
        raise SystemExit(0)

    signal.signal(signal.SIGTERM, stop)
    bound_host, bound_port = server.server_address[:2]
    console.diagnostic(f"witness key: {witness.cosigner.key.text()}")
    console.diagnostic(
        f"witnessing {', '.join(sorted(witness.logs))}; listening on "
        f"http://{bound_host}:{bound_port}"
    )
    try:
        server.serve_forever(poll_interval=0.2)
    finally:
        server.server_close()
