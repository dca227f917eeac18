"""desktop-memory: a private, searchable memory of your own files for LLM chats."""

APP_NAME = "desktop-memory"
__version__ = "0.1.0"
