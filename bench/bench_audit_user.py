"""User-level membership inference (LiRA) against user-level and document-level
PrivateBatchLDA at epsilon 4 (issue #37).

The attacker's target is a USER: all of their documents are in the training set or none.
On a synthetic corpus of users with a heavy-tailed number of documents
(``corpora.target_shape`` scaled down; each user's documents drawn around the user's own
topic mixture), a target model is trained on a random half of the users and ``--shadows``
shadow models on complementary random halves of the users (every user IN exactly half of
them). The statistic of a user is the sum over their documents of zeta (the maximised
log-likelihood of papers/manzonelli2024), so a heavy user's evidence adds up; the online and
offline Gaussian tests of ``dptm.attacks.LiRA`` score it (the LiRA is given the per-user
statistics and memberships in place of per-document ones). As in bench_audit_private.py
the "pooled" rows also attack every shadow with the other shadows (leave-one-out: 65
targets) with one threshold over all scores; TPR at 0.1% FPR is given with its 95%
Clopper-Pearson interval (guessing: 0.1%) and the exact p-value under guessing, for all
users and by weight: users with one document and the heaviest users (``--heavy`` docs or
more).

Models at the same nominal epsilon: ``PrivateBatchLDA.fit(X, groups=users)`` (user level),
``PrivateBatchLDA.fit(X)`` (document level: a user of n documents gets n epsilon by group
privacy) and, as the reference, scikit-learn's non-private batch LDA. Shadow and target fits
are seeded (the audit's test mode: the attacker is simulated; privacy does not rest on the
seeds). The vocabulary is fixed (public), not restricted to the target's words.

    python bench/bench_audit_user.py                  # 500 users, 1,000 docs, 64 shadows
    python bench/bench_audit_user.py --quick          # 120 users, 8 shadows: a smoke run
"""
import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))

import numpy as np  # noqa: E402
from sklearn.base import clone  # noqa: E402
from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402

from dptm.attacks.evaluation import (attack_summary, clopper_pearson, tpr_at_fpr,  # noqa: E402
                                     tpr_null_p_value)
from dptm.attacks.lira import LiRA, set_random_state, shadow_splits  # noqa: E402
from dptm.attacks.statistics import compute_statistics, get_topic_word  # noqa: E402
from dptm.models.private_vb import PrivateBatchLDA  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpora  # noqa: E402
from bench_user_level import adjacency, synthetic_users  # noqa: E402


def user_stats(topic_word, X, users, n_users):
    """Sum over each user's documents of zeta under ``topic_word``: shape (n_users, 1)."""
    with warnings.catch_warnings():     # an uncertified zeta (a RuntimeWarning) is kept
        warnings.simplefilter("ignore")
        z = compute_statistics(topic_word, X, ("zeta",), uncertified="warn")[:, 0]
    return np.bincount(users, weights=z, minlength=n_users)[:, None]


def fit_on(trainer, by_user, X, users, user_in, seed):
    rows = np.flatnonzero(user_in[users])
    est = set_random_state(clone(trainer), seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        if by_user:
            return est.fit(X[rows], groups=users[rows])
        return est.fit(X[rows])


def run_model(name, trainer, by_user, X, users, n_shadows, seed):
    """Shadows and target of one model; returns the fitted LiRA (per-user statistics)."""
    U = int(users.max()) + 1
    rng = np.random.default_rng([seed, 37])
    target_in = np.zeros(U, dtype=bool)
    target_in[rng.permutation(U)[:U // 2]] = True
    in_mask = shadow_splits(U, n_shadows, rng)
    seeds = rng.integers(2**32 - 1, size=n_shadows + 1)
    stats = np.empty((n_shadows, U, 1))
    for i in range(n_shadows):
        m = fit_on(trainer, by_user, X, users, in_mask[i], int(seeds[i]))
        stats[i] = user_stats(get_topic_word(m), X, users, U)
    target = fit_on(trainer, by_user, X, users, target_in, int(seeds[-1]))
    lira = LiRA(trainer, n_shadows=n_shadows)
    lira.statistics_ = ("zeta",)
    lira.in_mask_, lira.shadow_stats_ = in_mask, stats
    lira.target_stats_ = user_stats(get_topic_word(target), X, users, U)
    unit = adjacency(target) or "-"
    return lira, target_in, unit


def rows_of(lira, target_in, weight, classes):
    """(attack, part, class, TPR, CP interval, TPR@1%, AUC, p, k, n) for every cell."""
    out = []
    for method in ("online", "offline"):
        scores = lira.scores(method)
        loo_s, loo_l = lira.leave_one_out(method)
        parts = (("target", scores, target_in, weight),
                 ("pooled", np.concatenate([scores, loo_s.ravel()]),
                  np.concatenate([target_in, loo_l.ravel()]),
                  np.concatenate([weight] + [weight] * loo_s.shape[0])))
        for part, s, lab, w in parts:
            for cname, keep in classes(w):
                s_, l_ = s[keep], lab[keep]
                n = int(l_.sum())
                if n == 0 or n == len(l_):
                    continue
                k = int(round(tpr_at_fpr(l_, s_, 0.001) * n))
                lo, hi = clopper_pearson(k, n)
                m = attack_summary(l_, s_)
                out.append((f"LiRA {method}", part, cname, k / n, lo, hi, m["tpr@0.01"],
                            m["auc"], tpr_null_p_value(l_, s_, 0.001), k, n))
    return out


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--users", type=int, default=500)
    p.add_argument("--docs", type=int, default=1000)
    p.add_argument("--max-per-user", type=int, default=40)
    p.add_argument("--heavy", type=int, default=5, help="docs of a 'heavy' user (at least)")
    p.add_argument("--shadows", type=int, default=64)
    p.add_argument("--epsilon", type=float, default=4.0)
    p.add_argument("--words", type=int, default=1000)
    p.add_argument("-K", type=int, default=10)
    p.add_argument("--seed", type=int, default=0, help="seed of the corpus, splits and fits")
    p.add_argument("--models", nargs="*", default=["user", "document", "non-private"])
    p.add_argument("--quick", action="store_true")
    a = p.parse_args(argv)
    if a.quick:
        a.users, a.docs, a.max_per_user, a.shadows, a.words = 120, 240, 15, 8, 300
    shape = corpora.target_shape(a.users, a.docs, a.max_per_user)
    X, users = synthetic_users(shape, n_words=a.words, n_topics=a.K, seed=a.seed)
    sh = corpora.user_shape(users)
    weight = np.bincount(users)
    print(f"synthetic corpus: {sh['n_docs']} documents by {sh['n_users']} users "
          f"({100 * sh['users_with_one_doc']:.0f}% with one doc, max "
          f"{sh['max_docs_per_user']}, {int(np.sum(weight >= a.heavy))} users with "
          f">= {a.heavy}), V = {a.words}, K = {a.K}; {a.shadows} shadow models, epsilon "
          f"{a.epsilon:g}; load {os.getloadavg()}", flush=True)
    trainers = {
        "user": (f"PrivateBatchLDA user-level eps={a.epsilon:g}", True,
                 PrivateBatchLDA(a.K, target_epsilon=a.epsilon, target_delta=1e-5)),
        "document": (f"PrivateBatchLDA doc-level eps={a.epsilon:g}", False,
                     PrivateBatchLDA(a.K, target_epsilon=a.epsilon, target_delta=1e-5)),
        "non-private": ("non-private (sklearn batch VB)", False,
                        LatentDirichletAllocation(a.K, learning_method="batch")),
    }
    classes = lambda w: [("all users", np.ones(len(w), dtype=bool)),  # noqa: E731
                         ("1 doc", w == 1), (f">= {a.heavy} docs", w >= a.heavy)]
    print(f"\n{'model':38s} {'unit':8s} {'attack':12s} {'part':6s} {'users':11s} "
          f"{'TPR@0.1%':>9s} {'95% CP interval':>17s} {'TPR@1%':>7s} {'AUC':>6s}  CP?  "
          f"{'null p':>7s}")
    results = {}
    for key in a.models:
        name, by_user, trainer = trainers[key]
        t = time.perf_counter()
        try:
            lira, target_in, unit = run_model(name, trainer, by_user, X, users, a.shadows,
                                              a.seed)
        except TypeError as exc:            # no groups= in this PrivateBatchLDA
            print(f"{name:38s} skipped: {exc}")
            continue
        results[key] = rows_of(lira, target_in, weight, classes)
        for attack, part, cname, tpr, lo, hi, t1, auc, pv, k, n in results[key]:
            ok = "yes" if lo <= 0.001 <= hi else "NO"
            print(f"{name:38s} {str(unit):8s} {attack:12s} {part:6s} {cname:11s} {tpr:9.4f} "
                  f"[{lo:.4f}, {hi:.4f}] {t1:7.4f} {auc:6.3f}  {ok:3s}  {pv:7.3g}  "
                  f"({k} of {n})", flush=True)
        print(f"  ({time.perf_counter() - t:.0f} s)", flush=True)
    return results


if __name__ == "__main__":
    # the worker processes' warnings, silenced only when run as a script (imported by
    # the tests, it would silence every subprocess the test session starts)
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
