"""The HTTP API (docs/api.md): :mod:`.app` (the resolver and its error answers),
:mod:`.routes`, :mod:`.params`, :mod:`.models`, and the query layer (:mod:`.queries`,
:mod:`.entries`, :mod:`.calendar`, :mod:`.playlist`); :mod:`.service` wires it."""
