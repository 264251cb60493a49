"""DynamoDB Local (AWS's engine, Java) as a child process of ``video-index local``.

Differs from :class:`video_index.dynamodb_local.DynamoDBLocal` (the test fixture) in
what a long-running stack needs: Java's output goes to a file, not to a pipe nobody
reads (a full pipe would block the engine), and Java runs in its own process group so
that Ctrl-C in a terminal reaches only ``video-index local``, which then stops the
worker before the engine instead of both dying at once.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from typing import IO, Final

from video_index.dynamodb_local import DynamoDBLocalError, find_jar, free_port

JAVA_MISSING: Final = (
    "Java is not installed (no `java` on PATH): DynamoDB Local needs Java 17 or newer. "
    "Install it (Debian/Ubuntu: apt-get install openjdk-17-jre-headless; macOS: "
    "brew install openjdk@17; or any JDK 17+ from https://adoptium.net) and make sure "
    "`java -version` works"
)
STOP_TIMEOUT_SECONDS: Final = 10.0


def find_java() -> str:
    """Path of ``java``, or :class:`DynamoDBLocalError` saying how to get it."""
    java = shutil.which("java")
    if java is None:
        raise DynamoDBLocalError(JAVA_MISSING)
    return java


class DynamoDBLocalProcess:
    """An in-memory DynamoDB Local on a loopback port; :meth:`stop` leaves no process."""

    def __init__(self, install_dir: Path | None = None, port: int | None = None) -> None:
        # Both checks run before anything starts, so a missing piece fails fast.
        self.java = find_java()
        self.jar = find_jar(install_dir).resolve()
        self.port = port or free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        self._log: IO[bytes] | None = None

    @property
    def pid(self) -> int | None:
        return self._process.pid if self._process else None

    def start(self, timeout: float = 60.0) -> DynamoDBLocalProcess:
        # Closed by stop(): it lives as long as the process writing to it.
        self._log = tempfile.TemporaryFile(prefix="dynamodb-local-")  # noqa: SIM115
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_")}
        self._process = subprocess.Popen(
            [
                self.java,
                f"-Djava.library.path={self.jar.parent / 'DynamoDBLocal_lib'}",
                "-jar",
                str(self.jar),
                "-inMemory",
                "-disableTelemetry",
                "-port",
                str(self.port),
            ],
            cwd=self.jar.parent,
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
                raise DynamoDBLocalError(f"DynamoDB Local exited at start: {output[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise DynamoDBLocalError(f"DynamoDB Local did not listen on {self.port} in {timeout}s")

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
