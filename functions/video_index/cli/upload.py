"""``video-index upload``: the camera uploader's command line (docs/uploading.md).

    video-index upload FILE --device D --kind video --start ISO --duration-ms N [--ext E]
    video-index upload DIRECTORY --device D --kind video [--manifest M.json]

A FILE is uploaded under the key docs/keys.md derives from kind, device, start,
duration and content, with a conditional write (:mod:`video_index.upload`).
A DIRECTORY uploads each of its files named ``<start>_<duration_ms>.<ext>``, or listed in
``--manifest``; other files are skipped with the reason. The bucket and S3 are
``--bucket``/``$VIDEO_INDEX_BUCKET`` and the standard boto3 variables, a camera's identity
(``--camera``), or a running ``video-index local`` (``--ready-file``, found by itself at
its default place). Exit codes: :data:`EXIT_CODES_HELP`.

Importing this module imports no AWS SDK: boto3 and the uploader are imported by
the handler.
"""

from __future__ import annotations

import argparse
import json
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final, NoReturn

from rich.console import Console
from rich.text import Text

from video_index.cli.args import device_arg, start_arg
from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, EXIT_UNAVAILABLE
from video_index.core.contract import ENV_BUCKET as BUCKET_ENV
from video_index.core.keys import EXTENSIONS, KINDS

if TYPE_CHECKING:
    from video_index.upload import FileOutcome, ManifestEntry

#: A conflict (or, in directory mode, some files failing) is a problem the command found.
EXIT_CONFLICT: Final = EXIT_PROBLEM
EXIT_S3_UNAVAILABLE: Final = EXIT_UNAVAILABLE

EXIT_CODES_HELP: Final = """\
exit codes:
  0  every file uploaded, or already present with the same content
     (files skipped in directory mode do not count)
  1  conflict: the key already holds different content (both SHA-256 shown);
     directory mode: some files conflicted or failed
  2  bad arguments (the message names the argument)
  3  S3 unavailable after retries, or refusing the request (error code shown);
     directory mode: S3 failed for every file attempted
"""

#: The uploader's argument names as the command line spells them.
_FLAGS: Final = {
    "kind": "--kind",
    "device": "--device",
    "start": "--start",
    "duration_ms": "--duration-ms",
    "ext": "--ext",
    "path": "PATH",
    "file": "PATH",
    "directory": "PATH",
    "max_attempts": "--max-attempts",
}

_STYLES: Final = {
    "uploaded": "green",
    "already-present": "cyan",
    "skipped": "yellow",
    "conflict": "bold red",
    "failed": "bold red",
}

#: Injectable for tests (looked up at call time): the backoff's sleep and the client.
_sleep: Callable[[float], object] = time.sleep


def _s3_client(ready_file: Path | None = None) -> Any:
    """An S3 client from the standard boto3 configuration (env, profile, endpoint), or
    of the local stack a ready file describes."""
    import boto3
    from botocore.config import Config

    from video_index.aws.clients import S3_CONFIG

    # The uploader does its own backoff; SDK retries on top would multiply the attempts.
    config = S3_CONFIG.merge(Config(retries={"mode": "standard", "max_attempts": 1}))
    if ready_file is not None:
        from video_index.local.aws import LOCAL_S3_CONFIG, client
        from video_index.local.ready import ReadyStack

        ready = ReadyStack.read(ready_file)
        return client(ready.session(), "s3", ready["s3"], LOCAL_S3_CONFIG.merge(config))
    return boto3.client("s3", config=config)


# --- argument types ----------------------------------------------------------------------


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"{value} must be at least 1")
    return value


# --- the command -------------------------------------------------------------------------


def register(commands: Any) -> None:
    """Add ``upload`` to the ``video-index`` parser."""
    upload: argparse.ArgumentParser = commands.add_parser(
        "upload",
        help="upload a segment file (or a directory of them) to S3 under its key",
        description=(
            "Upload FILE under the key docs/keys.md derives from kind, device, start, duration "
            "and content, with a conditional write: an existing key is never overwritten. "
            "Uploading the same content again reports it as already present; different "
            "content under the same key is a conflict. Throttling, 409 conflicts and "
            "server errors are retried with backoff. With a DIRECTORY, each file named "
            "<start>_<duration_ms>.<ext> (e.g. 20261130T120000.000Z_10000.mp4) is "
            "uploaded and other files are skipped with the reason. The endpoint comes from "
            "the standard boto3 variables (AWS_ENDPOINT_URL_S3, AWS_ENDPOINT_URL, …)."
        ),
        epilog=EXIT_CODES_HELP,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    upload.add_argument(
        "path", type=Path, metavar="PATH", help="a segment file, or a directory of them"
    )
    upload.add_argument(
        "--device",
        type=device_arg,
        help="1-64 characters of [a-z0-9-] (required, but with --camera: its name)",
    )
    upload.add_argument(
        "--camera",
        type=Path,
        metavar="DIR",
        help="upload as this camera (`video-index camera add`): credentials from AWS IoT's "
        "credentials provider with its certificate, refreshed before they expire",
    )
    upload.add_argument("--kind", required=True, choices=KINDS, help="kind of the segment(s)")
    upload.add_argument(
        "--start",
        type=start_arg,
        help="start of the recording, ISO 8601 with a time zone, e.g. 2026-11-30T12:00:00Z "
        "(required for a file; not allowed for a directory)",
    )
    upload.add_argument(
        "--duration-ms",
        type=int,
        help="recorded duration in milliseconds (required for a file; not allowed for a directory)",
    )
    exts = ", ".join(f"{kind}: {'/'.join(allowed)}" for kind, allowed in EXTENSIONS.items())
    upload.add_argument("--ext", help=f"extension in the key (default: the file's own; {exts})")
    upload.add_argument(
        "--bucket",
        help=f"S3 bucket (default: ${BUCKET_ENV}, else the bucket of a running video-index local)",
    )
    upload.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="upload into a running `video-index local` (default, when no --bucket, "
        f"${BUCKET_ENV} or --camera is given: its ready file at the default place)",
    )
    upload.add_argument(
        "--manifest",
        type=Path,
        help='directory mode: JSON {"file name": {"start": ISO, "duration_ms": N}} for '
        "files whose names do not follow the convention",
    )
    upload.add_argument(
        "--max-attempts",
        type=_positive_int,
        default=6,
        help="requests per S3 operation before giving up (default: 6)",
    )
    upload.add_argument(
        "--as-is",
        action="store_true",
        help="upload a progressive MP4 as it is (by default it is rewritten as fragmented MP4 "
        "by stream copy, so players can stream it as stored)",
    )
    upload.add_argument("--json", action="store_true", help="print a JSON list of results")
    upload.set_defaults(handler=_upload, parser=upload)


def _upload(args: argparse.Namespace, console: Console, parser: argparse.ArgumentParser) -> int:
    path: Path = args.path
    if not path.exists():
        parser.error(f"argument PATH: {str(path)!r} does not exist")
    directory = path.is_dir()
    if directory:
        for flag, value in (
            ("--start", args.start),
            ("--duration-ms", args.duration_ms),
            ("--ext", args.ext),
        ):
            if value is not None:
                parser.error(
                    f"argument {flag}: not allowed when PATH is a directory (each file's "
                    "name gives it: <start>_<duration_ms>.<ext>)"
                )
    else:
        if args.start is None:
            parser.error("argument --start: required when PATH is a file")
        if args.duration_ms is None:
            parser.error("argument --duration-ms: required when PATH is a file")
        if args.manifest is not None:
            parser.error("argument --manifest: only allowed when PATH is a directory")
    from video_index.core.errors import VideoIndexError

    identity = _camera(args, parser) if args.camera is not None else None
    if args.device is None:
        parser.error("argument --device: required (or --camera)")
    ready = args.ready_file if identity is None else None
    bucket = args.bucket or os.environ.get(BUCKET_ENV) or (identity and identity.bucket)
    if not bucket and ready is not None:
        bucket = json.loads(ready.read_text(encoding="utf-8"))["bucket"]
    if not bucket:
        parser.error(f"argument --bucket: required (or set {BUCKET_ENV}, or run video-index local)")
    manifest = _read_manifest(args.manifest, parser) if args.manifest is not None else None
    try:
        s3 = _s3_client(ready) if identity is None else _camera_s3_client(identity)
        return _run(args, console, parser, s3, bucket, manifest)
    except VideoIndexError as exc:  # the credentials provider refused or is unreachable
        console.print(Text(f"failed          {exc}", style="bold red"), soft_wrap=True)
        return EXIT_S3_UNAVAILABLE


def _camera(args: argparse.Namespace, parser: argparse.ArgumentParser) -> Any:
    from video_index.cameras.identity import CameraIdentity
    from video_index.core.errors import BadInput

    try:
        identity = CameraIdentity.load(args.camera)
    except BadInput as exc:
        parser.error(f"argument --camera: {exc.message}")
    if args.device is None:
        args.device = identity.thing_name
    elif args.device != identity.thing_name:
        parser.error(
            f"argument --device: camera {identity.thing_name!r} may only upload its own "
            f"footage, not {args.device!r}"
        )
    return identity


def _camera_s3_client(identity: Any) -> Any:
    """An S3 client signing with the camera's credentials (endpoint: the boto3 variables)."""
    from botocore.config import Config

    from video_index.aws.clients import S3_CONFIG
    from video_index.upload.credentials import camera_session

    config = S3_CONFIG.merge(Config(retries={"mode": "standard", "max_attempts": 1}))
    return camera_session(identity).client("s3", config=config)


def _run(
    args: argparse.Namespace,
    console: Console,
    parser: argparse.ArgumentParser,
    s3: Any,
    bucket: str,
    manifest: dict[str, ManifestEntry] | None,
) -> int:
    from video_index import upload as uploader

    path: Path = args.path
    directory = path.is_dir()
    try:
        if directory:
            outcomes = uploader.upload_directory(
                s3,
                bucket,
                path,
                kind=args.kind,
                device=args.device,
                manifest=manifest,
                max_attempts=args.max_attempts,
                sleep=_sleep,
                as_is=args.as_is,
            )
        else:
            outcomes = [_upload_file(s3, bucket, args)]
    except uploader.UploadArgumentError as exc:
        parser.error(f"argument {_FLAGS.get(exc.argument, exc.argument)}: {exc.reason}")
    _show(outcomes, console, as_json=args.json, summary=directory)
    return exit_code(outcomes, directory=directory)


def _upload_file(s3: Any, bucket: str, args: argparse.Namespace) -> FileOutcome:
    from video_index import upload as uploader

    path: Path = args.path
    try:
        result = uploader.upload_segment(
            s3,
            bucket,
            path,
            kind=args.kind,
            device=args.device,
            start=args.start,
            duration_ms=args.duration_ms,
            ext=args.ext,
            max_attempts=args.max_attempts,
            sleep=_sleep,
            as_is=args.as_is,
        )
    except uploader.UploadConflict as exc:
        return uploader.FileOutcome.of_conflict(str(path), exc, path.stat().st_size)
    except uploader.UploadFailed as exc:
        return uploader.FileOutcome.of_failure(str(path), exc, path.stat().st_size)
    return uploader.FileOutcome.of_result(str(path), result)


def _read_manifest(path: Path, parser: argparse.ArgumentParser) -> dict[str, ManifestEntry]:
    from video_index.upload import ManifestEntry

    def bad(reason: str) -> NoReturn:
        parser.error(f"argument --manifest: {reason}")

    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except OSError as exc:
        bad(f"cannot read {str(path)!r}: {exc.strerror or exc}")
    except ValueError as exc:
        bad(f"{str(path)!r} is not JSON: {exc}")
    if not isinstance(document, dict):
        bad('must be a JSON object {"file name": {"start": ISO, "duration_ms": N}}')
    entries: dict[str, ManifestEntry] = {}
    for name, item in document.items():
        if not isinstance(item, dict):
            bad(f"entry {name!r} must be an object with start and duration_ms")
        try:
            start = start_arg(str(item["start"]))
            duration = item["duration_ms"]
            if isinstance(duration, bool) or not isinstance(duration, int):
                raise argparse.ArgumentTypeError("duration_ms must be a whole number")
        except KeyError as exc:
            bad(f"entry {name!r} lacks {exc.args[0]}")
        except argparse.ArgumentTypeError as exc:
            bad(f"entry {name!r}: {exc}")
        ext = item.get("ext")
        entries[str(name)] = ManifestEntry(start, duration, str(ext) if ext else None)
    return entries


def exit_code(outcomes: Sequence[FileOutcome], *, directory: bool) -> int:
    """The documented exit code of an upload (see the module docstring)."""
    attempted = [o for o in outcomes if o.status != "skipped"]
    bad = [o for o in attempted if o.status in ("conflict", "failed")]
    if not bad:
        return EXIT_OK
    s3_failures = [o for o in bad if o.status == "failed" and o.error_code is not None]
    if not directory:
        return EXIT_S3_UNAVAILABLE if s3_failures else EXIT_CONFLICT
    return EXIT_S3_UNAVAILABLE if len(s3_failures) == len(attempted) else EXIT_CONFLICT


# --- output ------------------------------------------------------------------------------


def _show(
    outcomes: Sequence[FileOutcome], console: Console, *, as_json: bool, summary: bool
) -> None:
    if as_json:
        print(json.dumps([o.as_json() for o in outcomes], indent=2))
        return
    for outcome in outcomes:
        # Text, not markup: keys and file names are shown exactly.
        line = Text(f"{outcome.status:<15} ", style=_STYLES[outcome.status])
        if outcome.status == "skipped" or outcome.key is None:
            line.append(outcome.path)
        else:
            line.append(outcome.key)
        if outcome.size is not None:
            line.append(f"  {outcome.size:,} B")
        if outcome.sha256 is not None:
            line.append(f"  sha256 {outcome.sha256[:12]}")
        console.print(line, soft_wrap=True)
        if outcome.reason is not None:
            console.print(Text(f"{'':<16}{outcome.reason}"), soft_wrap=True)
    if summary:
        counts: Counter[str] = Counter(outcome.status for outcome in outcomes)
        text = ", ".join(f"{counts[s]} {s}" for s in _STYLES if counts[s]) or "nothing to upload"
        console.print(Text(f"{len(outcomes)} files: {text}"), soft_wrap=True)
