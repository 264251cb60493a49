"""The export worker: SQS messages ``{"export_id"}`` → :meth:`Exports.run` (docs/playback.md).

Runs as the export Lambda (SQS event source, partial batch responses) and, in
``video-index local``, as a Lambda-like worker thread. A job that cannot be made
ends ``failed`` with its reason (the message is consumed); a transient failure
(S3 throttling, a timeout) or a message that names no job fails the record, so SQS
delivers it again and, after ``maxReceiveCount`` receives, parks it in the export
DLQ, where the DLQ alarm shows it: nothing is dropped silently.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from aws_lambda_powertools import Logger
from aws_lambda_powertools.utilities.batch import (
    BatchProcessor,
    EventType,
    process_partial_response,
)
from aws_lambda_powertools.utilities.data_classes.sqs_event import SQSRecord
from aws_lambda_powertools.utilities.typing import LambdaContext

from video_index.aws.clients import Clients
from video_index.aws.kms import signing_key
from video_index.aws.objects import ObjectStore
from video_index.core.contract import ENV_EXPORT_SIGNING_KEY
from video_index.core.errors import BadInput
from video_index.core.settings import Settings
from video_index.media.exports import Exports

logger = Logger(child=True)


@dataclass
class ExportWorker:
    exports: Exports

    def handle(self, event: dict[str, Any], context: LambdaContext | None) -> dict[str, Any]:
        processor = BatchProcessor(event_type=EventType.SQS, raise_on_entire_batch_failure=False)
        response: dict[str, Any] = process_partial_response(  # type: ignore[assignment]
            event=event, record_handler=self._record, processor=processor, context=context
        )
        return response

    def _record(self, record: SQSRecord) -> None:
        try:
            export_id = str(json.loads(record.body)["export_id"])
        except (ValueError, KeyError, TypeError) as exc:
            reason = f"not an export message ({exc!r}): {record.body[:200]!r}"
            raise BadInput("body", reason) from None
        job = self.exports.run(export_id)
        logger.info(
            "export finished",
            extra={"export_id": export_id, "state": str(job.state), "error": job.error},
        )


def build_export_worker(settings: Settings, clients: Clients) -> ExportWorker:
    def no_queue(_: str) -> None:
        raise BadInput(None, "the export worker does not queue exports")

    objects = ObjectStore(clients.s3, settings.bucket)
    signer = signing_key(settings.export_signing_key, clients.kms, ENV_EXPORT_SIGNING_KEY)
    return ExportWorker(
        Exports(objects, enqueue=no_queue, max_bytes=settings.max_export_bytes, signer=signer)
    )
