"""Markdown-safe text: what came from a document or a user is written into Markdown as text, never as markup."""

from __future__ import annotations

import re

_SPECIAL = re.compile(r"([\\`*_\[\]<>|!#~])")


def md_escape(text: object) -> str:
    """The text on one line with every Markdown and HTML special character backslash-escaped
    (``<script>`` stays visible text, ``[x](javascript:...)`` is no link)."""
    return _SPECIAL.sub(r"\\\1", " ".join(str(text).split()))
