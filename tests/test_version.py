"""The version is written once (dptm/__init__.py) and every other place reads it."""
import json
import re
import subprocess
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest

import dptm

ROOT = Path(__file__).resolve().parents[1]


def test_pyproject_reads_the_package_version():
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in project["project"], "a second, static version in pyproject.toml"
    assert "version" in project["project"]["dynamic"]
    assert project["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "dptm.__version__"}


def test_version_is_a_literal_pep440_string():
    # setuptools reads it statically from the source: it must be a plain literal.
    source = (ROOT / "dptm" / "__init__.py").read_text()
    m = re.search(r'^__version__ = "([^"]+)"$', source, flags=re.M)
    assert m and m.group(1) == dptm.__version__
    assert re.fullmatch(r"\d+\.\d+\.\d+((a|b|rc)\d+)?(\.dev\d+)?", dptm.__version__)


def test_installed_metadata_matches():
    try:
        dist = metadata.distribution("dptm")
    except metadata.PackageNotFoundError:
        pytest.skip("dptm is not installed (only on the path)")
    url = json.loads(dist.read_text("direct_url.json") or "{}").get("url", "")
    if Path(url.removeprefix("file://")).resolve() != ROOT:
        pytest.skip("the installed dptm was built from another checkout")
    assert dist.version == dptm.__version__


def test_cli_prints_the_version():
    out = subprocess.run([sys.executable, "-m", "dptm", "--version"], capture_output=True,
                         text=True, timeout=120, cwd=ROOT)
    assert out.returncode == 0, out.stderr
    assert dptm.__version__ in out.stdout + out.stderr


def test_changelog_has_an_unreleased_section():
    text = (ROOT / "CHANGELOG.md").read_text()
    assert "## [Unreleased]" in text
    assert re.search(r"^## \[\d+\.\d+\.\d+\]", text, flags=re.M), "no released version listed"
