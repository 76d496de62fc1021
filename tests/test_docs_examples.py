"""Every ```python block of README.md and docs/**/*.md runs as shown.

Each block is its own test (id ``file:line``), run in a scratch directory with a fresh
namespace. An HTML comment on the line before a block changes how it runs:

- ``<!-- docs-test: continue -->``: in the namespace the previous block of the page left;
- ``<!-- docs-test: needs MODULE -->``: skipped when the optional extra is not installed;
- ``<!-- docs-test: needs-data PATH ... -->``: skipped when a ``PATH`` is not under the shared
  data folder (``../shared/data`` or ``$DPTM_DATA``);
- ``<!-- docs-test: skip REASON -->``: never run (the reason is required).

Beyond running, a private example must give a guarantee that protects something: every
privacy report it leaves (of a fitted estimator, a ``Release`` or a report itself) must be
unseeded and at most epsilon 10 at its own delta, and every ``PrivacyWarning`` (seeded,
vacuous, not hardened) and dptm's own ``FutureWarning`` are errors while it runs.
"""
import contextlib
import io
import math
import os
import re
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MAX_EPSILON = 10.0
_FENCE = re.compile(r"^```python\s*$")
_MARK = re.compile(r"^<!--\s*docs-test:\s*(\S+)\s*(.*?)\s*-->\s*$")
_KINDS = {"continue", "needs", "needs-data", "skip"}


def _pages():
    pages = [ROOT / "README.md"]
    docs = ROOT / "docs"
    if docs.is_dir():
        pages += sorted(p for p in docs.rglob("*.md") if "_build" not in p.parts)
    return pages


def _blocks(page):
    """(line, code, marks) of each python block of ``page``; marks maps kind -> argument."""
    lines = page.read_text(encoding="utf-8").splitlines()
    out, i = [], 0
    while i < len(lines):
        if _FENCE.match(lines[i]):
            marks, j = {}, i - 1
            while j >= 0 and _MARK.match(lines[j]):
                kind, arg = _MARK.match(lines[j]).groups()
                if kind not in _KINDS:
                    raise ValueError(f"{page}:{j + 1}: unknown docs-test mark {kind!r}")
                marks[kind] = arg
                j -= 1
            start, i = i + 1, i + 1
            while i < len(lines) and lines[i].strip() != "```":
                i += 1
            out.append((start, "\n".join(lines[start:i]) + "\n", marks))
        i += 1
    return out


BLOCKS = [(page, line, code, marks, k)
          for page in _pages() for k, (line, code, marks) in enumerate(_blocks(page))]
_IDS = [f"{page.relative_to(ROOT)}:{line}" for page, line, _, _, _ in BLOCKS]
_NAMESPACES = {}
_BY_PAGE = {}
for _block in BLOCKS:
    _BY_PAGE.setdefault(_block[0], []).append(_block[:4])


def _data_dir():
    env = os.environ.get("DPTM_DATA")
    return Path(env) if env else ROOT.parent / "shared" / "data"


def _reports(namespace):
    from dptm.accounting import PrivacyReport

    for name, value in list(namespace.items()):
        if name.startswith("__"):
            continue
        if isinstance(value, PrivacyReport):
            yield name, value
        report = getattr(value, "privacy_", None) if not isinstance(value, type) else None
        if report is None and type(value).__name__ == "Release":
            report = getattr(value, "privacy", None)
        if isinstance(report, PrivacyReport):
            yield name, report


def _run(page, k, code, marks, tmp_path):
    import dptm.exceptions as exc

    if "continue" in marks:
        if k == 0:
            pytest.fail(f"{page}: the first block of a page cannot continue another")
        if (page, k - 1) not in _NAMESPACES:  # run alone (e.g. with -k): run the chain first
            _, _, prev_code, prev_marks = _BY_PAGE[page][k - 1]
            _run(page, k - 1, prev_code, prev_marks, tmp_path)
        namespace = dict(_NAMESPACES[page, k - 1])
    else:
        namespace = {"__name__": "__docs_example__"}
    with warnings.catch_warnings():
        # every privacy caveat (seeded, vacuous, not hardened) and every deprecation of
        # dptm's own is an error in an example
        warnings.simplefilter("error", exc.PrivacyWarning)
        warnings.filterwarnings("error", category=FutureWarning, module=r"(dptm|__docs_example__)")
        with contextlib.redirect_stdout(io.StringIO()):
            exec(compile(code, f"{page.name}:block{k}", "exec"), namespace)
    _NAMESPACES[page, k] = namespace
    return namespace


@pytest.mark.parametrize("page, line, code, marks, k", BLOCKS, ids=_IDS)
def test_example_runs_and_protects(page, line, code, marks, k, tmp_path, monkeypatch):
    if "skip" in marks:
        assert marks["skip"], f"{page}:{line}: a skipped block must say why"
        pytest.skip(marks["skip"])
    if "needs" in marks:
        for module in marks["needs"].split():
            pytest.importorskip(module)
    if "needs-data" in marks:
        for name in marks["needs-data"].split():
            path = _data_dir() / name
            if not path.exists():
                pytest.skip(f"needs the real corpus {path} (absent)")
        monkeypatch.setenv("DPTM_DATA", str(_data_dir()))
    monkeypatch.chdir(tmp_path)
    namespace = _run(page, k, code, marks, tmp_path)
    for name, report in _reports(namespace):
        assert not report.seeded, f"{name}: a private example must not use a seed"
        eps = report.epsilon()
        assert math.isfinite(eps) and eps <= MAX_EPSILON, (
            f"{page.name}:{line}: {name} publishes epsilon {eps:.4g} > {MAX_EPSILON}")


def test_marks_are_read():
    # A typo in a mark would silently run (or skip) a block: the parser must see them.
    sample = ROOT / "docs" / "guide" / "distributed.md"
    if not sample.exists():
        pytest.skip("docs/guide/distributed.md absent")
    assert any(marks for _, _, marks in _blocks(sample))


def test_every_page_is_collected():
    # The README and the user guide hold examples; an empty collection would pass vacuously.
    pages = {page.relative_to(ROOT).as_posix() for page, *_ in BLOCKS}
    assert "README.md" in pages
    assert any(p.startswith("docs/guide/") for p in pages)


def test_mutant_table_is_current():
    # docs/mutants.md is generated from tools/mutation/mutants.py, never edited by hand.
    import subprocess
    import sys

    out = subprocess.run([sys.executable, str(ROOT / "tools" / "mutation" / "table.py"),
                          "--check"], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stdout + out.stderr


_HISTORY = re.compile(r"\b[Ss]essions? \d+|\breview (round|session)s?\b|\bissue #?\d+", re.I)


def test_user_pages_hold_no_development_history():
    # Development history (which session measured what) lives in docs/records/ only.
    pages = [ROOT / "README.md", ROOT / "docs" / "design.md"]
    for sub in ("guide", "models", "benchmarks"):
        pages += sorted((ROOT / "docs" / sub).glob("*.md"))
    found = [f"{p.relative_to(ROOT)}:{i}: {line.strip()[:80]}"
             for p in pages if p.exists()
             for i, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
             if _HISTORY.search(line)]
    assert not found, "development history in user pages:\n" + "\n".join(found)


def test_readme_is_short():
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 300, f"README.md has {lines} lines; move details into docs/"
