"""Argument types shared by the ``video-index`` subcommands (they name what is wrong)."""

from __future__ import annotations

import argparse
import getpass
from datetime import UTC, datetime

from video_index.core.keys import InvalidKeyError, validate_device


def device_arg(text: str) -> str:
    try:
        return validate_device(text)
    except InvalidKeyError as exc:
        raise argparse.ArgumentTypeError(exc.reason) from None


def start_arg(text: str) -> datetime:
    try:
        moment = datetime.fromisoformat(text)
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"{text!r} is not an ISO 8601 date and time (e.g. 2026-11-30T12:00:00Z)"
        ) from None
    if moment.tzinfo is None:
        raise argparse.ArgumentTypeError(
            f"{text!r} has no time zone; add Z for UTC (e.g. 2026-11-30T12:00:00Z)"
        )
    if moment.microsecond % 1000:
        raise argparse.ArgumentTypeError(f"{text!r} is finer than millisecond precision")
    try:
        return moment.astimezone(UTC)
    except OverflowError:
        raise argparse.ArgumentTypeError(f"{text!r} is out of range in UTC") from None


def check_window(args: argparse.Namespace, parser: argparse.ArgumentParser) -> None:
    """Every command's window runs forwards: ``--to`` later than ``--from`` (else a usage
    error naming ``--to``, before anything is read or recorded)."""
    start, end = getattr(args, "start", None), getattr(args, "end", None)
    if isinstance(start, datetime) and isinstance(end, datetime) and end <= start:
        parser.error(
            f"argument --to: {_iso(end)} is not later than --from {_iso(start)} "
            "(a window runs from --from to a later --to)"
        )


def require(parser: argparse.ArgumentParser, args: argparse.Namespace, *options: str) -> None:
    """A usage error naming exactly the ``options`` (``--flag`` spellings) still missing."""
    missing = [flag for flag in options if getattr(args, _dest(flag), None) is None]
    if missing:
        parser.error(f"the following arguments are required: {', '.join(missing)}")


#: Option spellings whose ``dest`` is not the flag's own name.
_DESTS = {"--from": "start", "--to": "end"}


def _dest(flag: str) -> str:
    return _DESTS.get(flag, flag.lstrip("-").replace("-", "_"))


def _iso(moment: datetime) -> str:
    return moment.astimezone(UTC).isoformat().replace("+00:00", "Z")


def add_window(
    parser: argparse.ArgumentParser, *, required: bool = True, several: bool = False
) -> None:
    """``--device``, ``--from`` and ``--to``, each with its help (``several``: ``--device``
    may be repeated)."""
    parser.add_argument(
        "--device",
        required=required,
        type=device_arg,
        action="append" if several else "store",
        help="the camera's name, as in its keys" + ("; repeat it with --stack" if several else ""),
    )
    parser.add_argument(
        "--from",
        dest="start",
        required=required,
        type=start_arg,
        metavar="ISO",
        help="start of the window, ISO 8601 with a time zone (e.g. 2026-11-30T12:00:00Z)",
    )
    parser.add_argument(
        "--to",
        dest="end",
        required=required,
        type=start_arg,
        metavar="ISO",
        help="end of the window (not included), later than --from",
    )


def who(args: argparse.Namespace) -> str:
    """Who makes a change from the command line: ``--by``, else ``cli:<login name>`` —
    the same for annotations, holds and deletions (docs/cli.md#who-made-a-change)."""
    return str(getattr(args, "by", None) or f"cli:{getpass.getuser()}")


BY_HELP = "who makes the change, as records name it (default: cli:<login name>)"
