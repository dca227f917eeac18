"""The Settings dialog, generated from the settings schema (config.py's annotations, read by settings_schema.py)."""

from typing import TYPE_CHECKING, Any

from .ollama import ProbeFn, plain_error

if TYPE_CHECKING:
    from .dialog import SettingsDialog


def __getattr__(name: str) -> Any:
    """``SettingsDialog`` on first use: the dialog pulls the embedders (numpy, onnxruntime's wrapper), which the
    window needs only when Settings opens, not before its first paint."""
    if name == "SettingsDialog":
        from .dialog import SettingsDialog

        return SettingsDialog
    raise AttributeError(name)

__all__ = ["ProbeFn", "SettingsDialog", "plain_error"]
