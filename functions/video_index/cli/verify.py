"""``video-index verify CLIP.mp4 MANIFEST.json``: is this the export the product signed?
(docs/playback.md#signed-exports, docs/cli.md#verify).

Offline: the manifest's signature is checked against the public key (``--public-key
PEM_FILE``, or fetched once from the API's ``GET /exports/public-key``: ``--api URL``, else
a running ``video-index local``'s), then every fragment of the clip against its SHA-256. A
changed byte is named by the moment its fragment shows (or "the header"). Nothing but
``cryptography`` and hashlib: no AWS, no media library.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any, Final

from rich.console import Console
from rich.text import Text

from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM, guarded
from video_index.core.errors import BadInput

DESCRIPTION: Final = """\
Check an exported clip against its signed manifest, offline: the manifest's signature
(ECDSA P-256 by the deployment's export signing key) and the SHA-256 of every fragment of
the clip. A changed byte is named by the moment it falls in, or "the header".

The public key: --public-key PEM_FILE, else fetched from --api URL (GET
/exports/public-key: no account needed), else from a running video-index local.

Exit codes: 0 verified; 1 the clip or the manifest was changed (each difference is
printed); 2 bad usage (a file that cannot be read, no public key to be had).
"""


def register(commands: Any) -> None:
    verify = commands.add_parser(
        "verify",
        help="check an exported clip against its signed manifest (offline)",
        description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    verify.add_argument("clip", type=Path, metavar="CLIP.mp4", help="the exported clip")
    verify.add_argument(
        "manifest", type=Path, metavar="MANIFEST.json", help="its manifest (manifest_url)"
    )
    verify.add_argument(
        "--public-key", type=Path, metavar="PEM_FILE", help="the export public key (PEM)"
    )
    verify.add_argument(
        "--api", metavar="URL", help="fetch the public key from this API (no account needed)"
    )
    verify.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="fetch it from this running video-index local (default: its ready file)",
    )
    verify.set_defaults(handler=lambda args, console, _: _verify(args, console))


def _verify(args: argparse.Namespace, console: Console) -> int:
    def run() -> int:
        from video_index.media.manifest import check_clip, check_signature

        manifest = _manifest(args.manifest)
        if not args.clip.is_file():
            raise BadInput("CLIP", f"{args.clip} is not a file")
        pem, key_id = _public_key(args)
        problems = []
        signed_by = str(manifest.get("signature", {}).get("key_id", ""))
        if key_id and signed_by and key_id != signed_by:
            problems.append(f"the manifest names the key {signed_by}, not {key_id}")
        reason = check_signature(manifest, pem)
        if reason is not None:
            problems.append(f"signature: {reason}")
        problems += check_clip(manifest, args.clip)
        for problem in problems:
            console.print(Text(f"FAILED {problem}", style="red"))
        if problems:
            return EXIT_PROBLEM
        console.print(
            Text(
                f"OK {args.clip.name}: {manifest['device']} {manifest['window']['from']} to "
                f"{manifest['window']['to']}, {len(manifest['sources'])} source files, "
                f"{len(manifest['fragments'])} fragments, signed by {signed_by}"
            )
        )
        return EXIT_OK

    return guarded(console, run)


def _manifest(path: Path) -> dict[str, Any]:
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BadInput("MANIFEST", f"{path} is not a readable JSON manifest: {exc}") from None
    if not isinstance(manifest, dict) or "fragments" not in manifest or "clip" not in manifest:
        raise BadInput("MANIFEST", f"{path} is not an export manifest")
    return manifest


def _public_key(args: argparse.Namespace) -> tuple[bytes, str | None]:
    """The PEM and (when fetched) the key id."""
    if args.public_key is not None:
        try:
            return args.public_key.read_bytes(), None
        except OSError as exc:
            raise BadInput("--public-key", f"cannot read {args.public_key}: {exc}") from None
    api = args.api or _local_api(args.ready_file)
    import urllib.request

    url = f"{api.rstrip('/')}/exports/public-key"
    try:
        with urllib.request.urlopen(url, timeout=10) as answer:
            body = json.loads(answer.read())
    except (OSError, ValueError) as exc:
        raise BadInput("--api", f"cannot fetch the public key from {url}: {exc}") from None
    return str(body["pem"]).encode(), str(body["key_id"])


def _local_api(ready_file: Path | None) -> str:
    from video_index.cli.ready import default_ready_file, stale_reason

    path = ready_file or default_ready_file()
    if not path.is_file() or stale_reason(path) is not None:
        raise BadInput(
            "--public-key", "give --public-key PEM_FILE or --api URL (no video-index local runs)"
        )
    return str(json.loads(path.read_text(encoding="utf-8"))["api"])
