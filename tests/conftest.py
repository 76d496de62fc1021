"""Shared fixtures: the real corpora of ../shared/data (never copied into the repository).

Each fixture loads its corpus once per session and skips, with the path it looked at, when
the data is absent. Point ``DPTM_DATA`` at the shared data folder to use another copy.
"""
import os
from pathlib import Path

import pytest

from dptm import datasets


def _data_path(*parts):
    base = datasets.shared_data_dir()
    if base is None:
        where = os.environ.get("DPTM_DATA") or str(
            Path(datasets.__file__).resolve().parent.parent.parent / "shared" / "data")
        pytest.skip(f"shared data folder not found at {where}; set DPTM_DATA")
    path = base.joinpath(*parts)
    if not path.exists():
        pytest.skip(f"{'/'.join(parts)} not found at {path}; set DPTM_DATA")
    return path


@pytest.fixture(scope="session")
def kos():
    """KOS blog entries (UCI bag of words): ``(X, vocabulary)``, X CSR of shape (3430, 6906)."""
    return datasets.load_uci_bow(_data_path("kos", "docword.kos.txt.gz"),
                                 _data_path("kos", "vocab.kos.txt"))


@pytest.fixture(scope="session")
def nips():
    """NIPS full papers (UCI bag of words): ``(X, vocabulary)``, X CSR of shape (1500, 12419)."""
    return datasets.load_uci_bow(_data_path("nips_uci", "docword.nips.txt.gz"),
                                 _data_path("nips_uci", "vocab.nips.txt"))


@pytest.fixture(scope="session")
def tweetrumors():
    """Cleaned TweetRumors (PHEME) tweets: list of 5,698 pre-processed strings."""
    return datasets.load_json_texts(_data_path("tweetrumors", "tweetrumors_clean.json"))


@pytest.fixture(scope="session")
def reuters_c50():
    """Reuters C50: ``(texts, authors)`` for all 5,000 articles, the 2,500 training ones first."""
    return datasets.load_reuters_c50(_data_path("reuters_c50", "C50.tar.gz"), subset="all")


@pytest.fixture
def no_work(monkeypatch):
    """Any reading of the data or any fit fails the test: a refusal must come first."""
    import dptm.attacks
    import dptm.cli
    import dptm.metrics

    def forbidden(*args, **kwargs):
        raise AssertionError("the data was read or a model fitted before the refusal")

    monkeypatch.setattr(dptm.cli, "load_corpus", forbidden)
    monkeypatch.setattr(dptm.attacks, "audit", forbidden)
    monkeypatch.setattr(dptm.metrics, "privacy_utility_curve", forbidden)
