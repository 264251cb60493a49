"""``video-index share create|list|revoke``: share links from the command line (the help
text is :data:`DESCRIPTION`, docs/shares.md)."""

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
from video_index.cli.exits import EXIT_OK, guarded
from video_index.core.timeunits import to_epoch_ms

if TYPE_CHECKING:
    from video_index.shares.service import Shares

DESCRIPTION = """\
Share links: a read-only, expiring link to one window of one camera (docs/shares.md).

  video-index share create --device D --from ISO --to ISO --expires-in SECONDS [--by NAME] [--json]
  video-index share list --device D [--json]
  video-index share revoke SHARE_ID [--by NAME] [--admin] [--json]

Each runs in this process with the API's own code. create prints the links once (their
secret is stored only as its SHA-256): the playlist any HLS player plays without signing
in and the viewer's page, under the API's address (the stack's ApiUrl output, or the local
stack's); without one (--table) it prints the secret and the paths. A window is at most
the configured maximum (1 hour by default), a life at most 7 days. The command line makes
no download (the API's POST with "download": true does). revoke is for the share's
creator (--by, default cli:<login name>), or anyone with --admin: the link answers 410
from the next request on.

The shares table is found from --stack NAME (its SharesTableName output; or
VIDEO_INDEX_STACK), --ready-file PATH (a running video-index local, found by itself at its
default place), --table NAME or VIDEO_INDEX_SHARES_TABLE (with the usual boto3
configuration).

Exit codes: 0 done; 1 the share is unknown or the revocation is not yours; 2 bad usage or
bad input; 3 AWS unavailable.
"""


def register(commands: Any) -> None:
    share = commands.add_parser(
        "share",
        help="share links: create, list, revoke",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    actions = share.add_subparsers(dest="share_command", metavar="ACTION", required=True)
    create = actions.add_parser(
        "create",
        help="a read-only link to a window of a device's footage",
        description="Share a window of a device's footage as a link anyone may play without "
        "signing in, until it expires or is revoked.",
    )
    add_window(create)
    create.add_argument(
        "--expires-in", type=int, required=True, metavar="SECONDS", help="how long it works"
    )
    create.add_argument("--by", default=None, help=BY_HELP)
    create.add_argument("--json", action="store_true", help="print the share as JSON")
    _target(create)
    create.set_defaults(handler=lambda args, console, _: _create(args, console))
    listing = actions.add_parser(
        "list", help="a device's share links", description="List a device's share links."
    )
    listing.add_argument("--device", required=True, help="the device (camera) name")
    listing.add_argument("--json", action="store_true", help="print JSON Lines")
    _target(listing)
    listing.set_defaults(handler=lambda args, console, _: _list(args, console))
    revoke = actions.add_parser(
        "revoke",
        help="revoke a share link at once",
        description="Revoke a share link: every request with it answers 410 from now on.",
    )
    revoke.add_argument("share_id", metavar="SHARE_ID", help="the share's id (share list)")
    revoke.add_argument("--by", default=None, help=BY_HELP)
    revoke.add_argument(
        "--admin", action="store_true", help="revoke a share someone else made (as an admin)"
    )
    revoke.add_argument("--json", action="store_true", help="print the share as JSON")
    _target(revoke)
    revoke.set_defaults(handler=lambda args, console, _: _revoke(args, console))


def _target(parser: argparse.ArgumentParser) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--stack", metavar="NAME", help="the deployed stack (its outputs)")
    where.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="a running `video-index local` (default: its ready file at the default place)",
    )
    where.add_argument("--table", metavar="NAME", help="the shares table (boto3 configuration)")


def _shares(args: argparse.Namespace) -> tuple[Shares, str]:
    """The shares service over the table the arguments name, and the API's address ("" when
    unknown). AWS imports here."""
    from video_index.aws.shares import ShareStore
    from video_index.cli.targets import ENV_STACK, new_session, open_stack
    from video_index.core.contract import ENV_SHARES_TABLE, OUTPUT_API_URL, OUTPUT_SHARES_TABLE
    from video_index.core.errors import ConfigurationError
    from video_index.core.settings import Settings
    from video_index.shares.service import Shares

    limits = Settings.from_env(required=())

    def made(client: Any, table: str, **extra: Any) -> Shares:
        return Shares(
            ShareStore(client, table),
            max_window_s=limits.share_max_window_seconds,
            max_lifetime_s=limits.share_max_lifetime_seconds,
            presign_seconds=limits.presign_seconds,
            **extra,
        )

    if args.ready_file is not None:
        from video_index.local.ready import ReadyStack

        ready = ReadyStack.read(args.ready_file)
        table = ready.values.get("shares_table")
        if not table:
            raise ConfigurationError(f"{args.ready_file} names no shares table")
        shares = made(ready.client("dynamodb"), str(table), clock=ready.clock())
        return shares, str(ready.values.get("api", ""))
    stack = args.stack or (None if args.table else os.environ.get(ENV_STACK))
    if stack:
        opened = open_stack(stack)
        table = opened.outputs.get(OUTPUT_SHARES_TABLE)
        if not table:
            raise ConfigurationError(
                f"stack {stack!r} has no output {OUTPUT_SHARES_TABLE}: deploy this version"
            )
        return made(opened.client("dynamodb"), table), opened.outputs.get(OUTPUT_API_URL, "")
    table = args.table or os.environ.get(ENV_SHARES_TABLE)
    if not table:
        from video_index.cli.ready import missing_target_note

        raise ConfigurationError(
            f"say which shares table: --stack NAME, --ready-file PATH, --table NAME or "
            f"{ENV_SHARES_TABLE}; {missing_target_note()}"
        )
    return made(new_session().client("dynamodb"), table), ""


def _create(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        start, end = to_epoch_ms(args.start), to_epoch_ms(args.end)
        shares, api = _shares(args)
        share, secret = shares.create(args.device, start, end, args.expires_in, who(args))
        base = api.rstrip("/")
        shown = {
            **share.public(shares.now_ms()),
            "playlist_url": f"{base}/shares/{share.share_id}/playlist.m3u8?key={secret}",
            "url": f"{base}/viewer/share.html#{share.share_id}.{secret}",
        }
        if args.json:
            print(json.dumps(shown, ensure_ascii=False))
            return EXIT_OK
        console.print(
            Text(f"shared {share.share_id}: {share.device} {shown['from']} – {shown['to']}")
        )
        console.print(Text(f"until {shown['expires_at']} (the links are shown only now)"))
        console.print(Text(f"playlist: {shown['playlist_url']}"), soft_wrap=True)
        console.print(Text(f"page:     {shown['url']}"), soft_wrap=True)
        return EXIT_OK

    return guarded(console, run)


def _list(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        shares, _ = _shares(args)
        found = [s.public(shares.now_ms()) for s in shares.of_device(args.device)]
        if args.json:
            for share in found:
                print(json.dumps(share, ensure_ascii=False))
            return EXIT_OK
        table = Table(title=f"Share links of {args.device}", title_justify="left")
        for column in ("share", "from", "to", "state", "until", "by"):
            table.add_column(column, overflow="fold")
        for share in found:
            table.add_row(
                share["share_id"],
                share["from"],
                share["to"],
                share["state"],
                share["expires_at"],
                Text(share["created_by"]),
            )
        console.print(table)
        return EXIT_OK

    return guarded(console, run)


def _revoke(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        import re

        from video_index.core.errors import BadInput
        from video_index.shares.model import SHARE_ID_PATTERN

        if not re.fullmatch(SHARE_ID_PATTERN, args.share_id):
            raise BadInput("SHARE_ID", "is 32 hexadecimal digits (share list shows them)")
        shares, _ = _shares(args)
        share = shares.revoke(args.share_id, who(args), args.admin).public(shares.now_ms())
        if args.json:
            print(json.dumps(share, ensure_ascii=False))
        else:
            console.print(Text(f"revoked {share['share_id']}: {share['device']}"))
        return EXIT_OK

    return guarded(console, run)
