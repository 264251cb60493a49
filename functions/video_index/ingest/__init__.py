"""S3 events → the read model (docs/ingest.md): :mod:`.events` parses messages,
:mod:`.ingestor` applies one event exactly, :mod:`.batches` handles SQS batches,
:mod:`.service` wires it for the handler."""
