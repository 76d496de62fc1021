"""The user-level benchmark and audit (bench/bench_user_level.py, bench/bench_audit_user.py)
and their corpus helpers (bench/corpora.py): the target shape, the split by user, the
clipped-mass figure by closed form, and a smoke run of each script on a tiny corpus."""
import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp

_BENCH = Path(__file__).resolve().parent.parent / "bench"


def _module(name):
    if str(_BENCH) not in sys.path:
        sys.path.insert(0, str(_BENCH))
    spec = importlib.util.spec_from_file_location(f"bench_{name}_ul", _BENCH / f"{name}.py")
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


corpora = _module("corpora")
bul = _module("bench_user_level")
bau = _module("bench_audit_user")


def test_target_shape_is_the_issues():
    c = corpora.target_shape()
    assert c.sum() == 17000 and len(c) == 8500 and c.max() == 120 and c.min() == 1
    assert np.all(np.diff(c) <= 0)
    s = corpora.user_shape(np.repeat(np.arange(len(c)), c))
    assert s["users_with_one_doc"] > 0.5          # "most with one document"
    assert s["n_docs"] == 17000 and s["max_docs_per_user"] == 120
    small = corpora.target_shape(100, 230, 12)
    assert small.sum() == 230 and len(small) == 100 and small.max() == 12


def test_user_shape_closed_form():
    s = corpora.user_shape(["a"] * 5 + ["b", "c", "d"])
    assert s == {"n_docs": 8, "n_users": 4, "users_with_one_doc": 0.75,
                 "max_docs_per_user": 5, "median_docs_per_user": 1.0,
                 "docs_by_top1pct_users": 5 / 8}


def test_user_split_keeps_users_whole():
    rng = np.random.default_rng(0)
    groups = [f"u{int(g)}" for g in rng.zipf(1.8, 3000) % 900]
    tr, te = corpora.user_split(groups, seed=0)
    assert len(tr) + len(te) == len(groups) and not set(tr) & set(te)
    assert not {groups[i] for i in tr} & {groups[i] for i in te}
    assert len(te) >= 600                 # 10%, at least 1,000 or a fifth of 3,000
    _, te2 = corpora.user_split(groups, seed=0)
    assert np.array_equal(te, te2)
    assert not np.array_equal(te, corpora.user_split(groups, seed=1)[1])


def _word(u):
    return "zeta" + "abcdefghij"[u // 10] + "abcdefghij"[u % 10]


def test_load_by_user_vocabulary_from_training_users(tmp_path, monkeypatch):
    monkeypatch.setenv("DPTM_BENCH_CACHE", str(tmp_path))
    texts, ids, groups = [], [], []
    for u in range(60):
        for d in range(1 + u % 4):          # the user's own word in 1-4 documents of theirs
            texts.append(f"alpha beta gamma delta epsilon {_word(u)} kappa lambda")
            ids.append(f"{u}-{d}")
            groups.append(f"user{u}")
    monkeypatch.setitem(corpora.USER_CORPORA, "tiny", lambda seed: corpora._Raw(
        texts, ids, groups, {}))
    c = corpora.load_by_user("tiny", vocabulary_size=50)
    names = c.meta["group_names"]
    train_users = {names[g] for g in c.groups_train}
    test_users = {names[g] for g in c.groups_test}
    assert not train_users & test_users
    assert len(train_users | test_users) == 60
    heavy = {f"user{u}" for u in range(60) if u % 4 == 3}       # 4 documents: df 4 >= 3
    assert heavy & test_users and heavy & train_users
    vocab = set(c.vocabulary)
    assert {_word(int(u[4:])) for u in heavy & train_users} <= vocab
    assert not {_word(int(u[4:])) for u in heavy & test_users} & vocab
    assert c.meta["split"] == "by user"
    assert c.meta["users"]["n_docs"] == c.X_train.shape[0] + c.X_test.shape[0] == 150


def test_clipped_share_closed_form():
    X = sp.csr_matrix(np.array([[3, 4], [0, 1], [0, 0]]))
    users = np.array([0, 1, 1])
    # user 0: norm 5, 7 tokens, scaled to 2.5 (half); user 1: norm 1, within the bound
    assert bul.clipped_share(X, users, 2.5) == pytest.approx(0.5 * 7 / 8)
    assert bul.clipped_share(X, users, 10.0) == 0.0


def test_clip_oracle_closed_form():
    # one direction: every C below both norms (5, 10) costs s^2 q / (n^2 + q) with s = |S| =
    # 15, n = 2 units, whatever C (the common scale is free); a missing rescaling would not be
    X = sp.csr_matrix(np.array([[3, 4], [6, 8]]))
    cost = bul.clip_oracle(X, np.array([0, 1]), [1.0, 2.0, 5.0], 1.0)
    assert cost == pytest.approx([225 / 5] * 3)
    # orthogonal users (the second one's two documents summed: [0, 2]), no noise: clipped at
    # 1, S_C = [1, 1] against S = [3, 2]: lambda = 5 / 2 leaves (0.5^2 + 0.5^2) of bias
    X = sp.csr_matrix(np.array([[3, 0], [0, 1], [0, 1]]))
    users = np.array([0, 1, 1])
    assert bul.clip_oracle(X, users, [1.0], 0.0) == pytest.approx([0.5])
    # nothing clipped (C = 10): only the noise, rescaled: s^2 q C^2 / (s^2 + q C^2), s^2 = 13
    assert bul.clip_oracle(X, users, [10.0], 0.01) == pytest.approx([13 * 1 / (13 + 1)])


def _tiny(name, quick):
    shape = corpora.target_shape(60, 150, 10)
    X, users = bul.synthetic_users(shape, n_words=80, n_topics=3, doc_length=(10, 20))
    tr, te = corpora.user_split(list(users))
    return X[tr], X[te], users[tr], corpora.user_shape(users), "tiny"


def test_bench_user_level_smoke(monkeypatch, capsys):
    monkeypatch.setattr(bul, "load", _tiny)
    monkeypatch.setattr(bul, "K", 3)
    res = bul.main(["--corpus", "synthetic", "--repeats", "1", "--epsilons", "4",
                    "--user-clips", "3", "--clip-oracle", "--name",
                    "test_bench_user_level_smoke"])
    rows = {(r["level"], r["epsilon"]): r for r in res[0]["rows"]}
    assert ("document", 4.0) in rows and ("document", bul.FLOOR_EPSILON) in rows
    assert len(rows[("document", 4.0)]["runs"]) == 1
    oracle = res[0]["clip_oracle"]
    assert set(oracle) == {"document eps 4", "user eps 4"}
    assert all(min(c.values()) == 1.0 for c in oracle.values())
    assert rows[("document", 4.0)]["unit"] == "document"
    if bul.has_groups_api():
        user = rows[("user", 4.0)]
        assert user["unit"] == "user"
        assert user["user_over_doc"] == user["perplexity"] / rows[("document", 4.0)]["perplexity"]
        given = [r for r in res[0]["rows"] if r["model"] == "clip_norm=3 (given)"]
        assert len(given) == 1 and given[0]["clip"] == 3.0
    assert "held-out documents of other users" in capsys.readouterr().out


def test_bench_audit_user_smoke(capsys):
    res = bau.main(["--quick", "--models", "document", "user"])
    out = capsys.readouterr().out
    assert "doc-level" in out
    for rows in res.values():
        parts = {(r[0], r[1], r[2]) for r in rows}
        assert ("LiRA online", "pooled", "all users") in parts
        for _, part, _, tpr, lo, hi, _, auc, pv, k, n in rows:
            assert 0 <= lo <= tpr <= hi <= 1 and 0 <= auc <= 1 and 0 <= pv <= 1
            assert tpr == k / n


def test_audit_user_statistic_sums_documents():
    shape = np.array([3, 1, 1])
    X, users = bul.synthetic_users(shape, n_words=30, n_topics=2, doc_length=(5, 8))
    phi = np.full((2, 30), 1 / 30)
    from dptm.attacks.statistics import compute_statistics
    z = compute_statistics(phi, X, ("zeta",))[:, 0]
    s = bau.user_stats(phi, X, users, 3)[:, 0]
    assert s == pytest.approx([z[:3].sum(), z[3], z[4]])
