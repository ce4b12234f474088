"""A real `gmtool witness serve` process for the tests (tests/test_served_witness*.py):
started on a loopback port it picks itself (port 0), ready when its log line says where
it listens, stopped by its own pid; and a small HTTP client for the protocol tests."""

from __future__ import annotations

import http.client
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

from helpers import clean_env, gmtool_command

from gmtool.evidence.note import Signer

READY_TIMEOUT_S = 60


class ServedWitness:
    """A real `gmtool witness serve` process; its URL is the one it says it listens on."""

    def __init__(self, folder: Path, *logs: Path) -> None:
        self.folder = folder
        folder.mkdir(parents=True, exist_ok=True)
        self.key = folder / "witness.key"
        self.state = folder / "state"
        args = [str(a) for log in logs for a in ("--log", log)]
        self.proc = subprocess.Popen(
            [*gmtool_command(), "witness", "serve", "--listen", "127.0.0.1:0"]
            + ["--state", str(self.state), "--key", str(self.key), *args],
            env=clean_env(PYTHONUNBUFFERED="1"),
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
        )
        self.lines: list[str] = []
        self._said = threading.Condition()
        threading.Thread(target=self._read, daemon=True).start()
        with self._said:
            self._said.wait_for(
                lambda: self.url is not None or self.proc.poll() is not None, READY_TIMEOUT_S
            )
        assert self.url is not None, self.output

    def _read(self) -> None:
        for line in self.proc.stderr:
            with self._said:
                self.lines.append(line.rstrip("\n"))
                self._said.notify_all()
        with self._said:
            self._said.notify_all()

    @property
    def output(self) -> str:
        return "\n".join(self.lines)

    @property
    def url(self) -> str | None:
        found = [line.rsplit(" ", 1)[1] for line in self.lines if "listening on http" in line]
        return found[0] if found else None

    @property
    def port(self) -> int:
        return int(str(self.url).rsplit(":", 1)[1])

    @property
    def public(self) -> Path:
        return self.key.with_name(self.key.name + ".pub")

    def stop(self) -> int:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
        code = self.proc.wait(timeout=READY_TIMEOUT_S)
        assert "Traceback" not in self.output, self.output
        return code


def serving():
    """The body of a `served` fixture: `served(folder, *log_keys)` starts a ServedWitness;
    each is stopped (by its pid) after the test."""
    started: list[ServedWitness] = []

    def start(folder: Path, *logs: Path) -> ServedWitness:
        started.append(ServedWitness(folder, *logs))
        return started[-1]

    yield start
    for one in started:
        one.stop()


def log_key(tmp_path: Path) -> tuple[Signer, Path]:
    signer = Signer.generate("example.test/log")
    pub = tmp_path / "log.pub"
    pub.write_text(signer.verifier.text() + "\n")
    return signer, pub


def call(port: int, body: bytes, method: str = "POST", path: str = "/add-checkpoint"):
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=READY_TIMEOUT_S)
    try:
        connection.request(method, path, body)
        response = connection.getresponse()
        return response.status, response.getheader("Content-Type"), response.read()
    finally:
        connection.close()


def obeying_file_modes() -> list[str]:
    """The console as this user, made to obey file modes if it is root (root without the
    capabilities that bypass them)."""
    if os.geteuid() != 0:
        return gmtool_command()
    setpriv = shutil.which("setpriv")
    assert setpriv, "root needs setpriv to run the console without its file-mode bypass"
    return [setpriv, "--bounding-set", "-dac_override,-dac_read_search,-fowner", "--"] + (
        gmtool_command()
    )
