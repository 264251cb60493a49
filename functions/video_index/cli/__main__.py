"""``python -m video_index.cli``: the same as the ``video-index`` command."""

import sys

from video_index.cli.main import main

sys.exit(main())
