"""Every command's help is plain text a newcomer can read: each command and sub-command has
a description of its own, each option says what it is for, and no docstring markup
(``double back-quotes``, ``:mod:`` roles) leaks into ``--help`` (issue 35)."""

from __future__ import annotations

import argparse
import re
from collections.abc import Iterator

import pytest

from video_index.cli.main import build_parser

#: What reStructuredText leaves in text written for Sphinx rather than for a terminal.
MARKUP = re.compile(r"``|:(mod|class|func|meth|data|attr|exc):`")


def commands(
    parser: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (sub-)command's parser, with the words that reach it."""
    yield path, parser
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield from commands(sub, (*path, name))


ALL = list(commands(build_parser()))
IDS = [" ".join(path) or "video-index" for path, _ in ALL]


def test_the_walk_finds_every_command() -> None:
    # A written list, so the walk itself is checked: these must all be among what it found
    expected = {
        "key check",
        "key make",
        "upload",
        "local",
        "status",
        "reconcile",
        "rebuild start",
        "rebuild status",
        "rebuild abort",
        "export",
        "annotate add",
        "annotate list",
        "annotate export",
        "annotate import",
        "delete",
        "undelete",
        "restore",
        "device",
        "devices",
        "calendar",
        "camera add",
        "camera list",
        "camera revoke",
        "camera rotate",
        "hold add",
        "hold list",
        "hold release",
        "hold export",
        "hold import",
        "retention run",
    }
    assert expected <= set(IDS)


@pytest.mark.parametrize(("path", "parser"), ALL, ids=IDS)
def test_each_command_has_plain_help_with_every_option_explained(
    path: tuple[str, ...], parser: argparse.ArgumentParser
) -> None:
    text = parser.format_help()
    # Then no markup meant for Sphinx
    assert not MARKUP.search(text), MARKUP.search(text)
    # And a description of its own
    assert parser.description and parser.description.strip(), f"{path}: no description"
    # And every option and argument says what it is for
    for action in parser._actions:
        if isinstance(action, argparse._HelpAction | argparse._SubParsersAction):
            continue
        if action.help == argparse.SUPPRESS:
            continue
        named = action.option_strings or action.dest
        assert action.help and action.help.strip(), f"{path}: {named}"


def test_delete_undelete_and_restore_describe_themselves() -> None:
    # Given the three commands that used to share one description
    parsers = {" ".join(path): parser for path, parser in ALL}
    descriptions = [parsers[name].description for name in ("delete", "undelete", "restore")]
    # Then each has its own, starting with what it does
    assert len(set(descriptions)) == 3
    assert descriptions[0].lower().startswith("delete")
    assert descriptions[1].lower().startswith("bring back")
    assert descriptions[2].lower().startswith("copy back")
