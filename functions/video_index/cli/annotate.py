"""``video-index annotate add|list|export|import``: annotations from the command line (the
help text is :data:`DESCRIPTION`)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from rich.console import Console
from rich.table import Table
from rich.text import Text

from video_index.cli.args import BY_HELP, add_window, device_arg, start_arg, who
from video_index.cli.devices import add_new_device, check_target_device
from video_index.cli.exits import EXIT_OK, guarded
from video_index.cli.jsonl import (
    add_transfer_parsers,
    read_text,
    show_outcomes,
    write_lines,
)
from video_index.core.timeunits import to_epoch_ms

if TYPE_CHECKING:
    from video_index.annotations.service import Annotations

_STATUSES = ("pending", "approved", "rejected")


DESCRIPTION: Final = """\
Annotations: what people decide about footage (docs/annotations.md).

  video-index annotate add --device D (--segment NAME [--kind K] | --from ISO --to ISO)
      [--description TEXT] [--status pending|approved|rejected] [--tag T]... [--by NAME]
  video-index annotate list --device D --from ISO --to ISO [--status S] [--tag T] [--json]
  video-index annotate export [--device D] [--out FILE]
  video-index annotate import FILE

Each runs in this process with the API's own code. export writes JSON Lines, one current
annotation per line (every device without --device); import reads them back,
idempotently by annotation id: a line whose version the table holds already is
unchanged, one older than the table's is refused (never overwritten). Who made a change
is --by, else cli:<login name>. Configuration: a running video-index local (--ready-file,
found by itself at its default place) or VIDEO_INDEX_BUCKET, VIDEO_INDEX_TABLE,
VIDEO_INDEX_ANNOTATIONS_TABLE and the usual boto3 configuration.

Exit codes: 0 done; 1 a line was refused or an id is unknown; 2 bad usage, an unknown
device or a bad line (nothing imported); 3 AWS unavailable.
"""


def register(commands: Any) -> None:
    annotate = commands.add_parser(
        "annotate",
        help="annotations: add, list, export to JSON Lines, import from JSON Lines",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = annotate.add_subparsers(dest="annotate_command", metavar="ACTION", required=True)

    add = actions.add_parser(
        "add",
        help="annotate a segment or a time range of a device",
        description="Annotate one segment (--segment) or a time range (--from, --to) of a "
        "device, with a description, a status and tags.",
    )
    add.add_argument(
        "--device", required=True, type=device_arg, help="the camera's name, as in its keys"
    )
    target = add.add_mutually_exclusive_group(required=True)
    target.add_argument(
        "--segment",
        metavar="NAME",
        help="the segment's key file name (an entry's name: <start>_<duration>_<id>.<ext>)",
    )
    target.add_argument(
        "--from",
        dest="start",
        type=start_arg,
        metavar="ISO",
        help="start of the range, ISO 8601 with a time zone (with --to)",
    )
    add.add_argument(
        "--to", dest="end", type=start_arg, metavar="ISO", help="end of the range (with --from)"
    )
    add.add_argument(
        "--kind",
        choices=("video", "sensor", "analysis"),
        default="video",
        help="the segment's kind (with --segment; default video)",
    )
    add.add_argument("--description", default="", help="at most 4,000 characters")
    add.add_argument(
        "--status", choices=_STATUSES, default="pending", help="the review state (default pending)"
    )
    add.add_argument("--tag", action="append", default=[], help="[a-z0-9-]{1,32}; repeatable")
    add.add_argument("--by", default=None, help=BY_HELP)
    add.add_argument("--json", action="store_true", help="print the annotation as JSON")
    add_new_device(add)
    _target(add)
    add.set_defaults(handler=lambda args, console, parser: _add(args, console, parser), parser=add)

    listing = actions.add_parser(
        "list",
        help="annotations intersecting a window, by start",
        description="List a device's annotations that intersect the window, by start.",
    )
    add_window(listing)
    listing.add_argument("--status", choices=_STATUSES, help="only annotations in this state")
    listing.add_argument("--tag", help="only annotations with this tag")
    listing.add_argument("--json", action="store_true", help="print JSON Lines")
    add_new_device(listing)
    _target(listing)
    listing.set_defaults(handler=lambda args, console, _: _list(args, console))

    add_transfer_parsers(
        actions, "every current annotation as JSON Lines", _target, _export, _import
    )


def _target(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="a running `video-index local` (default: its ready file at the default place)",
    )


def _annotations(args: argparse.Namespace) -> Annotations:
    """The annotations service, from a ready file or the environment (AWS imports here)."""
    from video_index.app.services import build_api_services
    from video_index.aws.clients import Clients
    from video_index.core.contract import ENV_ANNOTATIONS_TABLE, ENV_BUCKET, ENV_TABLE
    from video_index.core.errors import ConfigurationError
    from video_index.core.settings import Settings

    if args.ready_file is None:
        settings = Settings.from_env(required=(ENV_BUCKET, ENV_TABLE, ENV_ANNOTATIONS_TABLE))
        clients = Clients.default()
    else:
        from video_index.local.ready import ReadyStack

        ready = ReadyStack.read(args.ready_file)
        settings, clients = ready.settings(), ready.clients()
    annotations = build_api_services(settings, clients).annotations
    if annotations is None:
        raise ConfigurationError(f"{ENV_ANNOTATIONS_TABLE} is not set")
    return annotations


def _add(args: argparse.Namespace, console: Console, parser: argparse.ArgumentParser) -> int:
    if args.segment is None and args.end is None:
        parser.error("argument --to: required with --from")
    if args.segment is not None and args.end is not None:
        parser.error("argument --to: not allowed with --segment")

    def run() -> int:
        from video_index.annotations.model import AnnotationIn, TargetIn, draft_of
        from video_index.annotations.shapes import annotation_out, as_json
        from video_index.core.timeunits import iso_ms

        target = (
            TargetIn(kind=args.kind, name=args.segment)
            if args.segment is not None
            else TargetIn.model_validate(
                {"from": iso_ms(to_epoch_ms(args.start)), "to": iso_ms(to_epoch_ms(args.end))}
            )
        )
        draft = draft_of(
            AnnotationIn.model_validate(
                {
                    "target": target.model_dump(by_alias=True, exclude_none=True),
                    "description": args.description,
                    "status": args.status,
                    "tags": args.tag,
                }
            )
        )
        check_target_device(args)
        created = _annotations(args).create(args.device, draft, who(args))
        if args.json:
            print(json.dumps(as_json(annotation_out(created)), ensure_ascii=False))
        else:
            console.print(Text(f"created {created.annotation_id} (version {created.version})"))
        return EXIT_OK

    return guarded(console, lambda: _validated(run))


def _validated(action: Any) -> int:
    """pydantic's refusals as the product's :class:`BadInput` (exit 2, naming the field)."""
    from pydantic import ValidationError

    from video_index.core.errors import BadInput

    try:
        result: int = action()
    except ValidationError as exc:
        first = exc.errors()[0]
        raise BadInput(".".join(str(p) for p in first["loc"]) or None, first["msg"]) from None
    return result


def _list(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.annotations.shapes import annotation_out, as_json

        check_target_device(args)
        annotations = _annotations(args)
        cursor: str | None = None
        found = []
        while True:
            page = annotations.window(
                args.device,
                to_epoch_ms(args.start),
                to_epoch_ms(args.end),
                status=args.status,
                tag=args.tag,
                limit=100,
                cursor=cursor,
            )
            found.extend(page.items)
            cursor = page.next_cursor
            if cursor is None:
                break
        if args.json:
            for annotation in found:
                print(json.dumps(as_json(annotation_out(annotation)), ensure_ascii=False))
            return EXIT_OK
        table = Table(title=f"Annotations of {args.device}", title_justify="left")
        for column in ("start", "end", "target", "status", "tags", "description", "by", "v"):
            table.add_column(column, overflow="fold")
        for annotation in found:
            out = annotation_out(annotation)
            target = as_json(out.target)
            table.add_row(
                out.start,
                out.end,
                Text(f"{target['kind']} {target['name']}" if "name" in target else "range"),
                out.status,
                Text(", ".join(out.tags)),
                Text(out.description),
                Text(out.updated_by),
                str(out.version),
            )
        console.print(table)
        return EXIT_OK

    return guarded(console, run)


def _export(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.annotations.transfer import export_lines

        lines = export_lines(_annotations(args).export(args.device))
        return write_lines(lines, args.out, "annotation")

    return guarded(console, run)


def _import(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.annotations.transfer import import_annotations, read_lines

        annotations = _annotations(args)
        lines = read_text(args.file)
        outcomes = import_annotations(read_lines(lines, annotations.segments), annotations)
        return show_outcomes(console, outcomes, "annotation_id", args.json)

    return guarded(console, run)
