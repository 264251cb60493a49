"""Annotations: what people decide about footage, the product's second source of truth.

A description, a review status and tags on one segment or on a time range of a
device (docs/annotations.md). Unlike the read model, nothing here can be derived
from video: the annotations table is primary data, which reconcile and rebuild
never read or write.

* :mod:`.model` — an annotation, its target, the rules of a request body, entity tags;
* :mod:`.layout` — the items of the annotations table (one Query per window, history
  beside the current version);
* :mod:`.service` — create, read, replace, delete, list, history, the join with segments;
* :mod:`.transfer` — JSON Lines export and idempotent import;
* :mod:`.identity` — who is asking, from the authorizer;
* :mod:`.shapes`, :mod:`.routes` — the HTTP routes and their shapes.

The table adapter is :mod:`.store` (here, beside the key layout it writes, so the AWS
adapters below do not import this package).
"""
