"""``video-index hold add|list|release|export|import``: evidence holds from the command
line (the help text is :data:`DESCRIPTION`)."""

from __future__ import annotations

import argparse
import json
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.table import Table
from rich.text import Text

from video_index.cli.args import BY_HELP, add_window, who
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
    from video_index.holds.service import Holds


DESCRIPTION = """\
Evidence holds: keep a window of a device's footage past retention (docs/holds.md).

  video-index hold add --device D --from ISO --to ISO --reason TEXT [--by NAME] [--json]
  video-index hold list --device D --from ISO --to ISO [--active] [--json]
  video-index hold release HOLD_ID [--by NAME] [--admin] [--json]
  video-index hold export [--device D] [--out FILE]
  video-index hold import FILE [--json]

Each runs in this process with the API's own code. A hold covers at most 31 days.
release is for the hold's creator (--by, default cli:<login name>), or anyone with
--admin; a released hold stays, with its history. export writes JSON Lines, one hold per
line, released ones included (every device without --device); import reads them back
idempotently by hold id: a line whose version the table holds already is unchanged, one
older than the table's is refused (never overwritten).

The holds table is found from --stack NAME (its HoldsTableName output; or
VIDEO_INDEX_STACK), --ready-file PATH (a running video-index local, found by itself at
its default place), --table NAME or VIDEO_INDEX_HOLDS_TABLE (with the usual boto3
configuration). A device the read model does not know is refused as a likely typo
(--new-device acts on it anyway).

Exit codes: 0 done; 1 a line was refused, the hold is unknown or the release is not
yours; 2 bad usage, bad input, an unknown device or a bad line (nothing imported);
3 AWS unavailable.
"""


def register(commands: Any) -> None:
    hold = commands.add_parser(
        "hold",
        help="evidence holds: add, list, release, export to / import from JSON Lines",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = hold.add_subparsers(dest="hold_command", metavar="ACTION", required=True)

    add = actions.add_parser(
        "add",
        help="keep a window of a device's footage past retention",
        description="Place a hold on a window (at most 31 days) of a device's footage: "
        "retention keeps it until the hold is released.",
    )
    add_window(add)
    add.add_argument("--reason", required=True, help="why (a case, an incident): 1-1,000 chars")
    add.add_argument("--by", default=None, help=BY_HELP)
    add.add_argument("--json", action="store_true", help="print the hold as JSON")
    add_new_device(add)
    _target(add)
    add.set_defaults(handler=lambda args, console, _: _add(args, console))

    listing = actions.add_parser(
        "list",
        help="a device's holds overlapping a window",
        description="List a device's holds that overlap the window, released ones included.",
    )
    add_window(listing)
    listing.add_argument("--active", action="store_true", help="only holds not released")
    listing.add_argument("--json", action="store_true", help="print JSON Lines")
    add_new_device(listing)
    _target(listing)
    listing.set_defaults(handler=lambda args, console, _: _list(args, console))

    release = actions.add_parser(
        "release",
        help="release a hold (it stays, released)",
        description="Release a hold: retention may delete its window again; the hold stays.",
    )
    release.add_argument("hold_id", metavar="HOLD_ID", help="the hold's id (hold add, hold list)")
    release.add_argument("--by", default=None, help=BY_HELP)
    release.add_argument(
        "--admin", action="store_true", help="release a hold someone else created (as an admin)"
    )
    release.add_argument("--json", action="store_true", help="print the hold as JSON")
    _target(release)
    release.set_defaults(handler=lambda args, console, _: _release(args, console))

    add_transfer_parsers(
        actions, "every hold as JSON Lines (released included)", _target, _export, _import
    )


def _target(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--stack", metavar="NAME", help="the deployed stack (its outputs)")
    where.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="a running `video-index local` (default: its ready file at the default place)",
    )
    where.add_argument("--table", metavar="NAME", help="the holds table (boto3 configuration)")


def _holds(args: argparse.Namespace) -> Holds:
    """The holds service over the table the arguments name (AWS imports here)."""
    from video_index.aws.holds import HoldStore
    from video_index.cli.targets import ENV_STACK, new_session, open_stack
    from video_index.core.contract import ENV_HOLDS_TABLE, OUTPUT_HOLDS_TABLE
    from video_index.core.errors import ConfigurationError
    from video_index.holds.service import Holds

    if args.ready_file is not None:
        from video_index.local.ready import ReadyStack

        ready = ReadyStack.read(args.ready_file)
        table = ready.settings().holds_table
        if not table:
            raise ConfigurationError(f"{args.ready_file} names no holds table")
        return Holds(HoldStore(ready.client("dynamodb"), table), clock=ready.clock())
    stack = args.stack or (None if args.table else os.environ.get(ENV_STACK))
    if stack:
        opened = open_stack(stack)
        table = opened.outputs.get(OUTPUT_HOLDS_TABLE)
        if not table:
            raise ConfigurationError(
                f"stack {stack!r} has no output {OUTPUT_HOLDS_TABLE}: deploy this version"
            )
        return Holds(HoldStore(opened.client("dynamodb"), table))
    table = args.table or os.environ.get(ENV_HOLDS_TABLE)
    if not table:
        from video_index.cli.ready import missing_target_note

        raise ConfigurationError(
            f"say which holds table: --stack NAME, --ready-file PATH, --table NAME or "
            f"{ENV_HOLDS_TABLE}; {missing_target_note()}"
        )
    return Holds(HoldStore(new_session().client("dynamodb"), table))


def _add(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        start, end = to_epoch_ms(args.start), to_epoch_ms(args.end)
        holds = _holds(args)  # where the holds are, said first when it is not given
        check_target_device(args)
        hold = holds.create(args.device, start, end, args.reason, who(args))
        return _show(console, hold.public(), "holding", args.json)

    return guarded(console, run)


def _release(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.holds.model import check_hold_id

        hold = _holds(args).release(check_hold_id(args.hold_id, "HOLD_ID"), who(args), args.admin)
        return _show(console, hold.public(), "released", args.json)

    return guarded(console, run)


def _show(console: Console, hold: dict[str, Any], what: str, as_json: bool) -> int:
    if as_json:
        print(json.dumps(hold, ensure_ascii=False))
    else:
        console.print(
            Text(f"{what} {hold['hold_id']}: {hold['device']} {hold['from']} – {hold['to']}")
        )
    return EXIT_OK


def _list(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        start, end = to_epoch_ms(args.start), to_epoch_ms(args.end)
        holds = _holds(args)
        check_target_device(args)
        found = [h.public() for h in holds.window(args.device, start, end, active_only=args.active)]
        if args.json:
            for hold in found:
                print(json.dumps(hold, ensure_ascii=False))
            return EXIT_OK
        table = Table(title=f"Holds of {args.device}", title_justify="left")
        for column in ("hold", "from", "to", "reason", "by", "released"):
            table.add_column(column, overflow="fold")
        for hold in found:
            released = (
                f"{hold['released_at']} by {hold['released_by']}" if hold["released_at"] else ""
            )
            table.add_row(
                hold["hold_id"],
                hold["from"],
                hold["to"],
                Text(hold["reason"]),
                Text(hold["created_by"]),
                Text(released or ""),
            )
        console.print(table)
        return EXIT_OK

    return guarded(console, run)


def _export(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.holds.transfer import export_lines

        return write_lines(export_lines(_holds(args).export(args.device)), args.out, "hold")

    return guarded(console, run)


def _import(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.holds.transfer import import_holds, read_lines

        holds = _holds(args)
        outcomes = import_holds(read_lines(read_text(args.file)), holds)
        return show_outcomes(console, outcomes, "hold_id", args.json)

    return guarded(console, run)
