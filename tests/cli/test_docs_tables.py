"""The docs' tables are complete, checked against what they describe (issue 35):

* docs/cli.md's command table against the CLI's own argparse parser — every command and
  sub-command is in the table, and every one the table names exists;
* docs/api.md's error table against the API's OpenAPI document — every status any route
  declares is in the table;
* the README's list of ready-file keys against docs/local.md's table of them (and that
  table against a running stack's file: tests/cli/test_operator_day.py).
"""

from __future__ import annotations

import argparse
import json
import re
from pathlib import Path

from video_index.api.resolver import TITLE
from video_index.app.routes import whole_app
from video_index.cli.main import build_parser

ROOT = Path(__file__).resolve().parents[2]
CODE = re.compile(r"`([^`]+)`")


def table_rows(text: str, header: str) -> list[list[str]]:
    """The rows (cells) of the Markdown table whose header row starts with ``header``."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"| {header} |"))
    rows = []
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = re.split(r"(?<!\\)\|", line.strip().strip("|"))
        rows.append([cell.strip() for cell in cells])
    return rows


def documented_commands() -> set[str]:
    """Each command docs/cli.md's table names: ``hold add\\|list`` is ``hold add`` and
    ``hold list``; a word after the command that is no option is a sub-command."""
    names: set[str] = set()
    for row in table_rows((ROOT / "docs" / "cli.md").read_text(), "command"):
        for span in CODE.findall(row[0]):
            if span.startswith("-"):  # the options a row adds (`--stack\|--ready-file`)
                continue
            words = span.replace("\\|", "|").split()
            if len(words) > 1 and re.fullmatch(r"[a-z]+(\|[a-z]+)*", words[1]):
                names.update(f"{words[0]} {sub}" for sub in words[1].split("|"))
            else:
                names.add(words[0])
    return names


def parser_commands() -> set[str]:
    """Each command of the parser: a sub-command's, or a first positional's choices
    (``device retire|unretire``), as ``command sub``; else the command alone."""
    names: set[str] = set()
    top = next(a for a in build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    for name, parser in top.choices.items():
        subs = [a for a in parser._actions if isinstance(a, argparse._SubParsersAction)]
        positionals = [a for a in parser._actions if not a.option_strings and a.choices]
        if subs:
            names.update(f"{name} {sub}" for sub in subs[0].choices)
        elif positionals and not isinstance(positionals[0], argparse._SubParsersAction):
            names.update(f"{name} {choice}" for choice in positionals[0].choices or ())
        else:
            names.add(name)
    return names


def test_the_cli_table_names_every_command_and_only_commands_that_exist() -> None:
    documented, parsed = documented_commands(), parser_commands()
    # A few written here, so the two readers themselves are checked
    assert {"device retire", "device unretire", "devices", "calendar", "hold add"} <= parsed
    assert {"key make", "rebuild abort", "camera rotate", "retention run"} <= documented
    # Then each side has every command of the other
    assert parsed - documented == set(), "commands missing from docs/cli.md"
    assert documented - parsed == set(), "docs/cli.md names commands that do not exist"


def test_the_api_error_table_has_every_status_a_route_declares() -> None:
    document = json.loads(whole_app().get_openapi_json_schema(title=TITLE, version="1"))
    declared = {
        int(status)
        for operations in document["paths"].values()
        for operation in operations.values()
        for status in operation.get("responses", {})
        if int(status) >= 400
    }
    table = {int(row[0]) for row in table_rows((ROOT / "docs" / "api.md").read_text(), "status")}
    # The statuses the issue found missing are declared, and documented
    assert {403, 429} <= declared
    assert declared - table == set(), "statuses declared by routes but not in docs/api.md"


def local_md_keys() -> set[str]:
    rows = table_rows((ROOT / "docs" / "local.md").read_text(), "key")
    return {key for row in rows for key in CODE.findall(row[0])}


def test_the_readme_lists_the_ready_file_keys_docs_local_md_explains() -> None:
    readme = (ROOT / "README.md").read_text()
    listed = readme.split("<!-- ready-file keys")[1].split("<!-- end of ready-file keys")[0]
    keys = set(CODE.findall(listed.split("-->", 1)[1]))
    assert keys == local_md_keys()
    assert len(keys) >= 30


def test_retention_days_is_documented_as_an_object_of_days_per_kind() -> None:
    rows = table_rows((ROOT / "docs" / "local.md").read_text(), "key")
    (what,) = [row[1] for row in rows if "`retention_days`" in row[0]]
    assert "object of days per kind" in what and '"video": 30' in what
