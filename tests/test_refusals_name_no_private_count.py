"""Refusals that depend on the private data must not print the private quantity."""
import re

import pytest

from dptm import vocab
from dptm.vocab import DPVocabulary


def test_vocabulary_over_the_candidate_cap_does_not_name_the_count(monkeypatch):
    monkeypatch.setattr(vocab, "_MAX_CANDIDATES", 5)
    docs = [["w%d" % i for i in range(7)], ["w0", "w1"]] * 3
    with pytest.raises(ValueError) as info:
        DPVocabulary(1.0, 1e-5, random_state=0).fit(docs)
    msg = str(info.value)
    assert "distinct words" in msg
    # the public cap is named, the private number of distinct words (7) is not
    assert re.findall(r"\d+", msg) == ["5"]
