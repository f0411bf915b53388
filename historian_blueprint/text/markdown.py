"""Markdown-safe text: what came from a document or a user is written into Markdown as text, never as markup."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_\[\]<>|!#~])")
_MARKER = re.compile(r"\\\[(\d{1,3})\\\](?![:(\[])")  # a citation marker "[3]", never "[3]:" / "[3](" / "[3][": no link


def md_escape(text: object) -> str:
    """The text on one line with every Markdown and HTML special character backslash-escaped
    (``<script>`` stays visible text, ``[x](javascript:...)`` is no link); citation markers ``[3]`` stay as
    they are (alone they are no link)."""
    return _MARKER.sub(r"[\1]", _SPECIAL.sub(r"\\\1", " ".join(str(text).split())))
