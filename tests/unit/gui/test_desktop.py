"""Opening a file in another program (gui/desktop): "open with" commands fill placeholders without a shell."""

from __future__ import annotations


def test_open_with_commands_fill_placeholders_without_a_shell():
    from desktop_memory.gui.desktop import command_args

    assert command_args("code --goto {path}:{line}", "/a b/c.md", 12) == ["code", "--goto", "/a b/c.md:12"]
    assert command_args("okular --page {page} {path}", "/x.pdf", None, 7) == ["okular", "--page", "7", "/x.pdf"]
    assert command_args("gedit", "/x; rm -rf ~") == ["gedit", "/x; rm -rf ~"]  # the path is one argument
    assert command_args('bad "quote', "/x") is None and command_args("", "/x") is None

