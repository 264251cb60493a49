"""``video-index devices`` and ``video-index calendar``: what the API shows about cameras.

    video-index devices [--json] [--stack NAME | --ready-file PATH]
    video-index calendar DEVICE [--month YYYY-MM] [--tz ZONE] [--json] [--stack | --ready-file]

Both run the API's own query code in this process (the answers of ``GET /devices`` and
``GET /devices/{d}/calendar``, :mod:`video_index.query.devices`) and print them as tables,
or with ``--json`` as the API's JSON. Also here: the check every command that names a
device makes first (:func:`check_device`): a device the read model does not know is
refused as a likely typo, naming the known devices closest to it.
"""

from __future__ import annotations

import argparse
import difflib
import json
from collections.abc import Iterable
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Final

from rich.console import Console

from video_index.cli.args import device_arg
from video_index.cli.exits import EXIT_OK, guarded

NEW_DEVICE_HELP: Final = (
    "act on a device the read model does not know yet (a camera without footage so far); "
    "without it an unknown device is refused as a likely typo"
)


def register(commands: Any) -> None:
    devices = commands.add_parser(
        "devices",
        help="the cameras: footage per kind, first and last start, silent or retired",
        description=(
            "List every device the read model knows, as GET /devices answers: per kind "
            "the files, bytes, recorded duration, first and last start; and whether the "
            "camera uploads, is silent (since when; a kind silent alone is named on its "
            "row) or is retired. Exit code 0; 2 bad usage or configuration; 3 AWS (or "
            "the local stack) unavailable."
        ),
    )
    devices.add_argument("--json", action="store_true", help="print the API's JSON instead")
    add_where(devices)
    devices.set_defaults(handler=lambda args, console, _: _devices(args, console))

    month = commands.add_parser(
        "calendar",
        help="a device's month: the days with video and how much, in a time zone",
        description=(
            "Show a device's month as GET /devices/DEVICE/calendar answers: each local day "
            "of the month in the time zone --tz, with video (bold, its minutes of video) "
            "or without. Exit code 0; 2 bad usage (an unknown device, month or zone); "
            "3 AWS (or the local stack) unavailable."
        ),
    )
    month.add_argument("device", metavar="DEVICE", type=device_arg, help="the device's name")
    month.add_argument("--month", metavar="YYYY-MM", help="the month (default: this month in --tz)")
    month.add_argument(
        "--tz", default="UTC", metavar="ZONE", help="IANA time zone of the days (default: UTC)"
    )
    month.add_argument("--json", action="store_true", help="print the API's JSON instead")
    add_where(month)
    month.set_defaults(handler=lambda args, console, _: _calendar(args, console))


def add_where(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--stack", metavar="NAME", help="the deployed stack (default: $VIDEO_INDEX_STACK)"
    )
    where.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="a running `video-index local` (default: its ready file at the default place)",
    )


def queries_of(args: argparse.Namespace) -> tuple[Any, Any]:
    """The API's query layer on the target the arguments name, and the target's clock."""
    from video_index.app.services import build_api_services
    from video_index.cli.targets import resources

    found = resources(args)
    return build_api_services(found.settings, found.clients, found.clock).queries, found.clock


def _devices(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.local.tables import devices_table
        from video_index.query.devices import device_names, device_out

        queries, _ = queries_of(args)
        retired = queries.retired()
        items = [
            device_out(queries, name, queries.device_totals(name), name in retired).model_dump()
            for name in device_names(queries)
        ]
        if args.json:
            print(json.dumps(items, indent=2))
        else:
            console.print(devices_table(items, title=f"{len(items)} devices"))
        return EXIT_OK

    return guarded(console, run)


def _calendar(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.core.errors import BadInput
        from video_index.local.tables import calendar_table
        from video_index.query.calendar import CalendarError, parse_zone
        from video_index.query.devices import calendar_out, device_names

        queries, clock = queries_of(args)
        check_device(device_names(queries), args.device, offer_new_device=False)
        month = args.month
        if month is None:
            try:
                zone: Any = parse_zone(args.tz)
            except CalendarError as exc:
                raise BadInput("--tz", exc.message) from None
            month = f"{datetime.fromtimestamp(clock(), tz=UTC).astimezone(zone):%Y-%m}"
        try:
            answer = calendar_out(queries, args.device, month, args.tz).model_dump()
        except BadInput as exc:
            raise BadInput(f"--{exc.parameter}", exc.message) from None
        if args.json:
            print(json.dumps(answer, indent=2))
        else:
            console.print(calendar_table(answer))
        return EXIT_OK

    return guarded(console, run)


def check_device(names: Iterable[str], device: str, *, offer_new_device: bool = True) -> None:
    """Refuse a device not among ``names`` (the devices the read model knows) with a
    BadInput naming ``--device`` and the known names closest to it; ``offer_new_device``:
    say how to act on it anyway."""
    from video_index.core.errors import BadInput

    known = list(names)
    if device in known:
        return
    close = difflib.get_close_matches(device, known, n=3, cutoff=0.8)
    message = f"no device {device!r} in the read model"
    message += f": did you mean {' or '.join(close)}?" if close else " (it has no footage)."
    if offer_new_device:
        message += " For a camera without footage yet, add --new-device."
    raise BadInput("--device", message)


def store_device_names(store: Any) -> list[str]:
    """The devices of the serving generation's devices partition (one Query, paged)."""
    from video_index.core.layout import devices_pk

    generation = store.generations()[0]
    return [str(item["sk"]) for item in store.query_all(devices_pk(generation))]


def check_target_device(args: argparse.Namespace, device: str | None = None) -> None:
    """:func:`check_device` for ``device`` (default ``args.device``) on the read model of
    the target the arguments name, unless ``--new-device`` was given."""
    if getattr(args, "new_device", False):
        return
    from video_index.aws.store import build_store
    from video_index.cli.targets import resources
    from video_index.core.contract import ENV_TABLE
    from video_index.core.errors import ConfigurationError

    try:
        found = resources(args, required=(ENV_TABLE,))
    except ConfigurationError as exc:
        raise ConfigurationError(
            f"cannot check that the device exists: {exc} (or add --new-device)"
        ) from None
    names = store_device_names(build_store(found.settings, found.clients))
    check_device(names, device or args.device)


def add_new_device(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--new-device", action="store_true", help=NEW_DEVICE_HELP)
