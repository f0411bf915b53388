"""Markdown-safe text: what came from a document or a user is written into Markdown as text, never as markup."""

from __future__ import annotations

import re
import unicodedata
from typing import Any

_SPECIAL = re.compile(r"([\\`*_\[\]<>|!#~])")
_MARKER = re.compile(r"\\\[(\d{1,3})\\\](?![:(\[])")  # a citation marker "[3]", never "[3]:" / "[3](" / "[3][": no link
# What the escapes above leave that a renderer (or a spreadsheet) would still read as more than text: a line or a list
# item opening with a list, heading or setext marker or a formula opener (= + - @, "1." / "1)"), and an entity
# ("&amp;").
_OPENER = re.compile(r"^(?=[=+\-@])|^([0-9]{1,9})(?=[.)])")
_ENTITY = re.compile(r"&(?=#?[0-9A-Za-z]+;)")


def one_line(value: Any) -> str:
    """The text on one line: control characters dropped, every run of whitespace (newlines, tabs, CR, U+2028) one
    space, none at either end. What every export writes of a field, so that no value can start a line of its own."""
    text = "".join(ch for ch in str(value) if ch.isspace() or unicodedata.category(ch) != "Cc")
    return " ".join(text.split())


def md_escape(text: object) -> str:
    """The text on one line as Markdown text: every Markdown and HTML special character backslash-escaped
    (``<script>`` stays visible text, ``[x](javascript:...)`` is no link), control characters dropped, an entity's
    ``&`` and an opening marker escaped ("\\- 1", "1893\\. The panic"): a renderer shows the text and nothing else, and
    no line it starts opens with = + - @. Citation markers ``[3]`` stay as they are (alone they are no link)."""
    escaped = _ENTITY.sub(r"\\&", _MARKER.sub(r"[\1]", _SPECIAL.sub(r"\\\1", one_line(text))))
    return _OPENER.sub(lambda m: (m.group(1) or "") + "\\", escaped, count=1)
