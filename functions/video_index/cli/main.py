"""The ``video-index`` command line (docs/cli.md): argument parsing and output only.

Subcommands:

* ``key check KEY [KEY...]`` — is each key valid, foreign or invalid (and why)?
* ``key make --kind … --device … --start … --duration-ms … FILE`` — the key a
  camera must upload FILE under (docs/keys.md).
* ``local``, ``status``, ``upload``, ``reconcile``, ``rebuild``, ``export``, ``annotate``,
  ``delete``, ``undelete``, ``restore``, ``hold``, ``retention`` — registered by their
  modules in this package.

Exit codes: 0 success, 1 the command ran and found a problem (a key that will
not be indexed), 2 bad usage (the message names the argument); each feature
command documents its own.

Importing this module reads no AWS configuration and imports no AWS SDK: the
commands import what they need only when they run.
"""

from __future__ import annotations

import argparse
import json
import sys
from collections.abc import Sequence
from datetime import datetime
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from video_index.cli import annotate as annotate_cli
from video_index.cli import camera as camera_cli
from video_index.cli import deletion as deletion_cli
from video_index.cli import device as device_cli
from video_index.cli import export as export_cli
from video_index.cli import hold as hold_cli
from video_index.cli import local as local_cli
from video_index.cli import ops as ops_cli
from video_index.cli import retention as retention_cli
from video_index.cli import status as status_cli
from video_index.cli import upload as upload_cli
from video_index.cli.args import device_arg, start_arg
from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE
from video_index.core.keys import (
    EXTENSIONS,
    KEY_PREFIX,
    KINDS,
    MAX_DURATION_MS,
    MIN_DURATION_MS,
    ForeignKey,
    InvalidKey,
    KeyClass,
    SegmentKey,
    ValidKey,
    classify_key,
    format_key,
    segment_id,
)
from video_index.core.timeunits import iso_of

_FOREIGN_REASON: Final = f"outside {KEY_PREFIX}: never indexed (not an error)"


# --- key check ---------------------------------------------------------------------------


def _status(result: KeyClass) -> str:
    match result:
        case ValidKey():
            return "valid"
        case ForeignKey():
            return "foreign"
        case InvalidKey():
            return "invalid"


def _as_json(key: str, result: KeyClass) -> dict[str, Any]:
    out: dict[str, Any] = {"key": key, "status": _status(result)}
    match result:
        case ValidKey(segment=segment):
            out["segment"] = {
                "kind": segment.kind,
                "device": segment.device,
                "start": iso_of(segment.start),
                "end": iso_of(segment.end),
                "duration_ms": segment.duration_ms,
                "id": segment.id,
                "ext": segment.ext,
            }
        case ForeignKey():
            out["reason"] = _FOREIGN_REASON
        case InvalidKey(reason=reason):
            out["reason"] = reason
    return out


def _details(result: KeyClass) -> Text:
    match result:
        case ValidKey(segment=s):
            return Text(
                f"{s.kind} · {s.device} · {iso_of(s.start)} · {s.duration_ms} ms · id {s.id}"
            )
        case ForeignKey():
            return Text(_FOREIGN_REASON)
        case InvalidKey(reason=reason):
            return Text(reason)


_STYLES: Final = {"valid": "green", "foreign": "yellow", "invalid": "bold red"}


def _key_check(args: argparse.Namespace, console: Console) -> int:
    results = [(key, classify_key(key)) for key in args.keys]
    if args.json:
        print(json.dumps([_as_json(key, result) for key, result in results], indent=2))
    else:
        table = Table(title="Key check", title_justify="left")
        table.add_column("key", overflow="fold")
        table.add_column("result")
        table.add_column("details", overflow="fold")
        for key, result in results:
            status = _status(result)
            # Text, not markup: a key may contain '[' and must be shown exactly.
            table.add_row(Text(key), Text(status, style=_STYLES[status]), _details(result))
        console.print(table)
    return EXIT_OK if all(isinstance(r, ValidKey) for _, r in results) else EXIT_PROBLEM


# --- key make ----------------------------------------------------------------------------


def _key_make(args: argparse.Namespace, parser: argparse.ArgumentParser) -> int:
    kind: str = args.kind
    low, high = MIN_DURATION_MS[kind], MAX_DURATION_MS[kind]
    if not low <= args.duration_ms <= high:
        parser.error(
            f"argument --duration-ms: {args.duration_ms} is out of range for {kind} "
            f"({low}..{high} ms)"
        )
    path: Path = args.file
    allowed = EXTENSIONS[kind]
    ext = args.ext or path.suffix.lstrip(".").lower()
    if ext not in allowed:
        source = "--ext" if args.ext else f"FILE ({path.name})"
        parser.error(
            f"argument --ext: extension {ext or '(none)'!r} from {source} is not allowed for "
            f"{kind}; use --ext with one of: {', '.join(allowed)}"
        )
    try:
        content = path.read_bytes()
    except OSError as exc:
        parser.error(f"argument FILE: cannot read {str(path)!r}: {exc.strerror or exc}")
    start: datetime = args.start
    try:
        segment = SegmentKey(
            kind=kind,
            device=args.device,
            start=start,
            duration_ms=args.duration_ms,
            id=segment_id(kind, args.device, start, args.duration_ms, content),
            ext=ext,
        )
    except ValueError as exc:  # every part was checked above; this is a last resort
        parser.error(f"the key would be invalid: {exc}")
    print(format_key(segment))
    return EXIT_OK


# --- parser ------------------------------------------------------------------------------


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="video-index",
        description="Index of camera video stored in Amazon S3.",
    )
    commands = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)

    key = commands.add_parser("key", help="object keys: check them, or make the key for a file")
    key_commands = key.add_subparsers(dest="key_command", metavar="KEY_COMMAND", required=True)

    check = key_commands.add_parser(
        "check",
        help="classify keys as valid, foreign or invalid",
        description=(
            "Classify each key: valid (indexed), foreign (outside v1/: ignored, not an "
            "error) or invalid (under v1/ but breaks a rule: never indexed). Exit code 0 "
            "when every key is valid, 1 otherwise."
        ),
    )
    check.add_argument("keys", nargs="+", metavar="KEY", help="S3 object key (not URL-encoded)")
    check.add_argument("--json", action="store_true", help="print JSON instead of a table")
    check.set_defaults(handler=lambda args, console, _: _key_check(args, console))

    make = key_commands.add_parser(
        "make",
        help="print the key a camera must upload FILE under",
        description=(
            "Print the key for FILE. Its id is the first 16 hex digits of the SHA-256 of "
            "kind, device, start, duration and the file's content, so a retried upload "
            "gets the same key."
        ),
    )
    make.add_argument("--kind", required=True, choices=KINDS)
    make.add_argument(
        "--device", required=True, type=device_arg, help="1-64 characters of [a-z0-9-]"
    )
    make.add_argument(
        "--start",
        required=True,
        type=start_arg,
        help="start of the recording, ISO 8601 with a time zone (e.g. 2026-11-30T12:00:00Z)",
    )
    make.add_argument(
        "--duration-ms", required=True, type=int, help="recorded duration in milliseconds"
    )
    make.add_argument(
        "--ext",
        choices=sorted({ext for exts in EXTENSIONS.values() for ext in exts}),
        help="file extension in the key (default: FILE's own extension)",
    )
    make.add_argument("file", type=Path, metavar="FILE", help="the segment file")
    make.set_defaults(handler=lambda args, _, parser: _key_make(args, parser), parser=make)

    # Subcommands that live with their feature; each module keeps AWS imports inside
    # its handlers so that importing the CLI stays cheap and reads no configuration.
    for register in (
        upload_cli.register,
        local_cli.register,
        status_cli.register,
        ops_cli.register,
        export_cli.register,
        annotate_cli.register,
        deletion_cli.register,
        device_cli.register,
        camera_cli.register,
        hold_cli.register,
        retention_cli.register,
    ):
        register(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help (0) or a usage error (2)
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    console = Console()
    try:
        result: int = args.handler(args, console, getattr(args, "parser", parser))
    except SystemExit as exc:  # parser.error() in a handler
        return exc.code if isinstance(exc.code, int) else EXIT_USAGE
    return result


if __name__ == "__main__":
    sys.exit(main())
