"""``video-index camera``: camera identities (docs/cameras.md).

    video-index camera add NAME --out DIR (--stack NAME | --ready-file PATH)
    video-index camera list (--stack NAME | --ready-file PATH) [--json]
    video-index camera revoke NAME (--stack NAME | --ready-file PATH)
    video-index camera rotate NAME --out DIR (--stack NAME | --ready-file PATH)

``add`` and ``rotate`` write DIR: ``certificate.pem.crt``, ``private.pem.key`` (a new
file, mode 0600: an existing one or a symlink there is refused), ``camera.json``
(thing, credentials endpoint, role alias, bucket, region) and, locally, ``ca.pem``;
``video-index upload --camera DIR`` uses it.

Exit codes: 0 done; 1 the camera exists (add) or does not (revoke, rotate); 2 bad usage;
3 AWS refused or is unavailable.
"""

from __future__ import annotations

import argparse
import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, EXIT_UNAVAILABLE
from video_index.cli.targets import ENV_STACK
from video_index.core.contract import OUTPUT_CAMERA_IOT_POLICY, OUTPUT_CAMERA_ROLE_ALIAS

#: Stack outputs of infra/cameras.py.
OUTPUT_ROLE_ALIAS: Final = OUTPUT_CAMERA_ROLE_ALIAS
OUTPUT_IOT_POLICY: Final = OUTPUT_CAMERA_IOT_POLICY


@dataclass(frozen=True)
class CameraTarget:
    """Where cameras are provisioned: IoT, the names the stack gave, how certificates are made."""

    iot: Any
    iot_policy: str
    role_alias: str
    bucket: str
    region: str
    endpoint: str
    issuer: Any
    ca_pem: str | None


def _deployed(name: str) -> CameraTarget:
    from video_index.cameras.provision import aws_issuer, credentials_endpoint
    from video_index.cli.targets import new_session
    from video_index.core.contract import OUTPUT_BUCKET
    from video_index.ops.deployed import DeployedStack

    stack = DeployedStack.open(name, new_session())
    iot = stack.client("iot")
    return CameraTarget(
        iot=iot,
        iot_policy=stack[OUTPUT_IOT_POLICY],
        role_alias=stack[OUTPUT_ROLE_ALIAS],
        bucket=stack[OUTPUT_BUCKET],
        region=str(stack.session.region_name),
        endpoint=credentials_endpoint(iot),
        issuer=aws_issuer,
        ca_pem=None,
    )


def _local(ready_file: Path) -> CameraTarget:
    from video_index.local import cameras as local
    from video_index.local.aws import client, isolated_session
    from video_index.local.camera_ca import LocalCertificateAuthority

    ready = json.loads(ready_file.read_text(encoding="utf-8"))
    session = isolated_session(
        ready["aws_access_key_id"], ready["aws_secret_access_key"], ready["region"]
    )
    authority = LocalCertificateAuthority(Path(ready[local.READY_CA_DIRECTORY]))
    return CameraTarget(
        iot=client(session, "iot", ready["s3"]),
        iot_policy=ready[local.READY_IOT_POLICY],
        role_alias=ready[local.READY_ROLE_ALIAS],
        bucket=ready["bucket"],
        region=ready["region"],
        endpoint=ready[local.READY_ENDPOINT],
        issuer=authority.issuer,
        ca_pem=authority.ca_file.read_text(encoding="ascii"),
    )


def open_target(args: argparse.Namespace, parser: argparse.ArgumentParser) -> CameraTarget:
    if args.ready_file is not None:
        try:
            return _local(args.ready_file)
        except (OSError, ValueError, KeyError) as exc:
            parser.error(f"argument --ready-file: not a running `video-index local`: {exc}")
    name = args.stack or os.environ.get(ENV_STACK)
    if not name:
        parser.error(f"argument --stack: required (or --ready-file, or set {ENV_STACK})")
    return _deployed(name)


def register(commands: Any) -> None:
    """Add ``camera`` and its subcommands to the ``video-index`` parser."""
    camera = commands.add_parser(
        "camera",
        help="camera identities: add, list, revoke, rotate (docs/cameras.md)",
        description="One AWS IoT thing and certificate per camera; each may add only its own "
        "footage (v1/<kind>/<its name>/), never overwrite or delete.",
    )
    sub = camera.add_subparsers(dest="camera_command", metavar="CAMERA_COMMAND", required=True)
    for name, help_text in (
        ("add", "provision camera NAME and write what it needs into --out DIR"),
        ("list", "the cameras, with their certificates' statuses"),
        ("revoke", "deactivate camera NAME's certificates: its next credential request fails"),
        ("rotate", "a new certificate for camera NAME into --out DIR; the old ones deactivated"),
    ):
        command = sub.add_parser(
            name,
            help=help_text,
            description=f"{help_text[0].upper()}{help_text[1:]}. Exit codes: 0 done; 1 the "
            "camera exists (add) or does not (revoke, rotate); 2 bad usage; 3 AWS refused or "
            "is unavailable.",
        )
        where = command.add_mutually_exclusive_group()
        where.add_argument("--stack", metavar="NAME", help=f"the deployed stack (or ${ENV_STACK})")
        where.add_argument(
            "--ready-file",
            type=Path,
            metavar="PATH",
            help="a running `video-index local` (default: its ready file at the default place)",
        )
        if name != "list":
            command.add_argument("name", metavar="NAME", help="the camera's device name")
        if name in ("add", "rotate"):
            command.add_argument(
                "--out", type=Path, required=True, metavar="DIR", help="directory to write"
            )
        command.add_argument("--json", action="store_true", help="print JSON instead")
        command.set_defaults(handler=_run, parser=command)


def _run(args: argparse.Namespace, console: Console, parser: argparse.ArgumentParser) -> int:
    from botocore.exceptions import BotoCoreError, ClientError

    from video_index.core.errors import BadInput, Conflict, NotFound, VideoIndexError

    try:
        target = open_target(args, parser)
        result = _COMMANDS[args.camera_command](target, args)
    except BadInput as exc:
        flag = {"NAME": "NAME", "out": "--out"}.get(exc.parameter or "", exc.parameter)
        parser.error(f"argument {flag}: {exc.message}")
    except (Conflict, NotFound) as exc:
        console.print(Text(str(exc), style="bold red"))
        return EXIT_PROBLEM
    except (ClientError, BotoCoreError, VideoIndexError) as exc:
        console.print(Text(f"AWS refused or is unavailable: {exc}", style="bold red"))
        return EXIT_UNAVAILABLE
    if args.json:
        print(json.dumps(result, indent=2))
    else:
        _show(console, args.camera_command, result)
    return EXIT_OK


def _show(console: Console, command: str, result: Any) -> None:
    """What a command did, in words (JSON only with --json)."""
    if command == "list":
        table = Table(title=f"{len(result)} cameras", title_justify="left")
        for column in ("camera", "active", "certificates"):
            table.add_column(column)
        for camera in result:
            certificates = ", ".join(
                f"{c['id']} ({c['status'].lower()})" for c in camera["certificates"]
            )
            active = "yes" if camera["active"] else "no"
            table.add_row(Text(camera["camera"]), active, Text(certificates))
        console.print(table)
    elif command == "revoke":
        console.print(
            Text(
                f"camera {result['camera']} revoked: {len(result['deactivated'])} "
                "certificate(s) deactivated"
            )
        )
    else:
        done = "added" if command == "add" else "given a new certificate"
        console.print(
            Text(
                f"camera {result['camera']} {done}: certificate {result['certificate_id']}; its "
                f"identity is in {result['directory']} (video-index upload --camera "
                f"{result['directory']})"
            )
        )


def _add(target: CameraTarget, args: argparse.Namespace) -> dict[str, Any]:
    from video_index.cameras.provision import add_camera, camera_name

    name = camera_name(args.name)
    _check_out(args.out)
    issued = add_camera(target.iot, name, iot_policy=target.iot_policy, issuer=target.issuer)
    return _write(target, name, issued, args.out)


def _rotate(target: CameraTarget, args: argparse.Namespace) -> dict[str, Any]:
    from video_index.cameras.provision import camera_name, rotate_camera

    name = camera_name(args.name)
    _check_out(args.out)
    issued = rotate_camera(target.iot, name, iot_policy=target.iot_policy, issuer=target.issuer)
    return _write(target, name, issued, args.out)


def _check_out(directory: Path) -> None:
    from video_index.cameras.identity import check_free

    check_free(directory)


def _write(target: CameraTarget, name: str, issued: Any, out: Path) -> dict[str, Any]:
    from video_index.cameras.identity import write_identity

    write_identity(
        out,
        thing_name=name,
        endpoint=target.endpoint,
        role_alias=target.role_alias,
        bucket=target.bucket,
        region=target.region,
        certificate_pem=issued.certificate_pem,
        private_key_pem=issued.private_key_pem,
        ca_pem=target.ca_pem,
    )
    return {"camera": name, "certificate_id": issued.certificate_id, "directory": str(out)}


def _list(target: CameraTarget, args: argparse.Namespace) -> list[dict[str, Any]]:
    from video_index.cameras.provision import list_cameras

    return [
        {
            "camera": record.name,
            "active": record.active,
            "certificates": [{"id": cid, "status": status} for cid, status in record.certificates],
        }
        for record in list_cameras(target.iot)
    ]


def _revoke(target: CameraTarget, args: argparse.Namespace) -> dict[str, Any]:
    from video_index.cameras.provision import revoke_camera

    return {"camera": args.name, "deactivated": revoke_camera(target.iot, args.name)}


_COMMANDS: Final[dict[str, Any]] = {
    "add": _add,
    "list": _list,
    "revoke": _revoke,
    "rotate": _rotate,
}
