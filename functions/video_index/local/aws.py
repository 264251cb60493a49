"""boto3 clients for the local stack: fixed fake credentials, explicit endpoints.

Nothing here reads the user's AWS configuration: no profile, no config or
credentials file, no environment credentials. The fixed key is written into the
ready file; moto serves every access key from one account and the stack's server
serves every region as its own (:func:`video_index.local.stack._one_region`), so a
program using other credentials (the AWS CLI with the user's own) sees the same tables
too.
"""

from __future__ import annotations

import os
from typing import Any, Final

import boto3
import botocore.session
from botocore.config import Config

from video_index.aws.clients import CLIENT_CONFIG, S3_CONFIG, Clients

#: Letters and digits only: the key also suits DynamoDB-compatible engines that accept no
#: other characters in an access key id (``--dynamodb-endpoint``).
ACCESS_KEY_ID: Final = "videoindexlocal"
SECRET_ACCESS_KEY: Final = "videoindexlocal"
REGION: Final = "us-east-1"

#: Loopback endpoints never go through a proxy from the environment (HTTP_PROXY...).
_NO_PROXY: Final = Config(proxies={})
#: Path-style addressing: the bucket is not a host name on 127.0.0.1.
LOCAL_S3_CONFIG: Final = S3_CONFIG.merge(Config(s3={"addressing_style": "path"}))


def isolated_session(
    access_key_id: str = ACCESS_KEY_ID,
    secret_access_key: str = SECRET_ACCESS_KEY,
    region: str = REGION,
) -> boto3.session.Session:
    """A boto3 session with these credentials that ignores profiles and config files."""
    core = botocore.session.Session(
        session_vars={
            "profile": (None, None, None, None),
            "config_file": (None, None, os.devnull, None),
            "credentials_file": (None, None, os.devnull, None),
        }
    )
    return boto3.session.Session(
        botocore_session=core,
        aws_access_key_id=access_key_id,
        aws_secret_access_key=secret_access_key,
        region_name=region,
    )


def client(
    session: boto3.session.Session, service: str, endpoint: str, config: Config | None = None
) -> Any:
    """A client of ``service`` at ``endpoint``, never proxied."""
    base = config or (LOCAL_S3_CONFIG if service == "s3" else CLIENT_CONFIG)
    factory: Any = session.client  # typed per literal service name; ours is a variable
    return factory(service, endpoint_url=endpoint, config=base.merge(_NO_PROXY))


def local_clients(session: boto3.session.Session, *, s3: str, sqs: str, dynamodb: str) -> Clients:
    """The clients ingest and the API use, pointed at the local endpoints (Secrets Manager:
    the moto server's, as S3's)."""
    return Clients(
        dynamodb=client(session, "dynamodb", dynamodb),
        s3=client(session, "s3", s3),
        sqs=client(session, "sqs", sqs),
        secretsmanager=client(session, "secretsmanager", s3),
        kms=client(session, "kms", s3),
    )
