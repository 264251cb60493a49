"""``video-index export``: one MP4 of a device's video in a window (docs/playback.md).

Runs the export in this process with a progress bar (the same job code the export
Lambda runs); the help text is :data:`DESCRIPTION`.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn
from rich.text import Text

from video_index.cli.args import add_window
from video_index.cli.console import make_console
from video_index.cli.exits import EXIT_INTERRUPTED, EXIT_OK, EXIT_PROBLEM, guarded
from video_index.core.timeunits import to_epoch_ms

DESCRIPTION: Final = """\
Make one MP4 of a device's video in a window: its files stream-copied in time order,
gaps skipped, stored as derived data in the bucket like every export (exports/ID/) with its
signed manifest, and with --out downloaded (the manifest beside it as FILE.manifest.json:
`video-index verify FILE FILE.manifest.json` checks it). It runs in this process with a
progress bar (the export Lambda's own code), on a running video-index local (--ready-file,
found by itself at its default place) or on the resources of the VIDEO_INDEX_* variables.

Ctrl-C stops it: the job's state reads "interrupted" and the command exits 130.

Exit codes: 0 done; 1 the export failed (the reason is printed: e.g. no playable video
in the window); 2 bad usage (a window the wrong way round, over 6 hours or over the size
limit names the limit; an unknown device); 3 AWS unavailable; 130 interrupted.
"""


def register(commands: Any) -> None:
    export = commands.add_parser(
        "export",
        help="one MP4 of a device's video in a window (stream copy, gaps skipped)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add_window(export)
    export.add_argument(
        "--out", type=Path, metavar="FILE", help="also download the clip to this file"
    )
    export.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="a running `video-index local` (default: its ready file at the default place)",
    )
    export.set_defaults(handler=lambda args, console, _: _export(args, console))


def _export(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.cli.devices import check_device
        from video_index.media.exports import ExportState, WindowFacts, clip_key, manifest_key
        from video_index.query.devices import device_names

        exports, services, objects = _services(args)
        queries = services.queries
        check_device(device_names(queries), args.device, offer_new_device=False)
        start, end = to_epoch_ms(args.start), to_epoch_ms(args.end)
        entries = list(queries.window_entries(args.device, "video", start, end))
        # The manifest's gaps and holds, as the API's export route writes them.
        gaps, holds = services.by_type()[WindowFacts](args.device, start, end, "UTC")
        job = exports.create(args.device, start, end, entries, gaps=gaps, holds=holds)
        console.print(
            Text(f"export {job.export_id}: {job.segments} files, {job.bytes:,} bytes of video")
        )
        try:
            job = _run(console, exports, job)
        except KeyboardInterrupt:
            state = exports.get(job.export_id).state
            make_console(stderr=True).print(
                Text(f"export {job.export_id} {state}: stopped by Ctrl-C, no clip was made")
            )
            return EXIT_INTERRUPTED
        if job.state is not ExportState.DONE:
            console.print(Text(f"failed: {job.error}", style="red"))
            return EXIT_PROBLEM
        console.print(Text(f"done: {objects.uri(clip_key(job.export_id))} ({job.clip_bytes:,} B)"))
        console.print(Text(f"manifest: {objects.uri(manifest_key(job.export_id))} (signed)"))
        if args.out is not None:
            args.out.write_bytes(objects.get_bytes(clip_key(job.export_id)))
            signed = args.out.with_name(f"{args.out.name}.manifest.json")
            signed.write_bytes(objects.get_bytes(manifest_key(job.export_id)))
            console.print(Text(f"written to {args.out} and {signed} (video-index verify)"))
        return EXIT_OK

    return guarded(console, run)


def _run(console: Console, exports: Any, job: Any) -> Any:
    """The job, with a bar of files joined (a line per file when not on a terminal)."""
    with Progress(
        TextColumn("stream copy"),
        BarColumn(),
        MofNCompleteColumn(),
        console=console,
        disable=not console.is_terminal,
    ) as progress:
        task = progress.add_task("files", total=max(1, job.segments))

        def show(done: int, total: int) -> None:
            progress.update(task, completed=done, total=total)
            if not console.is_terminal:
                console.print(Text(f"stream copy: {done}/{total} files"))

        return exports.run(job.export_id, progress=show)


def _services(args: argparse.Namespace) -> tuple[Any, Any, Any]:
    """Exports, the API's services and the segment bucket of the target the arguments name."""
    from video_index.app.services import build_api_services
    from video_index.aws.kms import signing_key
    from video_index.aws.objects import ObjectStore
    from video_index.cli.targets import resources
    from video_index.core.contract import ENV_EXPORT_SIGNING_KEY
    from video_index.media.exports import Exports

    found = resources(args)
    settings, clients = found.settings, found.clients
    objects = ObjectStore(clients.s3, settings.bucket)
    signer = signing_key(settings.export_signing_key, clients.kms, ENV_EXPORT_SIGNING_KEY)
    exports = Exports(
        objects, enqueue=lambda _: None, max_bytes=settings.max_export_bytes, signer=signer
    )
    return exports, build_api_services(settings, clients, found.clock), objects
