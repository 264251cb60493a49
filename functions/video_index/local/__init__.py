"""``video-index local``: the whole system on one machine (docs/local.md).

* :mod:`.stack` — :class:`~video_index.local.stack.LocalStack`: moto server (S3, SQS,
  CloudWatch, DynamoDB), the resources, the ingest worker and the HTTP API.
* :mod:`.worker` — feeds SQS batches to the ingest handler like Lambda's event source.
* :mod:`.http_api` — serves the API handler, translating HTTP to API Gateway v2 events.
* :mod:`.status` — ``video-index status`` against the local stack or a deployed one.

Importing this package imports no AWS SDK; its modules do.
"""
