"""Restore and deletion at fleet size (docs/bulk.md): the same rules as the single-process
paths, fanned out over units on Step Functions' Distributed Map.

* :mod:`.names` — action names and report prefixes (no heavy imports: infra reads them);
* :mod:`.payloads` — the typed inputs and outputs of the steps;
* :mod:`.restore_units` — restore's plan (units over the replica's S3 Inventory, or
  over its device prefixes) and one unit's work (filter, compare, copy);
* :mod:`.deletion_units` — a deletion over many partitions: one ordinary deletion job
  per device and ≤ 31-day window, each run by its unit with its lease and checkpoint;
* :mod:`.steps` — the bulk Lambda's steps, dispatched on ``action``;
* :mod:`.local` — the same steps run in this process in the order the state machine
  runs them (tests, benchmarks, ``video-index local``).
"""
