"""The authorization step (docs/access.md): what the decision adds to a request.

The same request — ``GET /devices/cam-001`` with a JWT of a ``viewer`` scoped to
``site:north`` (a site mapped to two device patterns) — is answered by the real resolver
over in-memory services (no AWS: the figure is the API's own CPU time), in the same run:

* **with** the decision (:func:`video_index.api.access.refusal` and
  :func:`~video_index.api.access.finish`, as deployed);
* **without** it: the same resolver with the decision replaced by handing the route a
  fixed caller (what the request cost before roles existed);
* the decision alone, called directly.

Medians of interleaved batches, CPU time of this process. The answers must be equal (the
run fails otherwise).
"""

from __future__ import annotations

import copy
import json
import statistics
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, Final
from unittest.mock import patch

from rich.table import Table

from bench.context import BenchContext, BenchmarkFailed
from video_index.api import access as decision
from video_index.api.caller import set_caller
from video_index.api.context import configure
from video_index.app.routes import whole_app
from video_index.core.access import Caller, Role, Rule
from video_index.core.access_policy import AccessPolicy
from video_index.query.queries import Queries
from worlds import events as ev

FULL: Final = (15, 400)  # batches, requests per batch
QUICK: Final = (3, 100)
POLICY: Final = AccessPolicy(sites={"north": ("cam-0*", "north-*")})


class _Queries(Queries):
    """The query layer's answer for one device, from memory (no store: nothing is read)."""

    def __init__(self) -> None:
        pass

    def device(self, device: str) -> tuple[dict[str, Any], bool]:
        return {}, False

    def silent_since(self, totals: dict[str, Any], retired: bool) -> int | None:
        return None


def _event() -> dict[str, Any]:
    event = ev.http_request("/devices/cam-001", "", "GET")
    event["requestContext"]["authorizer"] = ev.cognito_authorizer(
        "u-1", ["viewer"], devices="site:north"
    )
    return event


@contextmanager
def _without_decision() -> Iterator[None]:
    caller = Caller("u-1", Role.VIEWER, POLICY.scope_of(["site:north"]))

    def hand_over(app: Any, event: Any) -> None:
        set_caller(caller)
        decision._decided.set(Rule(Role.VIEWER))
        return None

    with patch.object(decision, "refusal", hand_over), patch.object(decision, "finish", _same):
        yield


def _same(answer: dict[str, Any]) -> dict[str, Any]:
    return answer


def _batch(run: Callable[[], object], count: int) -> float:
    began = time.process_time()
    for _ in range(count):
        run()
    return (time.process_time() - began) / count


def access_benchmark(context: BenchContext) -> None:
    batches, count = QUICK if context.quick else FULL
    services = {Queries: _Queries()}
    configure(lambda: services)
    decision.configure_policy(POLICY)
    event = _event()

    def resolve() -> dict[str, Any]:
        return whole_app().resolve(copy.deepcopy(event), None)

    def decide() -> object:
        return (
            decision.finish({"headers": {}}) if decision.refusal(whole_app(), event) is None else 0
        )

    try:
        with_answer = resolve()
        with _without_decision():
            without_answer = resolve()
        if json.loads(with_answer["body"]) != json.loads(without_answer["body"]):
            raise BenchmarkFailed("the answers with and without the decision differ")
        if with_answer["statusCode"] != 200:
            raise BenchmarkFailed(f"the request was refused: {with_answer}")
        withs, withouts, alones = [], [], []
        for _ in range(batches):  # interleaved: both see the same machine
            withs.append(_batch(resolve, count))
            with _without_decision():
                withouts.append(_batch(resolve, count))
            alones.append(_batch(decide, count))
    finally:
        decision.configure_policy(None)
    with_us = statistics.median(withs) * 1e6
    without_us = statistics.median(withouts) * 1e6
    alone_us = statistics.median(alones) * 1e6
    table = Table(
        title=f"Authorization per request (GET /devices/{{device}}, viewer scoped to a site; "
        f"median of {batches} batches of {count}, CPU)"
    )
    for column in ("request", "µs per request"):
        table.add_column(column, justify="right" if column != "request" else "left")
    table.add_row("with the decision", f"{with_us:.0f}")
    table.add_row("without it (a fixed caller handed over)", f"{without_us:.0f}")
    table.add_row("added by the decision", f"{with_us - without_us:+.0f}")
    table.add_row("the decision alone (refusal + finish)", f"{alone_us:.1f}")
    context.console.print(table)
