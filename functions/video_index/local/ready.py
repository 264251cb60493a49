"""The ready file of ``video-index local``: what other programs need to use the stack.

``video-index local --ready-file PATH`` writes it once everything answers and removes
it at shutdown (docs/local.md). Other commands (``status``, ``reconcile``, ``rebuild``
…) read it with ``--ready-file`` and get clients and settings pointed at the stack.
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from video_index.aws.clients import Clients
from video_index.core.settings import Settings
from video_index.local.aws import client, isolated_session, local_clients

#: The ready file's key for how long the stack's API caches the serving generation: a
#: rebuild in another process waits a little longer before dropping the old one.
API_GENERATION_CACHE = "api_generation_cache_seconds"


def write_ready_file(path: Path, endpoints: dict[str, Any]) -> None:
    """Write the ready file atomically (readers never see half a file)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    temporary.write_text(json.dumps(endpoints, indent=2) + "\n")
    os.replace(temporary, path)


def read_ready_file(path: Path) -> dict[str, Any]:
    data = json.loads(path.read_text())
    if not isinstance(data, dict):
        raise ValueError(f"{path} does not hold a JSON object")
    return data


@dataclass(frozen=True)
class ReadyStack:
    """A running local stack, as its ready file describes it."""

    values: dict[str, Any]

    @classmethod
    def read(cls, path: Path) -> ReadyStack:
        return cls(read_ready_file(path))

    def __getitem__(self, name: str) -> Any:
        return self.values[name]

    def session(self) -> Any:
        return isolated_session(
            self["aws_access_key_id"], self["aws_secret_access_key"], self["region"]
        )

    def clients(self) -> Clients:
        return local_clients(
            self.session(), s3=self["s3"], sqs=self["sqs"], dynamodb=self["dynamodb"]
        )

    def client(self, service: str) -> Any:
        """A client of one service of the stack (``cloudwatch`` is served by moto)."""
        endpoint = self.values.get(service) or self["sqs" if service == "cloudwatch" else service]
        return client(self.session(), service, str(endpoint))

    def clock(self) -> Callable[[], float]:
        """The stack's clock (epoch seconds): the real one moved by its ``--now``."""
        offset = float(self.values.get("clock_offset_seconds", 0.0))
        return lambda: time.time() + offset

    def settings(self) -> Settings:
        extra: dict[str, Any] = {}
        if "retention_days" in self.values:
            extra["retention_days"] = dict(self["retention_days"])
        return Settings(
            bucket=self["bucket"],
            table=self["table"],
            annotations_table=self.values.get("annotations_table"),
            queue_url=self.values.get("queue_url"),
            dlq_url=self.values.get("dlq_url"),
            export_queue_url=self.values.get("export_queue_url"),
            deletions_table=self.values.get("deletions_table"),
            deletion_queue_url=self.values.get("deletion_queue_url"),
            holds_table=self.values.get("holds_table"),
            export_signing_key=self.values.get("export_signing_key"),
            **extra,
        )
