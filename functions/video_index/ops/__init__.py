"""Reconcile and rebuild (docs/operations.md): :mod:`.reconcile`, :mod:`.rebuild`,
:mod:`.fingerprints`, :mod:`.inventory`, the Step Functions :mod:`.steps` and their
:mod:`.payloads`, :mod:`.report`, :mod:`.status`; :mod:`.service` wires them."""
