"""A real engram-server for the tests, from the workspace's build, on a free
port with a database in a temporary folder; tests that stop or restart a
server get one of their own.

ENGRAM_SERVER_BINARY names the binary; by default it is the workspace's
debug build (target/debug/engram-server, or under $CARGO_TARGET_DIR), which
the test command builds first.
"""

from __future__ import annotations

import os
import secrets
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from types import TracebackType

import pytest

from engram_client import Scope

REPO = Path(__file__).resolve().parents[3]
# How long a server may take to start or stop.
STARTUP_TIMEOUT = 30.0
LISTENING = "engram-server listening on "


def pytest_report_header() -> str:
    """Which engram_client is tested (check.sh tests the installed wheel) and
    which server runs."""
    import engram_client

    return f"engram_client from {Path(engram_client.__file__).parent}; server {server_binary()}"


def server_binary() -> Path:
    """The engram-server binary the tests run."""
    configured = os.environ.get("ENGRAM_SERVER_BINARY")
    if configured:
        return Path(configured)
    target = Path(os.environ.get("CARGO_TARGET_DIR") or REPO / "target")
    if not target.is_absolute():
        target = REPO / target
    return target / "debug" / "engram-server"


class Server:
    """An engram-server process on a database of its own, which can be
    stopped and started again on the same database and port, as a restarted
    service comes back for its clients."""

    def __init__(self, folder: Path, *args: str) -> None:
        """A server keeping its data in `folder`, run with extra flags `args`;
        not started yet."""
        self.folder = folder
        self.args = list(args)
        self.port = 0
        self.process: subprocess.Popen[bytes] | None = None
        self.starts = 0

    @property
    def address(self) -> str:
        """``127.0.0.1:PORT``."""
        return f"127.0.0.1:{self.port}"

    def start(self) -> Server:
        """Starts the server (on the port it had, if it ran before) and waits
        until it listens."""
        binary = server_binary()
        if not binary.is_file():
            raise RuntimeError(f"no engram-server at {binary}: build it (cargo build -p engram-server) or set ENGRAM_SERVER_BINARY")
        self.starts += 1
        stdout = self.folder / f"stdout.{self.starts}"
        with open(stdout, "wb") as out, open(self.folder / "server.log", "ab") as log:
            self.process = subprocess.Popen(
                [
                    str(binary),
                    "--listen", f"127.0.0.1:{self.port}",
                    "--database", f"sqlite://{self.folder / 'engram.db'}",
                    "--log", "warn",
                    *self.args,
                ],
                stdout=out,
                stderr=log,
            )
        deadline = time.monotonic() + STARTUP_TIMEOUT
        while time.monotonic() < deadline:
            for line in stdout.read_text().splitlines():
                if line.startswith(LISTENING):
                    self.port = int(line[len(LISTENING):].rpartition(":")[2])
                    return self
            if self.process.poll() is not None:
                raise RuntimeError(f"engram-server exited with {self.process.returncode}:\n{self.log()}")
            time.sleep(0.02)
        raise RuntimeError(f"engram-server did not listen within {STARTUP_TIMEOUT} s:\n{self.log()}")

    def stop(self) -> None:
        """Stops the server cleanly (SIGTERM) and checks that it exited 0."""
        if self.process is None:
            return
        process, self.process = self.process, None
        process.send_signal(signal.SIGTERM)
        code = process.wait(timeout=STARTUP_TIMEOUT)
        assert code == 0, f"engram-server exited with {code}:\n{self.log()}"

    def kill(self) -> None:
        """Ends the server however it is (after a test that failed)."""
        if self.process is not None:
            self.process.kill()
            self.process.wait()
            self.process = None

    def __enter__(self) -> Server:
        """Starts the server."""
        return self.start()

    def __exit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        """Stops the server cleanly after a test that passed; ends it anyway."""
        try:
            if exc_type is None:
                self.stop()
        finally:
            self.kill()

    def log(self) -> str:
        """What the server wrote to standard error."""
        path = self.folder / "server.log"
        return path.read_text(errors="replace") if path.exists() else ""


@pytest.fixture(scope="session")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Server]:
    """One server for the tests that only talk to it; each works in a
    namespace of its own."""
    with Server(tmp_path_factory.mktemp("server")) as running:
        yield running


@pytest.fixture
def own_server(tmp_path: Path) -> Iterator[Server]:
    """A server of the test's own, to stop and start again."""
    with Server(tmp_path) as running:
        yield running


@pytest.fixture
def namespace() -> str:
    """A fresh namespace, so tests sharing a server see only their own records."""
    return "py-" + secrets.token_hex(4)


@pytest.fixture
def scope(namespace: str) -> Scope:
    """A scope in the test's namespace."""
    return Scope(namespace=namespace)
