"""``video-index export``: one MP4 of a device's video in a window (docs/playback.md).

    video-index export --device D --from ISO --to ISO [--out FILE] [--ready-file PATH]

Runs the export in this process with a progress bar (the same job code the export
Lambda runs), stores the clip as derived data in the bucket like any export, and
with ``--out`` downloads it. Configuration from the environment (``VIDEO_INDEX_*``
and the standard boto3 variables) or, with ``--ready-file``, a running
``video-index local``. Exit codes as every command's (:mod:`video_index.cli.exits`):
0 done, 1 the export failed (the reason is printed), 2 bad usage (a window over 6
hours or over the size limit names the limit), 3 AWS unavailable.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from video_index.cli.args import device_arg, start_arg
from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, guarded
from video_index.core.timeunits import to_epoch_ms


def register(commands: Any) -> None:
    export = commands.add_parser(
        "export",
        help="one MP4 of a device's video in a window (stream copy, gaps skipped)",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    export.add_argument("--device", required=True, type=device_arg)
    export.add_argument("--from", dest="start", required=True, type=start_arg, metavar="ISO")
    export.add_argument("--to", dest="end", required=True, type=start_arg, metavar="ISO")
    export.add_argument("--out", type=Path, metavar="FILE", help="also download the clip here")
    export.add_argument(
        "--ready-file", type=Path, help="use the stack a running `video-index local` describes"
    )
    export.set_defaults(handler=lambda args, console, _: _export(args, console))


def _export(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.media.exports import ExportState, clip_key

        exports, queries, objects = _services(args)
        start, end = to_epoch_ms(args.start), to_epoch_ms(args.end)
        entries = list(queries.window_entries(args.device, "video", start, end))
        job = exports.create(args.device, start, end, entries)
        console.print(
            Text(f"export {job.export_id}: {job.segments} files, {job.bytes:,} bytes of video")
        )
        with Progress(
            TextColumn("stream copy"), BarColumn(), MofNCompleteColumn(), console=console
        ) as progress:
            task = progress.add_task("files", total=max(1, job.segments))
            job = exports.run(
                job.export_id,
                progress=lambda done, total: progress.update(task, completed=done, total=total),
            )
        if job.state is not ExportState.DONE:
            console.print(Text(f"failed: {job.error}", style="red"))
            return EXIT_PROBLEM
        console.print(Text(f"done: {objects.uri(clip_key(job.export_id))} ({job.clip_bytes:,} B)"))
        if args.out is not None:
            args.out.write_bytes(objects.get_bytes(clip_key(job.export_id)))
            console.print(Text(f"written to {args.out}"))
        return EXIT_OK

    return guarded(console, run)


def _services(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """Exports, queries and the segment bucket, from a ready file or the environment."""
    from video_index.app.services import build_api_services
    from video_index.aws.clients import Clients
    from video_index.aws.objects import ObjectStore
    from video_index.core.settings import Settings
    from video_index.media.exports import Exports

    if args.ready_file is None:
        settings, clients = Settings.from_env(), Clients.default()
    else:
        from video_index.local.ready import ReadyStack

        ready = ReadyStack.read(args.ready_file)
        settings, clients = ready.settings(), ready.clients()
    objects = ObjectStore(clients.s3, settings.bucket)
    exports = Exports(objects, enqueue=lambda _: None, max_bytes=settings.max_export_bytes)
    return exports, build_api_services(settings, clients).queries, objects
