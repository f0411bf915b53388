"""Ordered, recorded migrations of Historian's own collections (files in ``migrations/``)."""

from __future__ import annotations

import importlib.util
from dataclasses import dataclass
from datetime import datetime, timezone
from pathlib import Path
from types import ModuleType
from typing import Callable

from historian_blueprint.resources import resource_path
from historian_blueprint.store import Store


@dataclass(frozen=True)
class Migration:
    name: str
    description: str
    apply: Callable[[Store], None]


def _load(path: Path) -> ModuleType:
    spec = importlib.util.spec_from_file_location(f"historian_migration_{path.stem}", path)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def available(directory: Path | None = None) -> list[Migration]:
    """Return every shipped migration in order."""
    directory = directory or resource_path("migrations")
    out = []
    for path in sorted(directory.glob("[0-9][0-9][0-9][0-9]_*.py")):
        module = _load(path)
        doc = (module.__doc__ or "").strip().splitlines()
        out.append(Migration(path.stem, doc[0] if doc else "", module.migrate))
    return out


def applied(store: Store) -> set[str]:
    """Return the names of the migrations recorded as applied."""
    return {d["name"] for d in store.meta.find({"kind": "migration"}, {"name": 1})}


def pending(store: Store, migrations: list[Migration] | None = None) -> list[Migration]:
    done = applied(store)
    return [m for m in (migrations or available()) if m.name not in done]


def schema_version(store: Store) -> int:
    """Return how many migrations are recorded."""
    return len(applied(store))


def apply_pending(store: Store, migrations: list[Migration] | None = None) -> list[Migration]:
    """Apply and record the pending migrations in order; return the ones applied."""
    done = []
    with store.write_lock():
        for migration in pending(store, migrations):
            migration.apply(store)
            store.meta.replace_one(
                {"_id": f"migration:{migration.name}"},
                {
                    "_id": f"migration:{migration.name}",
                    "kind": "migration",
                    "name": migration.name,
                    "description": migration.description,
                    "applied_at": datetime.now(timezone.utc).isoformat(),
                },
                upsert=True,
            )
            done.append(migration)
    return done


def pending_message(names: list[str]) -> str:
    return (
        f"Historian's database has {len(names)} pending migration(s) ({', '.join(names)}); "
        "run `flask historian migrate` (or set HISTORIAN_AUTO_MIGRATE = True)."
    )
