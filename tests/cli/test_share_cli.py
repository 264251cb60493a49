"""``video-index share create|list|revoke`` on moto's DynamoDB (docs/shares.md).

Commands run through ``main([...])`` against a shares table named by ``--table`` and are
judged by their exit code, what they print and what the table then holds."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterator
from typing import Any
from urllib.parse import parse_qs, urlsplit

import boto3
import pytest
from moto import mock_aws

from video_index.cli import targets
from video_index.cli.main import main
from video_index.core.contract import ENV_SHARES_TABLE
from video_index.core.table_schema import shares_table_definition

TABLE = "shares"
HOUR = ["--from", "2026-10-01T10:00:00Z", "--to", "2026-10-01T11:00:00Z"]


@pytest.fixture(autouse=True)
def wide_terminal(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "300")
    monkeypatch.delenv(targets.ENV_STACK, raising=False)
    monkeypatch.delenv(ENV_SHARES_TABLE, raising=False)


@pytest.fixture
def dynamodb() -> Iterator[Any]:
    with mock_aws():
        client = boto3.client("dynamodb", region_name="us-east-1")
        client.create_table(**shares_table_definition(TABLE))
        yield client


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str]:
    code = main(["share", *args, "--table", TABLE])
    return code, capsys.readouterr().out


def test_create_list_and_revoke_by_the_creator_or_an_admin(
    dynamodb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    # Given a share made from the command line by alice, for a day
    code, out = _cli(
        capsys, "create", "--device", "cam-1", *HOUR, "--expires-in", "86400", "--by", "alice",
        "--json",
    )  # fmt: skip
    assert code == 0, out
    share = json.loads(out)
    assert (share["from"], share["to"]) == ("2026-10-01T10:00:00.000Z", "2026-10-01T11:00:00.000Z")
    assert (share["created_by"], share["state"]) == ("alice", "active")
    # Then its links carry the secret, which the table holds only as its SHA-256
    secret = parse_qs(urlsplit(share["playlist_url"]).query)["key"][0]
    assert urlsplit(share["url"]).fragment == f"{share['share_id']}.{secret}"
    items = dynamodb.scan(TableName=TABLE)["Items"]
    assert {i["secret_sha256"]["S"] for i in items} == {hashlib.sha256(secret.encode()).hexdigest()}
    assert secret not in json.dumps(items)
    # And it is listed
    code, out = _cli(capsys, "list", "--device", "cam-1", "--json")
    assert [json.loads(line)["share_id"] for line in out.splitlines()] == [share["share_id"]]
    # When bob revokes it, Then he may not (exit 1) and it stays active
    code, out = _cli(capsys, "revoke", share["share_id"], "--by", "bob")
    assert code == 1 and "only its creator or an admin" in out
    # And with --admin he may
    code, out = _cli(capsys, "revoke", share["share_id"], "--by", "bob", "--admin", "--json")
    assert code == 0 and json.loads(out)["state"] == "revoked"
    assert json.loads(out)["revoked_by"] == "bob"


def test_a_window_over_the_maximum_is_bad_input(
    dynamodb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    longer = ["--from", "2026-10-01T10:00:00Z", "--to", "2026-10-01T11:00:01Z"]
    code, out = _cli(capsys, "create", "--device", "cam-1", *longer, "--expires-in", "60")
    assert code == 2 and "at most 3600 s" in out


def test_an_unknown_share_is_a_problem_and_a_bad_id_bad_usage(
    dynamodb: Any, capsys: pytest.CaptureFixture[str]
) -> None:
    assert _cli(capsys, "revoke", "0" * 32)[0] == 1
    assert _cli(capsys, "revoke", "not-an-id")[0] == 2
