"""An export's signed manifest: what the clip was made of, and a hash of every part of it
(docs/playback.md#signed-exports).

The manifest is JSON beside the clip (``exports/<id>/manifest.json``): the device, the
window, its time zone, who exported, the holds covering the window, each source segment
(key, version id, size, SHA-256 and where that hash came from), the gaps as the index
lists them, the clip's SHA-256, and its **fragments** (:mod:`.mp4_index`): byte ranges
tiling the file — the header, then one per keyframe group — each with its SHA-256 and the
moment it shows. Every number in it is an integer (times in ms), so its canonical form is
plain:

* **canonical bytes**: the manifest without its ``signature`` member, as
  ``json.dumps(m, sort_keys=True, separators=(",", ":"), ensure_ascii=True)`` encoded as
  ASCII (keys sorted by code point at every level, no whitespace, non-ASCII as ``\\uXXXX``);
* **signed message**: the ASCII text ``video-index-export-manifest/1 sha256=<hex>``, the
  SHA-256 of the canonical bytes in lower-case hex (KMS signs a RAW message of at most
  4,096 bytes; a 6-hour manifest is megabytes, so its digest is what is signed);
* **signature**: ECDSA_SHA_256 (P-256) by the export signing key in KMS, DER, base64, in
  ``signature.value`` beside ``algorithm`` and ``key_id``.

:func:`check_clip` holds a clip to a manifest with nothing but hashlib; the signature is
checked by :func:`check_signature` (``cryptography``, imported there: the command line).
"""

from __future__ import annotations

import base64
import hashlib
import json
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, BinaryIO, Final

from video_index.core.timeunits import iso_ms
from video_index.media.mp4_index import Fragment, fragments, moov_end

FORMAT: Final = "video-index-export-manifest/1"
#: Where a source's SHA-256 came from.
FROM_S3: Final = "s3-checksum"  # S3's full-object checksum, verified by S3 at upload
FROM_BYTES: Final = "computed"  # hashed from the bytes at export (no SHA-256 stored)
_CHUNK: Final = 1024 * 1024


@dataclass(frozen=True, slots=True)
class Source:
    """One segment as the export read it."""

    key: str
    version_id: str
    size: int
    sha256: str
    sha256_from: str
    start_ms: int
    #: S3's stored checksum when it is not the object's SHA-256 (a multipart upload's
    #: composite ``<base64>-<parts>``).
    s3_checksum: str | None = None

    def public(self, clip_start_ms: int) -> dict[str, Any]:
        out: dict[str, Any] = {
            "key": self.key,
            "version_id": self.version_id,
            "bytes": self.size,
            "sha256": self.sha256,
            "sha256_from": self.sha256_from,
            "start": iso_ms(self.start_ms),
            "clip_from_ms": clip_start_ms,
        }
        if self.s3_checksum is not None:
            out["s3_checksum_sha256"] = self.s3_checksum
        return out


def canonical(manifest: dict[str, Any]) -> bytes:
    """The bytes that are signed over (the module's docstring)."""
    body = {k: v for k, v in manifest.items() if k != "signature"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=True).encode()


def signed_message(manifest: dict[str, Any]) -> bytes:
    return f"{FORMAT} sha256={hashlib.sha256(canonical(manifest)).hexdigest()}".encode()


def _wall(clip_ms: int, sources: Sequence[Source], starts: Sequence[int]) -> int:
    """The wall-clock moment (epoch ms) a clip time shows: its source's start plus the
    offset into it (each source starts where the previous one ended, gaps skipped)."""
    index = max((i for i, s in enumerate(starts) if s <= clip_ms), default=0)
    return sources[index].start_ms + clip_ms - starts[index]


def clip_parts(
    path: Path, sources: Sequence[Source], starts: Sequence[int]
) -> tuple[dict[str, Any], list[dict[str, Any]]]:
    """The clip's size and SHA-256, and its fragments with their hashes and moments (the
    file is read once, a fragment at a time: a clip may be gigabytes)."""
    size = path.stat().st_size
    whole = hashlib.sha256()
    parts = []
    with path.open("rb") as handle:
        end = moov_end(handle)
        handle.seek(0)
        tiles, _ = fragments(handle.read(end), size)
        handle.seek(0)
        for tile in tiles:
            digest = hashlib.sha256()
            for chunk in _read(handle, tile.end - tile.start):
                digest.update(chunk)
                whole.update(chunk)
            parts.append(_part(tile, digest.hexdigest(), sources, starts))
    return {"bytes": size, "sha256": whole.hexdigest()}, parts


def _part(
    tile: Fragment, sha256: str, sources: Sequence[Source], starts: Sequence[int]
) -> dict[str, Any]:
    """A fragment as the manifest lists it: its range, hash and moment (or "header")."""
    part: dict[str, Any] = {"range": [tile.start, tile.end], "sha256": sha256}
    if tile.from_ms is None or tile.to_ms is None:
        part["part"] = "header"
    else:
        part.update(clip_from_ms=tile.from_ms, clip_to_ms=tile.to_ms)
        part["from"] = iso_ms(_wall(tile.from_ms, sources, starts))
        part["to"] = iso_ms(_wall(tile.to_ms, sources, starts))
    return part


def build(
    job: Any,
    sources: Sequence[Source],
    starts: Sequence[int],
    clip_path: Path,
    exported_at_ms: int,
) -> dict[str, Any]:
    """The unsigned manifest of a made clip (``job``: its :class:`ExportJob`)."""
    clip, parts = clip_parts(clip_path, sources, starts)
    return {
        "format": FORMAT,
        "export_id": job.export_id,
        "device": job.device,
        "window": {"from": iso_ms(job.from_ms), "to": iso_ms(job.to_ms)},
        "time_zone": job.time_zone,
        "exported_by": job.created_by,
        "requested_at": job.created_at,
        "exported_at": iso_ms(exported_at_ms),
        "holds": job.holds,
        "gaps": job.gaps,
        "sources": [s.public(start) for s, start in zip(sources, starts, strict=True)],
        "clip": {**clip, "file": "clip.mp4", "container": "mp4-progressive"},
        "fragments": parts,
    }


def sign(manifest: dict[str, Any], signer: Callable[[bytes], tuple[bytes, str]]) -> dict[str, Any]:
    """``manifest`` with its ``signature`` (``signer``: KMS Sign of the message)."""
    value, key_id = signer(signed_message(manifest))
    return {
        **manifest,
        "signature": {
            "algorithm": "ECDSA_SHA_256",
            "key_id": key_id,
            "message": signed_message(manifest).decode(),
            "value": base64.b64encode(value).decode(),
        },
    }


# -- verification (the command line: no KMS, no media library) ----------------------------


def _moment(part: dict[str, Any]) -> str:
    if part.get("part") == "header":
        return "the header (ftyp, moov: the clip's index and codec setup)"
    return (
        f"the moment {part['from']} to {part['to']} "
        f"(clip time {part['clip_from_ms'] / 1000:.3f}-{part['clip_to_ms'] / 1000:.3f} s, "
        f"bytes {part['range'][0]}-{part['range'][1] - 1})"
    )


def _read(handle: BinaryIO, length: int) -> Iterable[bytes]:
    while length > 0:
        chunk = handle.read(min(_CHUNK, length))
        if not chunk:
            return
        length -= len(chunk)
        yield chunk


def check_clip(manifest: dict[str, Any], clip: Path) -> list[str]:
    """What differs between ``clip`` and the manifest: each changed fragment named by the
    moment it shows (or the header); empty when the clip is the one the manifest describes."""
    problems: list[str] = []
    size = clip.stat().st_size
    expected = int(manifest["clip"]["bytes"])
    if size != expected:
        problems.append(f"the clip is {size} bytes, the manifest says {expected}")
    whole = hashlib.sha256()
    with clip.open("rb") as handle:
        for part in manifest["fragments"]:
            start, end = int(part["range"][0]), int(part["range"][1])
            handle.seek(start)
            digest = hashlib.sha256()
            for chunk in _read(handle, end - start):
                digest.update(chunk)
                whole.update(chunk)
            if digest.hexdigest() != part["sha256"]:
                problems.append(f"changed: {_moment(part)}")
        handle.seek(int(manifest["fragments"][-1]["range"][1]) if manifest["fragments"] else 0)
        for chunk in _read(handle, max(0, size - handle.tell())):
            whole.update(chunk)
    if whole.hexdigest() != manifest["clip"]["sha256"] and not problems:
        problems.append("the clip's SHA-256 is not the manifest's")
    return problems


def check_signature(manifest: dict[str, Any], public_key_pem: bytes) -> str | None:
    """None when the signature is the key's over this manifest; otherwise why not."""
    from cryptography.exceptions import InvalidSignature
    from cryptography.hazmat.primitives import hashes
    from cryptography.hazmat.primitives.asymmetric import ec
    from cryptography.hazmat.primitives.serialization import load_pem_public_key

    signature = manifest.get("signature")
    if not isinstance(signature, dict) or signature.get("algorithm") != "ECDSA_SHA_256":
        return "the manifest carries no ECDSA_SHA_256 signature"
    key = load_pem_public_key(public_key_pem)
    if not isinstance(key, ec.EllipticCurvePublicKey):
        return "the public key is not an elliptic-curve key"
    try:
        value = base64.b64decode(str(signature.get("value", "")), validate=True)
        key.verify(value, signed_message(manifest), ec.ECDSA(hashes.SHA256()))
    except (InvalidSignature, ValueError):
        return "the signature does not match the manifest: it was changed, or signed by another key"
    return None
