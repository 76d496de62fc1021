"""Packaging metadata (issue 17). The full build (sdist -> wheel -> fresh venv, and the
minimum declared versions) runs in .ci/run; these fast checks catch the metadata slips."""
import re
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PYPROJECT = ROOT / "pyproject.toml"

pytestmark = pytest.mark.skipif(not PYPROJECT.exists(), reason="not run from a source checkout")


def _project():
    return tomllib.loads(PYPROJECT.read_text())["project"]


def test_license_is_an_spdx_expression_with_its_file():
    proj = _project()
    assert proj["license"] == "BSD-3-Clause"
    assert proj["license-files"] == ["LICENSE"]
    text = (ROOT / "LICENSE").read_text()
    assert "BSD 3-Clause License" in text and "dptm developers" in text
    build_req = tomllib.loads(PYPROJECT.read_text())["build-system"]["requires"]
    st = [r for r in build_req if r.startswith("setuptools")]
    assert st and int(re.search(r">=(\d+)", st[0]).group(1)) >= 77  # PEP 639 support


def test_sources_are_packaged_and_no_typed_marker_without_annotations():
    # py.typed promises type checkers annotations the public API does not have yet
    assert not (ROOT / "dptm" / "py.typed").exists()
    manifest = (ROOT / "MANIFEST.in").read_text()
    assert "*.pxd" in manifest and "*.pyx" in manifest and "global-exclude *.c" in manifest
    cfg = tomllib.loads(PYPROJECT.read_text())["tool"]["setuptools"]
    assert {"*.pyx", "*.pxd"} <= set(cfg["package-data"]["dptm"])
    assert "py.typed" not in cfg["package-data"]["dptm"]
    assert "*.c" in cfg["exclude-package-data"]["dptm"]
    # every .pxd a kernel cimports exists and is matched by the manifest pattern
    for pyx in (ROOT / "dptm").glob("*.pyx"):
        for mod in re.findall(r"^from (?:dptm)?\.?(_\w+) cimport", pyx.read_text(), flags=re.M):
            assert (ROOT / "dptm" / f"{mod}.pxd").exists(), mod


def test_declared_minimums():
    """scikit-learn 1.5.2 lacks sklearn.utils.validation.validate_data (used by every
    estimator): the minimum is 1.6; CI installs exactly these minimums and smoke-tests."""
    deps = {re.split(r"[<>=!\s]", d, maxsplit=1)[0]: d for d in _project()["dependencies"]}
    assert deps["scikit-learn"] == "scikit-learn>=1.6"
    assert deps["numpy"] == "numpy>=1.26"
    assert deps["scipy"] == "scipy>=1.11"
    assert "randomgen" in deps
    from sklearn.utils import validation
    assert hasattr(validation, "validate_data")
    assert "build>=1.0" in _project()["optional-dependencies"]["test"]
