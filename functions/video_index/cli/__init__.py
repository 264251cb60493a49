"""The ``video-index`` command line (docs/cli.md): one module per command family.

* :mod:`.main` — the parser and ``key check`` / ``key make``;
* :mod:`.upload` — ``upload``; :mod:`.local` — ``local``; :mod:`.status` — ``status``;
* :mod:`.ops` — ``reconcile`` and ``rebuild``;
* :mod:`.exits` — exit codes and the one mapping of errors to them;
* :mod:`.args` — argument types shared by the commands.

Importing the package reads no AWS configuration and imports no AWS SDK.
"""
