"""desktop-memory: a private, searchable memory of your own files for LLM chats."""

import os

# onnxruntime (1.2x+ wheels) ships Microsoft 1DS telemetry on every OS: it writes a device id and an event store to
# ~/.cache/Microsoft/DeveloperTools/.onnxruntime/ and uploads to mobile.events.data.microsoft.com (found by the
# privacy tests' strace, docs/PRIVACY.md). Off for this process and every child (the PDF worker), before any
# onnxruntime import; set here because every entry point imports this package first.
os.environ["ORT_DISABLE_TELEMETRY"] = "1"

APP_NAME = "desktop-memory"
__version__ = "0.1.0"
