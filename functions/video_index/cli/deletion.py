"""``video-index delete | undelete | restore`` (docs/deletion.md, docs/cli.md).

    video-index delete --device D --from ISO --to ISO [--kind K] [--erase] [--dry-run]
    video-index delete --stack NAME --device D [--device D2 ...] --from ISO --to ISO [--erase]
    video-index delete --withdraw ID | --resume ID
    video-index undelete --device D --from ISO --to ISO [--kind K] [--dry-run] [--withdraw]
    video-index restore --from-bucket REPLICA [--dry-run]

``delete`` records a deletion request and runs its job in this process with a
progress bar (the code the deletion worker runs); with ``--stack`` it runs on the
deployed stack's bulk deletion machine instead: several devices, a window of any
length, one recorded and checkpointed request per device and 31 days (docs/bulk.md);
``--dry-run`` shows what the window holds and records nothing; ``--withdraw ID``
withdraws a request; ``--resume ID`` continues a job whose runner stopped.
``undelete`` brings back the newest version of each deleted key of a window (refusing
while a deletion request covers it, unless ``--withdraw``); ``restore`` copies back from
a replica what the bucket lacks.

Configuration from the environment (``VIDEO_INDEX_*`` and the standard boto3
variables) or, with ``--ready-file``, a running ``video-index local``. Exit codes
(:mod:`video_index.cli.exits`): 0 done; 1 the job failed or was withdrawn, a deletion
request blocks an undelete, or some deleted keys could not come back; 2 bad usage;
3 AWS unavailable.
"""

from __future__ import annotations

import argparse
import getpass
import json
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from video_index.cli.args import device_arg, start_arg
from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, EXIT_USAGE, guarded
from video_index.core.timeunits import to_epoch_ms

KINDS = ("video", "sensor", "analysis")


def register(commands: Any) -> None:
    delete = commands.add_parser(
        "delete",
        help="delete a window of a device's video (a recorded, enforced deletion request)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    _window_arguments(delete, required=False, several=True)
    delete.add_argument(
        "--erase", action="store_true", help="remove every version (not undeletable)"
    )
    delete.add_argument(
        "--stack",
        help="run on this deployed stack's bulk deletion machine (several --device, any length)",
    )
    delete.add_argument(
        "--interval", type=float, default=5.0, help="with --stack: seconds between polls"
    )
    delete.add_argument("--dry-run", action="store_true", help="show what would go; record nothing")
    delete.add_argument("--withdraw", metavar="ID", help="withdraw the deletion request ID")
    delete.add_argument("--resume", metavar="ID", help="continue the job of request ID here")
    delete.set_defaults(handler=lambda args, console, parser: _delete(args, console, parser))
    delete.set_defaults(parser=delete)

    undelete = commands.add_parser(
        "undelete",
        help="bring back the newest version of each deleted key of a window",
        description=__doc__,
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

    restore = commands.add_parser(
        "restore",
        help="copy back from a replica bucket what the segment bucket lacks",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    restore.add_argument("--from-bucket", required=True, metavar="REPLICA")
    restore.add_argument("--dry-run", action="store_true", help="report only; copy nothing")
    restore.add_argument("--json", action="store_true", help="print the report as JSON")
    restore.add_argument(
        "--stack", help="run on this deployed stack's restore state machine (fleet size)"
    )
    restore.add_argument(
        "--manifest", help="with --stack: s3://…/manifest.json of the replica's S3 Inventory"
    )
    restore.add_argument(
        "--interval", type=float, default=5.0, help="with --stack: seconds between polls"
    )
    _target(restore)
    restore.set_defaults(handler=lambda args, console, _: _restore(args, console))


def _window_arguments(
    parser: argparse.ArgumentParser, *, required: bool, several: bool = False
) -> None:
    if several:
        parser.add_argument(
            "--device", action="append", type=device_arg, help="repeat it with --stack"
        )
    else:
        parser.add_argument("--device", required=required, type=device_arg)
    parser.add_argument("--from", dest="start", required=required, type=start_arg, metavar="ISO")
    parser.add_argument("--to", dest="end", required=required, type=start_arg, metavar="ISO")
    parser.add_argument("--kind", choices=KINDS, help="one kind only (default: every kind)")
    parser.add_argument("--by", default=None, help="who asks (default: cli:<user name>)")
    _target(parser)


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ready-file", type=Path, help="use the stack a running `video-index local` describes"
    )


def _settings_and_clients(args: argparse.Namespace) -> tuple[Any, Any]:
    from video_index.aws.clients import Clients
    from video_index.core.settings import Settings

    if args.ready_file is None:
        return Settings.from_env(), Clients.default()
    from video_index.local.ready import ReadyStack

    ready = ReadyStack.read(args.ready_file)
    return ready.settings(), ready.clients()


def _jobs(args: argparse.Namespace) -> Any:
    from video_index.deletion.service import build_deletion_jobs

    settings, clients = _settings_and_clients(args)
    return build_deletion_jobs(settings, clients, enqueue=lambda _: None)


def _by(args: argparse.Namespace) -> str:
    return str(getattr(args, "by", None) or f"cli:{getpass.getuser()}")


# --- delete ------------------------------------------------------------------------------


def _delete(args: argparse.Namespace, console: Console, parser: argparse.ArgumentParser) -> int:
    window = (args.device, args.start, args.end)
    if args.withdraw or args.resume:
        if args.withdraw and args.resume:
            parser.error("argument --withdraw: not allowed with --resume")
        if any(part is not None for part in window) or args.erase or args.dry_run:
            parser.error("--withdraw and --resume take only a deletion id (and --ready-file)")
    elif any(part is None for part in window):
        parser.error("the following arguments are required: --device, --from, --to")
    if args.stack:
        if args.withdraw or args.resume or args.dry_run or args.ready_file:
            parser.error("--stack starts a bulk deletion: not with --withdraw, --resume, "
                         "--dry-run or --ready-file")  # fmt: skip
        from video_index.cli.bulk import delete_deployed

        return guarded(console, lambda: delete_deployed(args, console, _by(args)))
    if args.device is not None:
        if len(args.device) > 1:
            parser.error("argument --device: several devices need --stack (a bulk deletion)")
        args.device = args.device[0]

    def run() -> int:
        jobs = _jobs(args)
        if args.withdraw:
            request = jobs.withdraw(args.withdraw, _by(args))
            console.print(Text(f"deletion {request.deletion_id} withdrawn: enforcement ended"))
            return EXIT_OK
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
            deletion_id = args.resume
        else:
            request = jobs.create(
                args.device,
                to_epoch_ms(args.start),
                to_epoch_ms(args.end),
                kind=args.kind,
                erase=args.erase,
                created_by=_by(args),
                enqueue=False,
            )
            deletion_id = request.deletion_id
            console.print(Text(f"deletion {deletion_id} recorded (in force from now on)"))
        return _run_job(jobs, deletion_id, console)

    return guarded(console, run)


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

        request = jobs.run(deletion_id, progress=show).request
    console.print(
        Text(
            f"deletion {request.deletion_id}: {request.state}, {request.deleted} keys deleted"
            + (f" ({request.versions_deleted} versions)" if request.erase else "")
            + (f", {request.kept_held} kept by holds" if request.kept_held else "")
            + (f" — {request.error}" if request.error else "")
        )
    )
    return EXIT_OK if request.state is DeletionState.DONE else EXIT_PROBLEM


# --- undelete ----------------------------------------------------------------------------


def _undelete(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.aws.objects import ObjectStore
        from video_index.deletion.service import build_deletion_jobs
        from video_index.deletion.undelete import Undeleter

        settings, clients = _settings_and_clients(args)
        jobs = build_deletion_jobs(settings, clients, enqueue=lambda _: None)
        undeleter = Undeleter(ObjectStore(clients.s3, settings.bucket), jobs)
        report = undeleter.run(
            args.device,
            to_epoch_ms(args.start),
            to_epoch_ms(args.end),
            kind=args.kind,
            dry_run=args.dry_run,
            withdraw=args.withdraw,
            by=_by(args),
        )
        if args.json:
            print(json.dumps(report.__dict__, indent=2))
        else:
            verb = "would come back" if report.dry_run else "came back"
            for deletion_id in report.withdrawn:
                console.print(Text(f"withdrawn: deletion {deletion_id}"))
            console.print(Text(f"{len(report.restored)} keys {verb} ({report.bytes:,} bytes)"))
            for key in report.restored[:20]:
                console.print(Text(f"  + {key}"))
            if report.not_restorable:
                console.print(Text(f"{len(report.not_restorable)} could not:", style="red"))
                for key, reason in report.not_restorable[:20]:
                    console.print(Text(f"  - {key}: {reason}"))
        return EXIT_PROBLEM if report.not_restorable else EXIT_OK

    return guarded(console, run)


# --- restore -----------------------------------------------------------------------------


def _restore(args: argparse.Namespace, console: Console) -> int:
    if args.stack:
        from video_index.cli.bulk import restore_deployed

        return guarded(console, lambda: restore_deployed(args, console))

    def run() -> int:
        from video_index.aws.objects import ObjectStore
        from video_index.deletion.restore import Restorer, RestoreReport
        from video_index.deletion.service import build_enforcer

        settings, clients = _settings_and_clients(args)
        if args.from_bucket == settings.bucket:
            console.print(Text("error: --from-bucket is the segment bucket itself", style="red"))
            return EXIT_USAGE
        restorer = Restorer(
            ObjectStore(clients.s3, settings.bucket), build_enforcer(settings, clients)
        )
        if args.json:  # stdout carries the report only
            report = restorer.run(args.from_bucket, dry_run=args.dry_run)
        else:
            with Progress(TextColumn("{task.description}"), console=console) as progress:
                task = progress.add_task("comparing")

                def show(report: RestoreReport) -> None:
                    progress.update(
                        task,
                        description=f"compared {report.compared:,}, copied {report.copied:,}, "
                        f"identical {report.identical:,}",
                    )

                report = restorer.run(args.from_bucket, dry_run=args.dry_run, progress=show)
        if args.json:
            print(json.dumps(report.__dict__, indent=2))
        else:
            verb = "would copy" if report.dry_run else "copied"
            console.print(
                Text(
                    f"restore from {report.source} into {report.target}: compared "
                    f"{report.compared}, {verb} {report.copied} ({report.bytes_copied:,} "
                    f"bytes), identical {report.identical}, withheld by deletion requests "
                    f"{report.withheld}"
                )
            )
        return EXIT_OK

    return guarded(console, run)
