"""The package's layers: every import (at module level or inside a function) points down or sideways, never
up, and no two modules import each other, however indirectly (docs/architecture.md draws the layers)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

from tests.conftest import REPO

PACKAGE = REPO / "historian_blueprint"
LAB = REPO / "historian_lab"  # benchmarks, evaluation, fitting: they import the product, never the reverse

# Bottom first. A module may import its own layer and the layers below it.
LAYERS: list[tuple[str, ...]] = [
    # no project imports beyond the layer
    ("text", "schema", "resources", "locking", "embedded", "serving", "limits", "redaction"),
    ("config",),
    ("settings",),
    ("store", "migrate", "corpus", "llm", "history"),
    ("services",),
    ("index",),
    ("verify",),
    ("questions",),                            # what a question asks, read once (issue 40)
    ("ask.roles",),                            # the ask wing: its roles (one interface, two engines)
    ("ask", "mapping", "present"),             # the ask graph, the map, how results leave
    ("web", "cli"),
    ("",),                                     # historian_blueprint/__init__.py: the extension
    ("demo",),                                 # the demo host app and the console script
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(REPO).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in PACKAGE.rglob("*.py")}


def imports_of(path: Path, known: set[str]) -> set[str]:
    """The project modules a file imports, wherever the import stands (``from pkg import sub`` names sub)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.startswith("historian_blueprint")}
        elif isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("historian_blueprint"):
            for alias in node.names:
                sub = f"{node.module}.{alias.name}"
                out.add(sub if sub in known else node.module)
    return out


def layer_of(module: str) -> int:
    inner = module.removeprefix("historian_blueprint").removeprefix(".")
    for n, names in enumerate(LAYERS):
        if inner == "" and names == ("",):
            return n
        if inner and any(name and (inner == name or inner.startswith(name + ".")) for name in names):
            return n
    raise AssertionError(f"{module} is on no layer: add it to LAYERS (and to docs/architecture.md)")


def graph() -> dict[str, set[str]]:
    found = modules()
    return {name: imports_of(path, set(found)) - {name} for name, path in found.items()}


def test_every_module_is_on_a_layer():
    for name in modules():
        layer_of(name)


def test_no_import_points_up():
    upward = [
        f"{mod} (layer {layer_of(mod)}) imports {dep} (layer {layer_of(dep)})"
        for mod, deps in graph().items() for dep in deps if layer_of(dep) > layer_of(mod)
    ]
    assert not upward, "\n".join(upward)


def test_no_import_cycle():
    edges = graph()
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    cycles: list[list[str]] = []

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(edges.get(node, ())):
            if state.get(dep) == 1:
                cycles.append(path[path.index(dep):] + [dep])
            elif dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for start in sorted(edges):
        if start not in state:
            visit(start, [start])
    assert not cycles, "\n".join(" -> ".join(c) for c in cycles)


def test_the_index_is_reached_through_its_front_door():
    behind = [
        f"{mod} imports {dep}" for mod, deps in graph().items() if not mod.startswith("historian_blueprint.index")
        for dep in deps if dep.startswith("historian_blueprint.index.") and dep != "historian_blueprint.index.service"
    ]
    assert not behind, "\n".join(behind)


@pytest.mark.parametrize("name", ["text", "schema"])
def test_the_bottom_layer_imports_nothing_above_it(name):
    for mod, deps in graph().items():
        if layer_of(mod) == 0 and mod.startswith(f"historian_blueprint.{name}"):
            assert all(layer_of(d) == 0 for d in deps), (mod, deps)


def _imported_roots(path: Path) -> set[str]:
    out = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module.split(".")[0])
    return out


def test_nothing_of_the_lab_is_imported_by_the_product():
    """The lab (historian_lab) measures the product from outside: no product module imports it, anywhere in a
    file; its commands reach ``historian`` by the entry point the product reads (cli.COMMAND_PLUGINS)."""
    assert LAB.is_dir() and any(LAB.rglob("*.py"))
    importing = sorted(name for name, path in modules().items() if "historian_lab" in _imported_roots(path))
    assert not importing, importing
    assert not any((PACKAGE / old).exists() for old in ("bench", "evaluation", "checker", "cli_bench.py"))


def test_the_lab_commands_join_historian_as_a_plugin_when_the_command_line_asks():
    import click

    from importlib.metadata import entry_points

    from historian_blueprint.cli import COMMAND_PLUGINS, build_cli

    assert [p.value for p in entry_points(group=COMMAND_PLUGINS)] == ["historian_lab.cli:register"]
    group = build_cli()
    assert "bench" not in group.commands  # not loaded by building the group (an app registering Historian)
    listed = group.list_commands(click.Context(group))
    assert {"bench", "eval", "train-checker", "ask", "reindex"} <= set(listed)


def test_registering_historian_loads_neither_the_graph_engine_nor_the_lab(tmp_path):
    """A host app (and each of its web workers) that registers Historian pays for neither langgraph nor the lab at
    start-up: the graphs are imported on first use, the lab's commands when the command line asks for them; building
    a run's engine imports no graph either."""
    import subprocess
    import sys

    code = ("import sys; from flask import Flask; from historian_blueprint import Historian; "
            f"app = Flask('host', instance_path={str(tmp_path)!r}); "
            "app.config.update(SECRET_KEY='t', HISTORIAN_LOGIN_REQUIRED=False); Historian(app); "
            "print(sorted(m for m in ('langgraph', 'historian_lab') if m in sys.modules)); "
            "from historian_blueprint import get_services; ctx = app.app_context(); ctx.push(); "
            "get_services().engine(); "  # a run's engine is built without its graph
            "print(sorted(m for m in ('langgraph', 'historian_lab') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert out.returncode == 0, out.stderr[-2000:]
    assert out.stdout.strip().splitlines()[-2:] == ["[]", "[]"], out.stdout


def test_the_checker_sees_imports_inside_functions(tmp_path):
    source = tmp_path / "m.py"
    source.write_text("def f():\n    from historian_blueprint.web import research\n", encoding="utf-8")
    assert imports_of(source, {"historian_blueprint.web.research"}) == {"historian_blueprint.web.research"}


def test_modules_stay_readable_in_one_sitting():
    files = {**modules(), **{str(p.relative_to(REPO)): p for p in LAB.rglob("*.py")}}
    long = {name: n for name, path in files.items() if (n := len(path.read_text(encoding="utf-8").splitlines())) > 400}
    assert not long, long
    verify = PACKAGE / "verify"
    long_functions = [
        f"{path.name}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in verify.rglob("*.py") for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 60
    ]
    assert not long_functions, long_functions
    too_long = [
        f"{path.relative_to(REPO)}:{node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in [*PACKAGE.rglob("*.py"), *LAB.rglob("*.py")]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.end_lineno - node.lineno + 1 > 80
    ]
    assert not too_long, too_long  # outside verify/ (60 there): no function over 80 lines, product or lab


_CONFIG_READ = re.compile(r"""config(?:\[|\.get\()\s*["']HISTORIAN_""")


def test_settings_are_read_only_through_the_one_definition():
    """No module but config.py reads a ``HISTORIAN_*`` key from a Flask config: the rest ask ``get_settings()``."""
    readers = sorted(name for name, path in modules().items()
                     if name != "historian_blueprint.config" and _CONFIG_READ.search(path.read_text(encoding="utf-8")))
    assert not readers, f"read the settings with get_settings(), not app.config: {readers}"


def test_the_settings_have_one_definition():
    """One class defines the settings; the views in settings.py take every default from it."""
    from dataclasses import MISSING, fields

    from historian_blueprint import settings
    from historian_blueprint.config import Settings

    defined = [name for name, path in modules().items()
               if re.search(r"^class \w+\(BaseSettings\)|^DEFAULTS\b", path.read_text(encoding="utf-8"), re.M)]
    assert defined == ["historian_blueprint.config"]
    for view in (settings.Caps, settings.RunSettings, settings.MapSettings, settings.RetrievalSettings,
                 settings.IndexSettings, settings.LLMSettings):
        for f in fields(view):
            if "key" in f.metadata:
                default = f.default if f.default is not MISSING else f.default_factory()
                assert default == Settings.model_fields[f.metadata["key"].lower()].default, (view, f.name)


def test_pages_are_module_level_views_and_the_templates_helpers_live_in_one_module():
    """A page module names its views, top-level functions, in its ROUTES (the flaskr style; build_blueprint adds
    them): no view is a closure; template filters and globals are added by web/filters.py alone, error handlers by
    web/__init__.py."""
    from historian_blueprint import web

    for page in web.PAGES:
        assert page.ROUTES and all(callable(view) and "." not in view.__qualname__ for _, view, _ in page.ROUTES), page
        tree = ast.parse(Path(page.__file__).read_text(encoding="utf-8"))
        assert not any(isinstance(n, ast.FunctionDef) and n.name == "register" for n in tree.body), page.__name__
    helpers = sorted(name for name, path in modules().items()
                     if re.search(r"app_template_(filter|global)", path.read_text(encoding="utf-8")))
    assert helpers == ["historian_blueprint.web.filters"], helpers