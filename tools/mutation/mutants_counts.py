"""Mutants of the session of 2026-12-04 (public word counts, the refusals made early).

Written by the author of the code (not blind): each one is a bug the new tests are meant to
catch. Same format as ``mutants.py``. Run with ``run.py --set counts --prebuilt``.
"""

COUNTS = ["tests/test_private_vb_word_counts.py"]
CLI = ["tests/test_cli_vocabulary_counts.py"]

COUNTS_MUTANTS = [
    {"id": "WC01", "file": "dptm/models/vb_denoise.py",
     "old": "        background &= spread < 1.0 + 3.0 * math.sqrt(2.0 / (K - 1))",
     "new": "        pass",
     "tests": COUNTS, "what": "a word whose topics the release tells apart overwritten"},
    {"id": "WC02", "file": "dptm/models/vb_denoise.py",
     "old": "    q = counts[background] + 0.5",
     "new": "    q = counts[background] + 0.0",
     "tests": COUNTS, "what": "no Jeffreys half-count: a word the public text misses gets 0"},
    {"id": "WC03", "file": "dptm/models/vb_denoise.py",
     "old": "    topic_mass = np.maximum(est[:, background].sum(axis=1), 0.0)",
     "new": "    topic_mass = np.abs(est[:, background].sum(axis=1))",
     "tests": COUNTS, "what": "a negative estimated mass turned into positive mass"},
    {"id": "WC04", "file": "dptm/models/vb_denoise.py",
     "old": "    mass = share * z.sum(axis=0) + (1.0 - share) * (total * (counts / n))",
     "new": "    mass = total * (counts / n)",
     "tests": COUNTS, "what": "the release's column totals ignored (public counts only)"},
    {"id": "WC05", "file": "dptm/models/private_vb.py",
     "old": "            if r.post == \"final\" and counts is not None:",
     "new": "            if counts is not None:",
     "tests": COUNTS, "what": "every search release post-processed too (the E-step changes)"},
    {"id": "WC06", "file": "dptm/models/private_vb.py",
     "old": "+ ([\"word_counts (given as public)\"] if counts is not None else [])",
     "new": "+ []",
     "tests": COUNTS, "what": "the report does not list the counts as assumed public"},
    {"id": "WC07", "file": "dptm/models/private_vb.py",
     "old": "np.any(counts < 0) or not 0 < total < np.inf:",
     "new": "not 0 < total < np.inf:",
     "tests": COUNTS, "what": "negative counts accepted"},
    {"id": "WC08", "file": "dptm/_cli_data.py",
     "old": "        counts = counts[keep]\n",
     "new": "\n",
     "tests": CLI, "what": "the counts not aligned with the words left after the stop words"},
    {"id": "WC09", "file": "dptm/pipeline.py",
     "old": "        for name in (\"init_topics\", \"word_counts\"):",
     "new": "        for name in ():",
     "tests": ["tests/test_fdptm.py"],
     "what": "per-word inputs reach the model after the vocabulary's budget is spent"},
    {"id": "WC10", "file": "dptm/models/svi.py",
     "old": "        if self._private and self.sampling == \"poisson\" and self.total_samples is None:",
     "new": "        if False:",
     "tests": ["tests/test_svi.py", "tests/test_secrets_by_value.py"],
     "what": "VIPS plans q and the steps from the private number of documents again"},
]
