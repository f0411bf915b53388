"""Locate the files Historian ships beside its code (templates, static, migrations, profiles), and a file's digest
(what a search-index generation and the shipped reader model are checked by), and an uncompressed ``.npz``'s arrays
memory-mapped."""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any

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


def mapped_npz(path: Path) -> dict[str, Any]:
    """The arrays of an ``.npz`` written without compression (``np.savez``), each memory-mapped read-only where it is
    stored whole (shared by every process that maps the file; nothing read until used), else read."""
    import zipfile

    import numpy as np

    arrays: dict[str, np.ndarray] = {}
    with zipfile.ZipFile(path) as archive, open(path, "rb") as fh:
        for info in archive.infolist():
            name = info.filename[:-4] if info.filename.endswith(".npy") else info.filename
            if info.compress_type != zipfile.ZIP_STORED:
                with archive.open(info) as member:
                    arrays[name] = np.lib.format.read_array(member, allow_pickle=False)
                continue
            fh.seek(info.header_offset)
            local = fh.read(30)
            start = info.header_offset + 30 + int.from_bytes(local[26:28], "little") \
                + int.from_bytes(local[28:30], "little")
            fh.seek(start)
            version = np.lib.format.read_magic(fh)
            read_header = np.lib.format.read_array_header_1_0 if version == (1, 0) \
                else np.lib.format.read_array_header_2_0
            shape, fortran, dtype = read_header(fh)
            if dtype.hasobject:
                raise ValueError(f"{path.name}: {name} holds objects")
            count, at = int(np.prod(shape)), fh.tell()
            if count and at % dtype.alignment:  # written unaligned (np.savez): read, never searched unaligned
                fh.seek(at)
                arrays[name] = np.fromfile(fh, dtype=dtype, count=count).reshape(shape, order="F" if fortran else "C")
                continue
            arrays[name] = (np.memmap(path, dtype=dtype, mode="r", offset=at, shape=shape,
                                      order="F" if fortran else "C") if count
                            else np.zeros(shape, dtype=dtype))
    return arrays


NPY_ALIGN = 64  # the .npy format pads its header so that data starts at a multiple of 64 bytes
_PAD_FIELD = 0xD935  # a zip "extra" field of padding (as zipalign writes), ignored by every reader
_PIECE = 1 << 24  # bytes of an array written at a time


def save_aligned_npz(path: Path, **arrays: Any) -> None:
    """Write arrays as an uncompressed ``.npz`` (``np.load`` reads it) whose members each start at a multiple of 64
    bytes, so that ``mapped_npz`` maps them aligned: an unaligned array is copied whole by every search of it. Each
    array is streamed into the archive in pieces (never copied whole: a million chunks' readings are 0.9 GB)."""
    import io
    import struct
    import zipfile

    import numpy as np

    with zipfile.ZipFile(path, "w", zipfile.ZIP_STORED, allowZip64=True) as archive:
        for name, value in arrays.items():
            array = np.asarray(value)
            if not array.flags.c_contiguous:  # (not ascontiguousarray: it makes a 0-d array 1-d)
                array = np.ascontiguousarray(array)
            if array.dtype.hasobject:
                raise ValueError(f"{name}: an array of Python objects cannot be mapped")
            head = io.BytesIO()
            np.lib.format.write_array_header_1_0(head, np.lib.format.header_data_from_array_1_0(array))
            header = head.getvalue()
            info = zipfile.ZipInfo(f"{name}.npy", date_time=(1980, 1, 1, 0, 0, 0))
            info.compress_type = zipfile.ZIP_STORED
            info.file_size = len(header) + array.nbytes
            # zipfile decides by the size set before open(): past this it adds a ZIP64 field of 20 bytes before ours
            zip64 = info.file_size * 1.05 > zipfile.ZIP64_LIMIT
            start = archive.fp.tell() + 30 + len(info.filename.encode()) + 4 + (20 if zip64 else 0)
            info.extra = struct.pack("<HH", _PAD_FIELD, -start % NPY_ALIGN) + b"\0" * (-start % NPY_ALIGN)
            data = array.reshape(-1).view(np.uint8)
            with archive.open(info, "w", force_zip64=zip64) as member:
                member.write(header)
                for first in range(0, len(data), _PIECE):
                    member.write(data[first:first + _PIECE])
