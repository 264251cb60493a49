"""SPDX license expressions (SPDX specification 2.3, annex D), parsed exactly.

    expression := or-term ;  or-term := and-term ("OR" and-term)*
    and-term   := with-term ("AND" with-term)*
    with-term  := license ["WITH" exception] | "(" expression ")"

A license is an idstring (letters, digits, ``.`` and ``-``), optionally ending in ``+``,
or a ``LicenseRef-…``. The operators are upper case (the specification matches them case
sensitively); ids compare without case. Anything else — a comma, a sentence, a lone
word after another — is not an expression: :class:`NotAnExpression`. So "Limited use
only" or "Commercial, see disclaimer" never pass for MIT or ISC because of the letters
they contain.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from typing import Final

_TOKEN: Final = re.compile(r"\s*(\(|\)|[A-Za-z0-9][A-Za-z0-9.\-]*\+?|\S)")
_ID: Final = re.compile(r"^[A-Za-z0-9][A-Za-z0-9.\-]*\+?$")
_OPERATORS: Final = frozenset({"AND", "OR", "WITH"})


class NotAnExpression(ValueError):
    """The text is not an SPDX license expression."""


@dataclass(frozen=True)
class License:
    id: str
    exception: str | None = None


@dataclass(frozen=True)
class Both:
    """``left AND right``: both apply."""

    left: Node
    right: Node


@dataclass(frozen=True)
class Either:
    """``left OR right``: the licensee chooses one."""

    left: Node
    right: Node


Node = License | Both | Either


def parse(text: str) -> Node:
    """The expression ``text``; :class:`NotAnExpression` naming what is wrong."""
    tokens = _tokens(text)
    if not tokens:
        raise NotAnExpression("empty")
    node, rest = _or(tokens, text)
    if rest:
        raise NotAnExpression(f"{text!r}: unexpected {rest[0]!r}")
    return node


def _tokens(text: str) -> list[str]:
    tokens = [match.group(1) for match in _TOKEN.finditer(text)]
    bad = [t for t in tokens if t not in ("(", ")") and not _ID.match(t)]
    if bad:
        raise NotAnExpression(f"{text!r}: {bad[0]!r} is no license id or operator")
    return tokens


def _or(tokens: list[str], text: str) -> tuple[Node, list[str]]:
    node, rest = _and(tokens, text)
    while rest and rest[0] == "OR":
        right, rest = _and(rest[1:], text)
        node = Either(node, right)
    return node, rest


def _and(tokens: list[str], text: str) -> tuple[Node, list[str]]:
    node, rest = _with(tokens, text)
    while rest and rest[0] == "AND":
        right, rest = _with(rest[1:], text)
        node = Both(node, right)
    return node, rest


def _with(tokens: list[str], text: str) -> tuple[Node, list[str]]:
    if not tokens:
        raise NotAnExpression(f"{text!r}: ends where a license is expected")
    first, rest = tokens[0], tokens[1:]
    if first == "(":
        node, rest = _or(rest, text)
        if not rest or rest[0] != ")":
            raise NotAnExpression(f"{text!r}: unbalanced parenthesis")
        return node, rest[1:]
    if first == ")" or first in _OPERATORS:
        raise NotAnExpression(f"{text!r}: {first!r} where a license is expected")
    if rest and rest[0] == "WITH":
        if len(rest) < 2 or not _ID.match(rest[1]) or rest[1] in _OPERATORS:
            raise NotAnExpression(f"{text!r}: WITH needs an exception id")
        return License(first, rest[1]), rest[2:]
    if rest and rest[0] not in ("AND", "OR", ")"):
        raise NotAnExpression(f"{text!r}: {rest[0]!r} follows a license without an operator")
    return License(first), rest


def licenses(node: Node) -> Iterator[License]:
    """Every license the expression names."""
    if isinstance(node, License):
        yield node
    else:
        yield from licenses(node.left)
        yield from licenses(node.right)


def permitted(node: Node, allowed: Mapping[str, str], exceptions: Mapping[str, str]) -> bool:
    """Whether the expression grants allowed terms: each license an allowed id (and its
    exception, if any, an allowed exception); ``AND`` needs both sides, ``OR`` either."""
    if isinstance(node, License):
        known = {key.lower() for key in allowed}
        if node.id.lower() not in known:
            return False
        return node.exception is None or node.exception.lower() in {
            key.lower() for key in exceptions
        }
    if isinstance(node, Both):
        return permitted(node.left, allowed, exceptions) and permitted(
            node.right, allowed, exceptions
        )
    return permitted(node.left, allowed, exceptions) or permitted(node.right, allowed, exceptions)
