"""Argument types shared by the ``video-index`` subcommands (they name what is wrong)."""

from __future__ import annotations

import argparse
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
