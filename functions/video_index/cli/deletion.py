"""``video-index delete | undelete`` (docs/deletion.md, docs/cli.md); each command's help text
is its ``*_DESCRIPTION``. ``restore`` shares their configuration and exit codes
(:mod:`video_index.cli.restore`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from video_index.cli.args import BY_HELP, add_window, require, who
from video_index.cli.console import make_console
from video_index.cli.devices import add_new_device, check_target_device
from video_index.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBLEM, guarded
from video_index.core.timeunits import to_epoch_ms

KINDS = ("video", "sensor", "analysis")


EXITS: Final = """
Configuration: a running video-index local (--ready-file, found by itself at its
default place) or the VIDEO_INDEX_* variables and the usual boto3 configuration.
Exit codes: 0 done; 1 the job failed or was withdrawn, a deletion request blocks an
undelete, or some deleted keys could not come back; 2 bad usage (a missing option is
named; a window the wrong way round; an unknown device); 3 AWS unavailable; 130
interrupted (a deletion job continues with --resume ID).
"""

DELETE_DESCRIPTION: Final = (
    """\
Delete a window of a device's footage: record a deletion request (in force from now on:
what a camera uploads into the window later is deleted again) and run its job here with
a progress bar, the code the deletion worker runs. With --stack it runs on the deployed
stack's bulk deletion machine instead: several --device, a window of any length, one
recorded and checkpointed request per device and 31 days (docs/bulk.md).

  video-index delete --device D --from ISO --to ISO [--kind K] [--erase] [--dry-run]
  video-index delete --stack NAME --device D [--device D2 ...] --from ISO --to ISO
  video-index delete --withdraw ID | --resume ID

--dry-run shows what the window holds and records nothing; --withdraw ID withdraws a
request (enforcement ends); --resume ID continues a job whose runner stopped, or retries a
failed one from its checkpoint (a failed job exits 1: its request stays in force).
"""
    + EXITS
)

UNDELETE_DESCRIPTION: Final = (
    """\
Bring back the newest version of each deleted key of a device's window (the bucket keeps
deleted versions for its undelete window). While a deletion request covers the window
it is refused, unless --withdraw withdraws those requests first. --dry-run says what
would come back and which requests would be withdrawn, and changes nothing.
"""
    + EXITS
)


def register(commands: Any) -> None:
    delete = commands.add_parser(
        "delete",
        help="delete a window of a device's video (a recorded, enforced deletion request)",
        description=DELETE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _window_arguments(delete, required=False, several=True)
    delete.add_argument(
        "--erase", action="store_true", help="remove every version (not undeletable)"
    )
    delete.add_argument(
        "--stack",
        metavar="NAME",
        help="run on this deployed stack's bulk deletion machine (several --device, any length)",
    )
    delete.add_argument(
        "--interval",
        type=float,
        default=5.0,
        metavar="SECONDS",
        help="with --stack: seconds between two looks at the execution (default 5)",
    )
    delete.add_argument("--dry-run", action="store_true", help="show what would go; record nothing")
    delete.add_argument("--withdraw", metavar="ID", help="withdraw the deletion request ID")
    delete.add_argument("--resume", metavar="ID", help="continue (or retry a failed) job of ID")
    delete.set_defaults(handler=lambda args, console, parser: _delete(args, console, parser))
    delete.set_defaults(parser=delete)

    undelete = commands.add_parser(
        "undelete",
        help="bring back the newest version of each deleted key of a window",
        description=UNDELETE_DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _window_arguments(undelete, required=True)
    undelete.add_argument("--dry-run", action="store_true", help="report only; change nothing")
    undelete.add_argument(
        "--withdraw",
        action="store_true",
        help="withdraw the deletion requests that cover the window first",
    )
    undelete.add_argument("--json", action="store_true", help="print the report as JSON")
    undelete.set_defaults(handler=lambda args, console, _: _undelete(args, console))


def _window_arguments(
    parser: argparse.ArgumentParser, *, required: bool, several: bool = False
) -> None:
    add_window(parser, required=required, several=several)
    parser.add_argument("--kind", choices=KINDS, help="one kind only (default: every kind)")
    parser.add_argument("--by", default=None, help=BY_HELP)
    add_new_device(parser)
    target(parser)


def target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="a running `video-index local` (default: its ready file at the default place)",
    )


def settings_and_clients(args: argparse.Namespace) -> tuple[Any, Any]:
    from video_index.aws.clients import Clients
    from video_index.core.settings import Settings

    if args.ready_file is None:
        return Settings.from_env(), Clients.default()
    from video_index.local.ready import ReadyStack

    ready = ReadyStack.read(args.ready_file)
    return ready.settings(), ready.clients()


def _jobs(args: argparse.Namespace) -> Any:
    from video_index.deletion.service import build_deletion_jobs

    settings, clients = settings_and_clients(args)
    return build_deletion_jobs(settings, clients, enqueue=lambda _: None)


# --- delete ------------------------------------------------------------------------------


def _delete(args: argparse.Namespace, console: Console, parser: argparse.ArgumentParser) -> int:
    window = (args.device, args.start, args.end)
    if args.withdraw or args.resume:
        if args.withdraw and args.resume:
            parser.error("argument --withdraw: not allowed with --resume")
        if any(part is not None for part in window) or args.erase or args.dry_run:
            parser.error("--withdraw and --resume take only a deletion id (and --ready-file)")
    else:
        require(parser, args, "--device", "--from", "--to")
    if args.stack:
        if args.withdraw or args.resume or args.dry_run or args.ready_file:
            parser.error("--stack starts a bulk deletion: not with --withdraw, --resume, "
                         "--dry-run or --ready-file")  # fmt: skip
        from video_index.cli.bulk import delete_deployed

        def bulk() -> int:
            for device in args.device:
                check_target_device(args, device)
            return delete_deployed(args, console, who(args))

        return guarded(console, bulk)
    if args.device is not None:
        if len(args.device) > 1:
            parser.error("argument --device: several devices need --stack (a bulk deletion)")
        args.device = args.device[0]

    def run() -> int:
        jobs = _jobs(args)
        if args.withdraw:
            request = jobs.withdraw(args.withdraw, who(args))
            console.print(Text(f"deletion {request.deletion_id} withdrawn: enforcement ended"))
            return EXIT_OK
        if not args.resume:
            check_target_device(args)
        if args.dry_run:
            preview = jobs.preview(
                args.device,
                to_epoch_ms(args.start),
                to_epoch_ms(args.end),
                kind=args.kind,
                erase=args.erase,
            )
            console.print(
                Text(
                    f"dry run: {preview.keys} keys ({preview.bytes:,} bytes"
                    + (f", {preview.versions} versions" if args.erase else "")
                    + ") would be deleted; nothing recorded"
                )
            )
            for key in preview.samples:
                console.print(Text(f"  {key}"))
            return EXIT_OK
        if args.resume:
            deletion_id = jobs.retry(args.resume).deletion_id  # a failed job opens again
        else:
            request = jobs.create(
                args.device,
                to_epoch_ms(args.start),
                to_epoch_ms(args.end),
                kind=args.kind,
                erase=args.erase,
                created_by=who(args),
                enqueue=False,
            )
            deletion_id = request.deletion_id
            console.print(Text(f"deletion {deletion_id} recorded (in force from now on)"))
        try:
            return _run_job(jobs, deletion_id, console)
        except _Interrupted:
            return EXIT_INTERRUPTED

    return guarded(console, run)


class _Interrupted(Exception):
    """A job stopped by Ctrl-C, said already."""


def _run_job(jobs: Any, deletion_id: str, console: Console) -> int:
    from video_index.deletion.model import DeletionState

    with Progress(
        TextColumn("{task.description}"), BarColumn(), MofNCompleteColumn(), console=console
    ) as progress:
        task = progress.add_task("counting", total=None)

        def show(request: Any) -> None:
            phase = "deleting" if request.total is not None else "counting"
            progress.update(
                task,
                description=phase,
                total=request.total if request.total is not None else None,
                completed=request.deleted,
            )

        try:
            request = jobs.run(deletion_id, progress=show).request
        except KeyboardInterrupt:
            progress.stop()
            make_console(stderr=True).print(
                Text(
                    f"deletion {deletion_id} interrupted (Ctrl-C): the request stays in force; "
                    f"continue its job with video-index delete --resume {deletion_id}"
                )
            )
            raise _Interrupted from None
    console.print(
        Text(
            f"deletion {request.deletion_id}: {request.state}, {request.deleted} keys deleted"
            + (f" ({request.versions_deleted} versions)" if request.erase else "")
            + (f", {request.kept_held} kept by holds" if request.kept_held else "")
            + (f" — {request.error}" if request.error else "")
        )
    )
    if request.state is DeletionState.FAILED:
        console.print(
            Text(
                "the request stays in force: ingest and reconcile delete what its window "
                f"covers. Fix the cause and `--resume {request.deletion_id}`, or "
                f"`--withdraw {request.deletion_id}` (docs/deletion.md)",
                style="red",
            )
        )
    return EXIT_OK if request.state is DeletionState.DONE else EXIT_PROBLEM


# --- undelete ----------------------------------------------------------------------------


def _undelete(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.aws.objects import ObjectStore
        from video_index.deletion.service import build_deletion_jobs
        from video_index.deletion.undelete import Undeleter

        check_target_device(args)
        settings, clients = settings_and_clients(args)
        jobs = build_deletion_jobs(settings, clients, enqueue=lambda _: None)
        undeleter = Undeleter(ObjectStore(clients.s3, settings.bucket), jobs)
        report = undeleter.run(
            args.device,
            to_epoch_ms(args.start),
            to_epoch_ms(args.end),
            kind=args.kind,
            dry_run=args.dry_run,
            withdraw=args.withdraw,
            by=who(args),
        )
        if args.json:
            print(json.dumps(report.__dict__, indent=2))
        else:
            verb = "would come back" if report.dry_run else "came back"
            withdrawn = "would be withdrawn" if report.dry_run else "withdrawn"
            for deletion_id in report.withdrawn:
                console.print(Text(f"deletion {deletion_id} {withdrawn}"))
            console.print(Text(f"{len(report.restored)} keys {verb} ({report.bytes:,} bytes)"))
            for key in report.restored[:20]:
                console.print(Text(f"  + {key}"))
            if report.not_restorable:
                console.print(Text(f"{len(report.not_restorable)} could not:", style="red"))
                for key, reason in report.not_restorable[:20]:
                    console.print(Text(f"  - {key}: {reason}"))
        return EXIT_PROBLEM if report.not_restorable else EXIT_OK

    return guarded(console, run)
