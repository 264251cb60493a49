"""The whole system on one machine: :class:`LocalStack` (``video-index local``, tests, demo).

``with LocalStack() as stack:`` starts, on free loopback ports:

* a moto server (S3, SQS, CloudWatch and DynamoDB with its streams; the tables go to
  ``dynamodb_endpoint`` instead when one is given: any DynamoDB-compatible endpoint the
  user runs, the stack neither starts nor stops it),

creates the bucket (versioned; :mod:`.s3_fidelity` sends the delete notifications moto
omits), the notification queue with its dead-letter queue (redrive policy), the
read-model, annotations and deletion requests tables
(:func:`video_index.core.table_schema.create_tables`, the definitions the CDK stack
uses, the read model's stream included) and the S3 → SQS notifications (the events and
prefix of the CDK stack, :mod:`video_index.core.queue_settings`), then runs the
aggregation consumer on the read model's stream (:mod:`.streams`, as Lambda's stream
event source does), the ingest, export and deletion workers (:mod:`.worker`) and
serves the API (:mod:`.http_api`) on 127.0.0.1.
:attr:`LocalStack.endpoints` is the ready-file content; leaving the ``with`` block
stops everything and closes every port.

What it sets outside itself, and so what a process can only run once at a time:

* :func:`video_index.query.routes.configure` — the API module's services point at this stack;
* moto's in-process backends — the moto server shares them with ``mock_aws`` (do not
  start a stack inside ``mock_aws``), and they are reset when the stack starts.

It reads no AWS configuration and sets no environment variable: every client has an
explicit endpoint and the fixed fake credentials of :mod:`.aws`.
"""

from __future__ import annotations

import logging
import os
import re
import tempfile
import time
import urllib.request
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Final

from video_index.core.queue_settings import (
    DELETION_MAX_RECEIVES,
    DELETION_TIMEOUT_SECONDS,
    EXPORT_TIMEOUT_SECONDS,
    INGEST_TIMEOUT_SECONDS,
    MAX_RECEIVE_COUNT,
    SQS_BATCH_SIZE,
    SQS_MAX_BATCHING_WINDOW_SECONDS,
    VISIBILITY_TIMEOUT_SECONDS,
    visibility_timeout_seconds,
)
from video_index.local.aws import (
    ACCESS_KEY_ID,
    REGION,
    SECRET_ACCESS_KEY,
    isolated_session,
    local_clients,
)
from video_index.local.aws import client as make_client
from video_index.local.names import DynamoDBEngine, LocalNames

logger = logging.getLogger(__name__)

READY_TIMEOUT_SECONDS: Final = 30.0

#: Loopback requests never go through a proxy from the environment.
_DIRECT: Final = urllib.request.build_opener(urllib.request.ProxyHandler({}))


#: The region in a SigV4 Authorization header's credential scope.
_SCOPE_REGION: Final = re.compile(r"(Credential=[^/,]+/\d{8}/)[a-z0-9-]+/")


def _one_region(app: Any, region: str) -> Any:
    """The WSGI ``app`` seeing every request as signed for ``region``.

    moto keeps one set of resources per region, like AWS; the local stack is one machine
    with one set, so a program configured for another region (the AWS CLI with a user's
    default) sees the stack's tables, queues and bucket rather than an empty region.
    moto checks no signature, so rewriting the credential scope is all it takes.
    """

    def pinned(environ: dict[str, Any], start_response: Any) -> Any:
        authorization = environ.get("HTTP_AUTHORIZATION")
        if authorization:
            environ["HTTP_AUTHORIZATION"] = _SCOPE_REGION.sub(
                lambda match: f"{match.group(1)}{region}/", authorization
            )
        return app(environ, start_response)

    return pinned


class MotoServer:
    """moto's server app on a loopback port (all services on one port), without access log.

    With ``region``, every request is served as that region's (see :func:`_one_region`).
    """

    def __init__(self, port: int = 0, region: str | None = None) -> None:
        from moto.moto_server import werkzeug_app
        from moto.moto_server.werkzeug_app import (
            DomainDispatcherApplication,
            MotoRequestHandler,
            create_backend_app,
        )
        from werkzeug.serving import make_server

        # moto's server would add `Access-Control-Allow-Origin: *` to every answer; S3
        # answers CORS from the bucket's own rules only, and so must the local bucket.
        werkzeug_app.DISABLE_GLOBAL_CORS = True  # type: ignore[attr-defined]

        class QuietHandler(MotoRequestHandler):
            def log_request(self, *args: Any, **kwargs: Any) -> None:
                pass

        app = DomainDispatcherApplication(create_backend_app)
        self._server = make_server(
            "127.0.0.1",
            port,
            _one_region(app, region) if region else app,
            threaded=True,
            request_handler=QuietHandler,
        )
        self.port = int(self._server.server_address[1])
        self.endpoint = f"http://127.0.0.1:{self.port}"
        self._thread: Any = None

    def start(self) -> MotoServer:
        import threading

        self._thread = threading.Thread(
            target=self._server.serve_forever, kwargs={"poll_interval": 0.2}, name="moto-server"
        )
        self._thread.daemon = True
        self._thread.start()
        # A fresh state: the backends are process-wide and may hold an earlier stack's data.
        reset = urllib.request.Request(f"{self.endpoint}/moto-api/reset", method="POST")
        with _DIRECT.open(reset, timeout=10):
            pass
        return self

    def stop(self) -> None:
        thread, self._thread = self._thread, None
        if thread is not None:
            self._server.shutdown()
            thread.join(10)
        self._server.server_close()


class LocalStack:
    """The local system; a context manager (see the module documentation)."""

    def __init__(
        self,
        dynamodb_endpoint: str | None = None,
        api_port: int | None = None,
        *,
        names: LocalNames | None = None,
        visibility_timeout_seconds: int = VISIBILITY_TIMEOUT_SECONDS,
        batch_size: int = SQS_BATCH_SIZE,
        batching_window_seconds: float = SQS_MAX_BATCHING_WINDOW_SECONDS,
        max_receive_count: int = MAX_RECEIVE_COUNT,
        function_timeout_seconds: float = INGEST_TIMEOUT_SECONDS,
        settings_overrides: dict[str, Any] | None = None,
        clock: Callable[[], float] = time.time,  # the API's (``video-index local --now``)
    ) -> None:
        self.dynamodb_endpoint = dynamodb_endpoint
        self.dynamodb_engine: DynamoDBEngine = "endpoint" if dynamodb_endpoint else "moto"
        self.api_port = api_port
        self.names = names or LocalNames()
        self.visibility_timeout_seconds = visibility_timeout_seconds
        self.batch_size = batch_size
        self.batching_window_seconds = batching_window_seconds
        self.max_receive_count = max_receive_count
        self.function_timeout_seconds = function_timeout_seconds
        audit = {"audit_bucket": self.names.audit_bucket, "audit_table": self.names.audit_table}
        self.settings_overrides: dict[str, Any] = {**audit, **(settings_overrides or {})}
        self.clock = clock
        self.session = isolated_session()
        self._endpoints: dict[str, Any] | None = None
        self._camera_entries: dict[str, str] = {}
        self._stops: list[tuple[str, Callable[[], None]]] = []
        # Set by start():
        self.clients: Any = None
        self.settings: Any = None
        self.worker: Any = None
        self.export_worker: Any = None
        self.deletion_worker: Any = None
        self.aggregation: Any = None
        self.http_api: Any = None

    # -- public -------------------------------------------------------------------------

    @property
    def endpoints(self) -> dict[str, Any]:
        """Endpoints, names and credentials (the ready file, docs/local.md); after start()."""
        if self._endpoints is None:
            raise RuntimeError("the local stack is not running")
        return dict(self._endpoints)

    def __enter__(self) -> LocalStack:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def start(self) -> LocalStack:
        """Start everything and return once the API answers; on failure, stop what started."""
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop in reverse order of start: API, workers, aggregation, moto. Idempotent."""
        self._endpoints = None
        interrupted: BaseException | None = None
        while self._stops:
            name, stop = self._stops.pop()
            try:
                stop()
            except Exception:
                logger.exception("stopping %s failed", name)
            except BaseException as exc:  # e.g. KeyboardInterrupt: stop the rest first
                interrupted = interrupted or exc
        if interrupted is not None:
            raise interrupted

    # -- start --------------------------------------------------------------------------

    def _start(self) -> None:
        from video_index.core.settings import Settings
        from video_index.local import s3_fidelity

        moto = MotoServer(region=REGION)
        self._stops.append(("moto server", moto.stop))
        moto.start()
        self._stops.append(("S3 fidelity", s3_fidelity.install()))
        dynamodb_endpoint = self.dynamodb_endpoint or moto.endpoint
        self.clients = local_clients(
            self.session, s3=moto.endpoint, sqs=moto.endpoint, dynamodb=dynamodb_endpoint
        )
        queues = self._create_resources()
        self._start_cameras(moto.endpoint)
        from video_index.local.resources import create_keys

        self.settings = Settings(
            bucket=self.names.bucket,
            table=self.names.table,
            annotations_table=self.names.annotations_table,
            queue_url=queues["queue_url"],
            dlq_url=queues["dlq_url"],
            export_queue_url=queues["export_queue_url"],
            deletions_table=self.names.deletions_table,
            holds_table=self.names.holds_table,
            shares_table=self.names.shares_table,
            deletion_queue_url=queues["deletion_queue_url"],
            **create_keys(self.clients, self.names),
            **self.settings_overrides,
        )
        self._start_workers(dynamodb_endpoint)
        self._start_api()
        self._endpoints = self._endpoints_of(moto.endpoint, dynamodb_endpoint, queues)

    def _create_resources(self) -> dict[str, str]:
        """The bucket, the queues and the tables; the queues' URLs by their settings' names."""
        from video_index.core.table_schema import create_tables
        from video_index.local.resources import create_audit_trail, create_bucket, create_queue

        sqs, names = self.clients.sqs, self.names
        queues: dict[str, str] = {}
        for prefix, name, dlq, timeout in (
            ("", names.queue, names.dlq, self.visibility_timeout_seconds),
            ("export_", names.export_queue, names.export_dlq, EXPORT_TIMEOUT_SECONDS),
            ("deletion_", names.deletion_queue, names.deletion_dlq, DELETION_TIMEOUT_SECONDS),
        ):
            if prefix:  # the workers' queues: as long as their function may run
                timeout = visibility_timeout_seconds(timeout)
            receives = DELETION_MAX_RECEIVES if prefix == "deletion_" else self.max_receive_count
            url, dlq_url = create_queue(
                sqs, name, dlq, visibility_timeout=timeout, max_receive_count=receives
            )
            queues[f"{prefix}queue_url"], queues[f"{prefix}dlq_url"] = url, dlq_url
        create_bucket(self.clients.s3, sqs, names.bucket, queues["queue_url"])
        create_tables(
            self.clients.dynamodb,
            names.table,
            names.annotations_table,
            names.deletions_table,
            names.holds_table,
            shares=names.shares_table,
        )
        create_audit_trail(self.clients, names, self.settings_overrides)  # docs/audit.md
        return queues

    def _start_cameras(self, moto_endpoint: str) -> None:
        """Camera identities (docs/cameras.md#locally): a CA and the credentials endpoint."""
        from video_index.local.cameras import start_cameras

        camera_dir = tempfile.TemporaryDirectory(prefix="video-index-cameras-")
        self._stops.append(("camera CA", camera_dir.cleanup))
        cameras, self._camera_entries = start_cameras(
            self.session, moto_endpoint, self.names.bucket, Path(camera_dir.name)
        )
        self._stops.append(("camera credentials endpoint", cameras.stop))

    def _start_workers(self, dynamodb_endpoint: str) -> None:
        from video_index.local.functions import start_workers

        start_workers(self, dynamodb_endpoint)

    def _start_api(self) -> None:
        """Both functions' routes on one port (docs/architecture.md)."""
        from video_index.app.routes import whole_app
        from video_index.app.services import build_api_services, configure
        from video_index.core.functions import API
        from video_index.local.functions import settings_of
        from video_index.local.http_api import LocalHttpApi

        # The API function's own settings; they hold all the media function's too.
        api_services = build_api_services(settings_of(self, API), self.clients, self.clock)
        configure(lambda: api_services)
        self.http_api = LocalHttpApi(whole_app().resolve, port=self.api_port or 0, region=REGION)
        self._stops.append(("HTTP API", self.http_api.stop))
        self.http_api.start()
        _wait_for_api(self.http_api.url)

    def _endpoints_of(
        self, moto_endpoint: str, dynamodb_endpoint: str, queues: dict[str, str]
    ) -> dict[str, Any]:
        """What ``endpoints`` answers (and ``--ready-file`` holds)."""
        from video_index.local.ready import API_GENERATION_CACHE
        from video_index.query.queries import GENERATION_TTL_SECONDS

        endpoints: dict[str, Any] = {
            "s3": moto_endpoint,
            "sqs": moto_endpoint,
            "dynamodb": dynamodb_endpoint,
            "cloudwatch": moto_endpoint,
            "api": self.http_api.url,
            # The viewer is served by the API itself (docs/viewer.md).
            "viewer": f"{self.http_api.url}/viewer",
            "bucket": self.names.bucket,
            "table": self.names.table,
            "annotations_table": self.names.annotations_table,
            **queues,
            "deletions_table": self.names.deletions_table,
            "holds_table": self.names.holds_table,
            "shares_table": self.names.shares_table,
            "export_signing_key": self.settings.export_signing_key,
            # The retention a local run applies, and the stack's clock (``--now``) as an
            # offset from the real one: ``video-index retention run --ready-file``.
            "retention_days": dict(self.settings.retention_days),
            "clock_offset_seconds": self.clock() - time.time(),
            # How long its API caches the serving generation (a rebuild's drop grace).
            API_GENERATION_CACHE: GENERATION_TTL_SECONDS,
            "region": REGION,
            "aws_access_key_id": ACCESS_KEY_ID,
            "aws_secret_access_key": SECRET_ACCESS_KEY,
            "dynamodb_engine": self.dynamodb_engine,
            "visibility_timeout_seconds": self.visibility_timeout_seconds,
            "max_receive_count": self.max_receive_count,
            "pid": os.getpid(),
            **self._camera_entries,
        }
        return endpoints

    def client(self, service: str) -> Any:
        """A client of this stack's moto server (``s3``, ``sqs``, ``cloudwatch``) or DynamoDB."""
        if self._endpoints is None:
            raise RuntimeError("the local stack is not running")
        endpoint = self._endpoints["dynamodb" if service == "dynamodb" else "s3"]
        return make_client(self.session, service, endpoint)


def _wait_for_api(url: str, timeout: float = READY_TIMEOUT_SECONDS) -> None:
    """Until ``GET /openapi.json`` answers 200."""
    deadline = time.monotonic() + timeout
    last: object = None
    while time.monotonic() < deadline:
        try:
            with _DIRECT.open(f"{url}/openapi.json", timeout=5) as response:
                if response.status == 200:
                    return
                last = response.status
        except OSError as exc:
            last = exc
        time.sleep(0.1)
    raise RuntimeError(f"the local API at {url} did not answer within {timeout:.0f} s: {last}")
