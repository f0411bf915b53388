"""Locate the files Historian ships beside its code (templates, static, migrations, profiles), and a file's digest
(what a search-index generation and the shipped reader model are checked by)."""

from __future__ import annotations

import hashlib
from pathlib import Path

PACKAGE_DIR = Path(__file__).resolve().parent
# In a checkout templates/, static/ and migrations/ sit at the top of the repository; the wheel
# carries them inside the package.
_TOP_LEVEL = ("templates", "static", "migrations")


def resource_path(*parts: str) -> Path:
    """Return the path of a shipped resource, installed or in a checkout."""
    inside = PACKAGE_DIR.joinpath(*parts)
    if inside.exists() or parts[0] not in _TOP_LEVEL:
        return inside
    return PACKAGE_DIR.parent.joinpath(*parts)


def file_digest(path: Path) -> str:
    """The SHA-256 of a file, read in 1 MiB blocks."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for block in iter(lambda: fh.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()
