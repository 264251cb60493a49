"""boto3 clients with one retry and timeout policy; built when asked, never at import."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import boto3
from botocore.config import Config

#: SDK-level retries absorb short throttling; what remains becomes an SQS retry.
CLIENT_CONFIG = Config(
    retries={"mode": "standard", "max_attempts": 3},
    connect_timeout=3,
    read_timeout=10,
)
#: Connections an S3 client keeps: as many as restore's copies in flight (botocore's
#: default of 10 makes every request beyond it open and drop a connection of its own).
S3_POOL_CONNECTIONS = 32
#: Presigned URLs must be SigV4 (the only scheme newer regions accept).
S3_CONFIG = CLIENT_CONFIG.merge(
    Config(signature_version="s3v4", max_pool_connections=S3_POOL_CONNECTIONS)
)


@dataclass(frozen=True)
class Clients:
    dynamodb: Any
    s3: Any
    sqs: Any
    #: Secrets Manager (the API's cursor key); None: one of the default session, made on
    #: first use (:func:`video_index.aws.secrets.reader`), so no function pays for it at
    #: start.
    secretsmanager: Any = None
    #: KMS (the export signing key, docs/playback.md#signed-exports); None: one of the
    #: default session, made on first use (:mod:`video_index.aws.kms`).
    kms: Any = None

    @classmethod
    def default(cls, session: boto3.session.Session | None = None) -> Clients:
        session = session or boto3.session.Session()
        return cls(
            dynamodb=session.client("dynamodb", config=CLIENT_CONFIG),
            s3=session.client("s3", config=S3_CONFIG),
            sqs=session.client("sqs", config=CLIENT_CONFIG),
        )
