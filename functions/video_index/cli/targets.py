"""Where an ops command works: a deployed stack, a running ``video-index local``, or this process.

* ``--stack NAME`` (or ``VIDEO_INDEX_STACK``): the deployed stack; jobs run on its state
  machines, everything else is found in its outputs (docs/operations.md);
* ``--ready-file PATH``: a running ``video-index local``; jobs run in this process;
* ``--in-process``: the job runs in this process — on the stack's resources with
  ``--stack``, else configured by ``VIDEO_INDEX_*`` and the usual boto3 variables.

Nothing is implied: a job command without one of them is a usage error, so a large
bucket is never rebuilt in an operator's shell by accident.
"""

from __future__ import annotations

import argparse
import os
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

ENV_STACK: Final = "VIDEO_INDEX_STACK"

WHERE: Final = (
    "say where to run: --stack NAME (the deployed stack's state machines; or set "
    f"{ENV_STACK}), --ready-file PATH (a running `video-index local`) or --in-process "
    "(this process, configured by VIDEO_INDEX_* variables)"
)


def add_target(parser: argparse.ArgumentParser, *, in_process: bool = True) -> None:
    where = parser.add_mutually_exclusive_group()
    where.add_argument(
        "--stack",
        metavar="NAME",
        help=f"the deployed stack (its CloudFormation name; default ${ENV_STACK}); "
        "found with DescribeStacks in the usual AWS profile and region",
    )
    where.add_argument(
        "--ready-file",
        type=Path,
        metavar="PATH",
        help="use the stack a running `video-index local` describes in this file",
    )
    if in_process:
        parser.add_argument(
            "--in-process",
            action="store_true",
            help="run the job in this process (small buckets, `video-index local`): on the "
            "resources of --stack, or configured by VIDEO_INDEX_* without it",
        )


def stack_name(args: argparse.Namespace) -> str | None:
    """The stack the command targets: ``--stack``, else ``VIDEO_INDEX_STACK`` (unless
    another target was given)."""
    if args.stack:
        return str(args.stack)
    if getattr(args, "ready_file", None) is not None or getattr(args, "in_process", False):
        return None
    return os.environ.get(ENV_STACK) or None


def new_session() -> Any:
    """A boto3 session with the shell's AWS configuration (the seam tests replace)."""
    import boto3

    return boto3.session.Session()


def open_stack(name: str) -> Any:
    """The deployed stack ``name`` (:class:`~video_index.ops.deployed.DeployedStack`)."""
    from video_index.ops.deployed import DeployedStack

    return DeployedStack.open(name, new_session())


@dataclass(frozen=True)
class Resources:
    """A target's settings, clients and clock (a local stack's ``--now`` moves it)."""

    settings: Any
    clients: Any
    clock: Callable[[], float]


def resources(args: argparse.Namespace, required: tuple[str, ...] | None = None) -> Resources:
    """The resources the arguments name: a running ``video-index local`` (``--ready-file``,
    or found at the default place), a deployed stack (``--stack`` or ``VIDEO_INDEX_STACK``),
    else the ``VIDEO_INDEX_*`` variables (``required``: those the command cannot run
    without; default the bucket and the read-model table)."""
    if getattr(args, "ready_file", None) is not None:
        from video_index.local.ready import ReadyStack

        ready = ReadyStack.read(args.ready_file)
        return Resources(ready.settings(), ready.clients(), ready.clock())
    name = stack_name(args) if hasattr(args, "stack") else os.environ.get(ENV_STACK) or None
    if name:
        stack = open_stack(name)
        return Resources(stack.settings(), stack.clients(), time.time)
    from video_index.aws.clients import Clients
    from video_index.cli.ready import missing_target_note
    from video_index.core.errors import ConfigurationError
    from video_index.core.settings import Settings

    try:
        settings = Settings.from_env() if required is None else Settings.from_env(required=required)
    except ConfigurationError as exc:
        raise ConfigurationError(
            f"say where: --stack NAME, --ready-file PATH, or the VIDEO_INDEX_* variables "
            f"({exc}); {missing_target_note()}"
        ) from None
    return Resources(settings, Clients.default(), time.time)


def source_of(args: argparse.Namespace) -> str:
    """The source a job reads S3 from: a manifest's inventory, the one given, else a
    listing on the local stack (it has no inventory) and the newest inventory elsewhere."""
    if args.manifest:
        return "inventory"
    if args.source:
        return str(args.source)
    return "list" if getattr(args, "ready_file", None) is not None else "inventory"
