"""The HTTP machinery every capability's routes share (docs/architecture.md).

* :mod:`.resolver` — :func:`~.resolver.create_app`: a Powertools resolver over a list of
  routers, with the body checks, the error answers and the OpenAPI document, once;
* :mod:`.context` — the request services, each asked for by its type (``service(Queries)``);
* :mod:`.params` — parameters parsed and validated, each failure naming its parameter;
* :mod:`.errors` — the error body, its statuses and how each is documented.
* :mod:`.access` — who may call each route, decided once before any route runs
  (docs/access.md); :mod:`.caller` — the verified caller a route reads; :mod:`.me` —
  ``GET /me``, the caller's roles, actions and scope (the app includes its router).

Capability packages (query, annotations, deletion, media, viewer) import this package and
never each other's routes; :mod:`video_index.app` joins them. This package imports only
:mod:`video_index.core`.
"""
