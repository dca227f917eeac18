"""The Settings dialog, generated from the settings schema (config.py's annotations, read by settings_schema.py)."""

from .dialog import SettingsDialog
from .ollama import ProbeFn, plain_error, probe_ollama

__all__ = ["ProbeFn", "SettingsDialog", "plain_error", "probe_ollama"]
