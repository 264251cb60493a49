"""The ``export`` and ``import`` actions shared by ``annotate`` and ``hold``: JSON Lines
out to a file or stdout, in from a file or stdin, and the outcomes of an import shown."""

from __future__ import annotations

import argparse
import dataclasses
import json
import sys
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console
from rich.text import Text

from video_index.cli.args import device_arg
from video_index.cli.exits import EXIT_OK, EXIT_PROBLEM
from video_index.core.errors import BadInput
from video_index.core.jsonlines import OUTCOMES, Outcome


def add_transfer_parsers(
    actions: Any,
    export_help: str,
    target: Callable[[argparse.ArgumentParser], None],
    export: Callable[[argparse.Namespace, Console], int],
    import_: Callable[[argparse.Namespace, Console], int],
) -> None:
    """The ``export`` and ``import`` sub-commands under ``actions`` (argparse's sub-parsers),
    each with the command's own ``target`` options (where its table is)."""
    exporting = actions.add_parser(
        "export",
        help=export_help,
        description=f"Write {export_help}, one per line, to --out or stdout.",
    )
    exporting.add_argument("--device", type=device_arg, help="only this device (default: all)")
    exporting.add_argument("--out", type=Path, metavar="FILE", help="write here (default: stdout)")
    target(exporting)
    exporting.set_defaults(handler=lambda args, console, _: export(args, console))

    importing = actions.add_parser(
        "import",
        help="JSON Lines back in, idempotently by id",
        description="Read JSON Lines (as export writes them) back in, idempotently by id: a "
        "line the table holds already is unchanged, one older than the table's is refused "
        "(never overwritten). Exit code 1 when a line was refused, 2 for a bad line "
        "(nothing imported).",
    )
    importing.add_argument("file", type=Path, metavar="FILE", help="JSON Lines ('-': stdin)")
    importing.add_argument("--json", action="store_true", help="print the outcomes as JSON")
    target(importing)
    importing.set_defaults(handler=lambda args, console, _: import_(args, console))


def write_lines(lines: Iterable[str], out: Path | None, noun: str) -> int:
    """Write each line (to ``out``, else stdout) and say on stderr how many; exit 0."""
    count = 0
    if out is None:
        for line in lines:
            sys.stdout.write(line + "\n")
            count += 1
    else:
        with out.open("w", encoding="utf-8") as file:
            for line in lines:
                file.write(line + "\n")
                count += 1
    Console(stderr=True).print(Text(f"exported {count} {noun}(s)"))
    return EXIT_OK


def read_text(file: Path) -> list[str]:
    """The lines of ``file`` (``-``: stdin); an unreadable file is a :class:`BadInput`."""
    try:
        text = sys.stdin.read() if str(file) == "-" else file.read_text("utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise BadInput("FILE", f"cannot read {file}: {exc}") from None
    return text.splitlines()


def show_outcomes(console: Console, outcomes: Sequence[Outcome], id_key: str, as_json: bool) -> int:
    """Print what the import did (``id_key`` names the id in JSON: ``annotation_id``,
    ``hold_id``); exit 1 when a line was refused, else 0."""
    if as_json:
        shown = []
        for outcome in outcomes:
            fields = dataclasses.asdict(outcome)
            shown.append({"line": fields.pop("line"), id_key: fields.pop("id"), **fields})
        print(json.dumps(shown, indent=2))
    else:
        for outcome in outcomes:
            console.print(
                Text(
                    f"line {outcome.line}: {outcome.id} {outcome.outcome} ({outcome.detail})",
                    style="red" if outcome.outcome == "refused" else "",
                )
            )
        counts = {k: sum(o.outcome == k for o in outcomes) for k in OUTCOMES}
        console.print(Text(", ".join(f"{n} {k}" for k, n in counts.items())))
    return EXIT_PROBLEM if any(o.outcome == "refused" for o in outcomes) else EXIT_OK
