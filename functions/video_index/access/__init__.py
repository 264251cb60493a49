"""Authorization of the HTTP API (docs/access.md): the one decision point before any route.

* :mod:`.caller` — the verified caller of the current request, and the scope checks routes
  make once they know a job's or an object's device;
* :mod:`.decision` — the resolver middleware deciding every route by its declared rule.

The rules themselves (roles, scope, the decision) are pure, in :mod:`video_index.core.access`.
"""
