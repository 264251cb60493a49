"""moto's server in a process of its own: a DynamoDB endpoint over HTTP for tests and benchmarks.

The in-process :class:`video_index.local.stack.MotoServer` shares moto's backends with
``mock_aws``, which resets them whenever a test enters it; a server in its own process
keeps its tables until it stops, like any endpoint a user runs. Its output goes to a
file, not to a pipe nobody reads (a full pipe would block it), and it runs in its own
process group, so Ctrl-C in a terminal reaches only the Python program, which then
stops the server.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import tempfile
import time
from types import TracebackType
from typing import IO, Final

from video_index.core.errors import ConfigurationError

STOP_TIMEOUT_SECONDS: Final = 10.0


class MotoProcessError(ConfigurationError):
    """The moto server did not start; the message carries its output."""


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class MotoProcess:
    """``python -m moto.server`` on a loopback port; :meth:`stop` leaves no process."""

    def __init__(self, port: int | None = None) -> None:
        self.port = port or free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self, timeout: float = 60.0) -> MotoProcess:
        # Closed by stop(): it lives as long as the process writing to it.
        self._log = tempfile.TemporaryFile(prefix="moto-server-")  # noqa: SIM115
        # The server reads no AWS configuration of the user's: it answers any credentials.
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self._process = subprocess.Popen(
            [sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(self.port)],
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=self._log,
            stderr=subprocess.STDOUT,
            process_group=0,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                output = self._output()
                self.stop()
                raise MotoProcessError(f"the moto server exited at start: {output[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise MotoProcessError(f"the moto server did not listen on {self.port} in {timeout}s")

    def _output(self) -> str:
        if self._log is None:
            return ""
        self._log.seek(0)
        return self._log.read().decode(errors="replace").strip()

    def stop(self) -> None:
        """Terminate, then kill after :data:`STOP_TIMEOUT_SECONDS`; idempotent."""
        process, self._process = self._process, None
        if process is not None and process.poll() is None:
            process.terminate()
            try:
                process.wait(timeout=STOP_TIMEOUT_SECONDS)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
        if self._log is not None:
            self._log.close()
            self._log = None

    def __enter__(self) -> MotoProcess:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
