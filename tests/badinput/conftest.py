"""Qt runs offscreen for the few window tests here; config/data dirs are isolated by tests/conftest.py."""

from __future__ import annotations

import os

os.environ["QT_QPA_PLATFORM"] = "offscreen"
