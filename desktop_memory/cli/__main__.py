"""``python -m desktop_memory.cli``: the same as the ``desktop-memory`` command."""

import sys

from . import main

sys.exit(main())
