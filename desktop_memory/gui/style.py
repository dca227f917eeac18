"""Look and feel: light/dark palettes, a palette-derived stylesheet, the app icon.

Why palette-derived: every colour used by our own painting (badges, highlights, banners) is computed from the
active QPalette, so the app follows the system theme, and an explicit Light/Dark choice only has to swap the
palette. "system" keeps the platform's native style; an explicit choice uses Fusion with our palette because
native styles on some platforms ignore a custom palette.
"""

from __future__ import annotations

import logging
from pathlib import Path

from PySide6.QtCore import Qt
from PySide6.QtGui import QColor, QFont, QGuiApplication, QIcon, QPalette, QStyleHints
from PySide6.QtWidgets import QApplication, QStyleFactory

RESOURCES = Path(__file__).resolve().parent.parent / "resources"

class _Native:
    """The platform's own style and palette, remembered before the first theme change so "system" restores them."""

    style: str | None = None
    palette: QPalette | None = None


_native = _Native()


def resource_path(name: str) -> Path:
    return RESOURCES / name


def app_icon() -> QIcon:
    icon = QIcon(str(resource_path("icon.svg")))
    return icon if not icon.isNull() else QIcon()


def is_dark(palette: QPalette | None = None) -> bool:
    pal = palette or QApplication.palette()
    return pal.color(QPalette.ColorRole.Window).lightness() < 128


def _mix(a: QColor, b: QColor, t: float) -> QColor:
    """Linear blend: t=0 → a, t=1 → b."""
    return QColor(
        round(a.red() + (b.red() - a.red()) * t),
        round(a.green() + (b.green() - a.green()) * t),
        round(a.blue() + (b.blue() - a.blue()) * t),
    )


def colors(palette: QPalette | None = None) -> dict[str, QColor]:
    """Named colours for our own painting, derived from the palette so both themes look right."""
    pal = palette or QApplication.palette()
    dark = is_dark(pal)
    base = pal.color(QPalette.ColorRole.Base)
    window = pal.color(QPalette.ColorRole.Window)
    text = pal.color(QPalette.ColorRole.WindowText)
    accent = pal.color(QPalette.ColorRole.Highlight)
    if accent.lightness() > 200 or accent.saturation() < 40:
        accent = QColor("#4c7cf0")
    def tint(hex_: str, amount: float) -> QColor:
        return _mix(base, QColor(hex_), amount)
    return {
        "text": text,
        "muted": _mix(text, window, 0.42),
        "accent": accent if not dark else _mix(accent, QColor("white"), 0.25),
        "border": _mix(text, window, 0.78),
        "panel_bg": _mix(window, base, 0.5),
        "term_bg": QColor("#6b5a12") if dark else QColor("#fff1a8"),
        "badge_kw": tint("#3aa675", 0.22 if dark else 0.16),
        "badge_sem": tint("#8a5cf5", 0.25 if dark else 0.14),
        "badge_text": _mix(text, base, 0.1),
        "info_bg": tint("#4c7cf0", 0.18 if dark else 0.10),
        "info_border": tint("#4c7cf0", 0.45),
        "ok_bg": tint("#2f9e5b", 0.18 if dark else 0.10),
        "ok_border": tint("#2f9e5b", 0.45),
        "ok_text": QColor("#5fd08b") if dark else QColor("#1e7a43"),
        "warn_bg": tint("#e0a100", 0.20 if dark else 0.14),
        "warn_border": tint("#e0a100", 0.55),
        "error_bg": tint("#e5484d", 0.20 if dark else 0.10),
        "error_border": tint("#e5484d", 0.50),
        "error_text": QColor("#ff8589") if dark else QColor("#c62828"),
        "drop_bg": tint("#4c7cf0", 0.12),
        "drop_overlay": QColor(accent.red(), accent.green(), accent.blue(), 40),
    }


def _rgba(c: QColor) -> str:
    return f"rgba({c.red()},{c.green()},{c.blue()},{c.alpha()})"


def stylesheet(palette: QPalette | None = None) -> str:
    sheet = resource_path("style.qss").read_text(encoding="utf-8")
    pt = QApplication.font().pointSizeF()
    if pt <= 0:
        pt = 10.0
    tokens = {name: _rgba(c) for name, c in colors(palette).items()}
    tokens["big_pt"] = f"{pt * 1.45:.1f}pt"
    tokens["search_pt"] = f"{pt * 1.2:.1f}pt"
    # longest names first so "@ok_bg" is not clobbered by a shorter token
    for name in sorted(tokens, key=len, reverse=True):
        sheet = sheet.replace("@" + name, tokens[name])
    return sheet


def light_palette() -> QPalette:
    p = QPalette()
    c = QColor
    roles = QPalette.ColorRole
    p.setColor(roles.Window, c("#f3f3f5"))
    p.setColor(roles.WindowText, c("#1d1d1f"))
    p.setColor(roles.Base, c("#ffffff"))
    p.setColor(roles.AlternateBase, c("#f6f7f9"))
    p.setColor(roles.ToolTipBase, c("#ffffff"))
    p.setColor(roles.ToolTipText, c("#1d1d1f"))
    p.setColor(roles.PlaceholderText, c("#8a8a8e"))
    p.setColor(roles.Text, c("#1d1d1f"))
    p.setColor(roles.Button, c("#fbfbfc"))
    p.setColor(roles.ButtonText, c("#1d1d1f"))
    p.setColor(roles.BrightText, c("#ff3b30"))
    p.setColor(roles.Highlight, c("#3d6fe0"))
    p.setColor(roles.HighlightedText, c("#ffffff"))
    p.setColor(roles.Link, c("#2f62d6"))
    p.setColor(roles.Light, c("#ffffff"))
    p.setColor(roles.Midlight, c("#e9e9ec"))
    p.setColor(roles.Mid, c("#c8c8cc"))
    p.setColor(roles.Dark, c("#a0a0a6"))
    p.setColor(roles.Shadow, c("#5a5a60"))
    for role in (roles.Text, roles.WindowText, roles.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, c("#a0a0a6"))
    return p


def dark_palette() -> QPalette:
    p = QPalette()
    c = QColor
    roles = QPalette.ColorRole
    p.setColor(roles.Window, c("#202124"))
    p.setColor(roles.WindowText, c("#e8e8ea"))
    p.setColor(roles.Base, c("#17181a"))
    p.setColor(roles.AlternateBase, c("#222326"))
    p.setColor(roles.ToolTipBase, c("#2b2c30"))
    p.setColor(roles.ToolTipText, c("#e8e8ea"))
    p.setColor(roles.PlaceholderText, c("#8d8e93"))
    p.setColor(roles.Text, c("#e8e8ea"))
    p.setColor(roles.Button, c("#2b2c30"))
    p.setColor(roles.ButtonText, c("#e8e8ea"))
    p.setColor(roles.BrightText, c("#ff6961"))
    p.setColor(roles.Highlight, c("#4a78e6"))
    p.setColor(roles.HighlightedText, c("#ffffff"))
    p.setColor(roles.Link, c("#8ab0ff"))
    p.setColor(roles.Light, c("#3a3b40"))
    p.setColor(roles.Midlight, c("#303136"))
    p.setColor(roles.Mid, c("#45464c"))
    p.setColor(roles.Dark, c("#111214"))
    p.setColor(roles.Shadow, c("#000000"))
    for role in (roles.Text, roles.WindowText, roles.ButtonText):
        p.setColor(QPalette.ColorGroup.Disabled, role, c("#6b6c72"))
    return p


def apply_theme(app: QApplication, theme: str = "system") -> None:
    """Switch palette + stylesheet. Safe to call again at runtime (View ▸ Appearance)."""
    if _native.style is None:
        _native.style = app.style().name()
        _native.palette = QPalette(app.palette())
    hints = QGuiApplication.styleHints()
    if theme == "dark":
        app.setStyle(QStyleFactory.create("Fusion"))
        _set_scheme(hints, Qt.ColorScheme.Dark)
        app.setPalette(dark_palette())
    elif theme == "light":
        app.setStyle(QStyleFactory.create("Fusion"))
        _set_scheme(hints, Qt.ColorScheme.Light)
        app.setPalette(light_palette())
    else:
        _set_scheme(hints, Qt.ColorScheme.Unknown)
        if _native.style and app.style().name().lower() != _native.style.lower():
            app.setStyle(QStyleFactory.create(_native.style))
        # Fusion on a platform without a theme gives a flat grey palette; our light palette is nicer and
        # equivalent. When the platform reports a dark scheme we follow it.
        if _native.style and _native.style.lower() == "fusion":
            dark = hints.colorScheme() == Qt.ColorScheme.Dark
            app.setPalette(dark_palette() if dark else light_palette())
        elif _native.palette is not None:
            app.setPalette(_native.palette)
    app.setStyleSheet(stylesheet(app.palette()))
    install_emoji_fallback(app)


# Colour emoji fonts per platform. Docs are full of them (✅, 🌐, 🚀); without one installed they draw as boxes.
# Qt already falls back to an installed one per glyph (fontconfig on Linux); do NOT register them as family
# substitutes: an emoji font has digit, '#', '*' and space glyphs (keycaps) and would then draw ordinary text.
EMOJI_FAMILIES = ("Noto Color Emoji", "Apple Color Emoji", "Segoe UI Emoji", "Twemoji", "EmojiOne Color", "Symbola")
_emoji_checked: list[bool] = []  # logged once per process


def install_emoji_fallback(app: QApplication) -> list[str]:
    """The emoji families installed; logs once, with the fix, when there is none (emoji would show as boxes)."""
    from PySide6.QtGui import QFontDatabase

    found = [f for f in EMOJI_FAMILIES if f in set(QFontDatabase.families())]
    if not found and not _emoji_checked:
        logging.getLogger(__name__).info(
            "no colour emoji font installed: emoji in documents show as boxes (Debian/Ubuntu: apt install "
            "fonts-noto-color-emoji)")
    _emoji_checked.append(True)
    return found


def _set_scheme(hints: QStyleHints, scheme: Qt.ColorScheme) -> None:
    try:
        hints.setColorScheme(scheme)
    except AttributeError:  # Qt < 6.8
        pass


def monospace_font() -> QFont:
    f = QFont("monospace")
    f.setStyleHint(QFont.StyleHint.Monospace)
    return f
