"""Load host-shaped documents (JSONL, JSON, gzip) into the documents collection, upserting by id."""

from __future__ import annotations

import gzip
import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from historian_blueprint.store import Store, get_path


@dataclass
class LoadReport:
    """What a load did: counts per outcome and every rejected record with its place and reason."""

    read: int = 0
    inserted: int = 0
    updated: int = 0
    unchanged: int = 0
    errors: list[str] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return len(self.errors)

    def summary(self) -> str:
        return (
            f"read {self.read}, inserted {self.inserted}, updated {self.updated}, "
            f"unchanged {self.unchanged}, rejected {self.rejected}"
        )


def _open(path: Path) -> Any:
    if path.suffix == ".gz":
        return gzip.open(path, "rt", encoding="utf-8")
    return open(path, encoding="utf-8")


def read_records(path: Path) -> Iterator[tuple[int, Any, str | None]]:
    """Yield (line number, record, parse error) for every record of a JSONL or JSON file."""
    name = path.name.removesuffix(".gz")
    with _open(path) as fh:
        if name.endswith(".json"):
            try:
                data = json.load(fh)
            except json.JSONDecodeError as exc:
                yield exc.lineno, None, f"invalid JSON: {exc.msg}"
                return
            for i, record in enumerate(data if isinstance(data, list) else [data], start=1):
                yield i, record, None
            return
        for lineno, line in enumerate(fh, start=1):
            if not line.strip():
                continue
            try:
                yield lineno, json.loads(line), None
            except json.JSONDecodeError as exc:
                yield lineno, None, f"invalid JSON: {exc.msg} (column {exc.colno})"


def load_corpus(store: Store, paths: Iterable[Path | str]) -> LoadReport:
    """Validate and upsert every record of the given files; bad records are reported, not written."""
    report = LoadReport()
    id_field = store.fields["id"]
    for path in map(Path, paths):
        if not path.is_file():
            report.errors.append(f"{path}: no such file")
            continue
        where = "item" if path.name.removesuffix(".gz").endswith(".json") else "line"
        for lineno, record, error in read_records(path):
            report.read += 1
            problems = [error] if error else store.fields.problems(record)
            if problems:
                report.errors.append(f"{path}:{where} {lineno}: {'; '.join(problems)}")
                continue
            key = {id_field: get_path(record, id_field)}
            existing = store.documents.find_one(key)
            if existing is not None and "_id" not in record:
                existing = {k: v for k, v in existing.items() if k != "_id"}
            if existing == record:
                report.unchanged += 1
                continue
            store.documents.replace_one(key, record, upsert=True)
            if existing is None:
                report.inserted += 1
            else:
                report.updated += 1
    return report
