"""Deleting video the right way round (docs/deletion.md): deletion requests and jobs, no
resurrection, undelete, restore from a replica.

The object store is the truth, so deleting video means deleting objects; the read
model follows through the delete events S3 sends, never written by anything here.

* :mod:`.model` — a request, its window, the prefixes that cover it, its job state;
* :mod:`.jobs` — create, look up, withdraw and run a deletion job (resumable);
* :mod:`.enforcement` — objects appearing later inside a recorded window are deleted
  again (ingest, reconcile, restore);
* :mod:`.undelete` and :mod:`.restore` — the ways back;
* :mod:`.routes` (HTTP), :mod:`.worker` (SQS), :mod:`.service` (wiring).

The table adapter is :mod:`video_index.aws.deletions`; the S3 requests are those of
:mod:`video_index.aws.objects`.
"""
