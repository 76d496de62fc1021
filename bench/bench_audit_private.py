"""Membership-inference audit (LiRA, papers/manzonelli2024) of PrivateBatchLDA at a total
epsilon of 4 beside the non-private model of its family (issue #15).

Online and offline LiRA with the zeta statistic and ``--shadows`` shadow models (64 by
default) attack a target trained on a random half of a synthetic corpus; the table gives
TPR at 0.1% and 1% FPR, AUC and the Clopper-Pearson interval of the TPR at 0.1% FPR. A
private model resists the attack when that TPR is within the Clopper-Pearson interval of
0.1% (the TPR of guessing). Shadow and target fits are seeded (the audit's test mode):
privacy does not rest on secret seeds here, the attacker is simulated.

One target gives 1,500 members and 1,500 non-members, so its 0.1% threshold is the second
highest non-member score and the count of members above it is noisy even for an attack
that cannot tell members apart: under that null the count is negative hypergeometric (mean
2, sd 2; 11% of null runs reach 5 of 1,500 = 0.33%, which the binomial Clopper-Pearson
interval calls "outside"). The "pooled" rows therefore also score every shadow as a target
against the other shadows (leave-one-out, as Carlini et al. 2022 evaluate LiRA: 65 targets,
no extra fits) with one threshold over all scores, and give the exact p-value of the
observed count under the null that members and non-members are exchangeable.

    python bench/bench_audit_private.py                 # 3,000 documents, 64 shadows
    python bench/bench_audit_private.py --quick         # 1,000 documents, 16 shadows
    python bench/bench_audit_private.py --public-docs 2000 --epsilon 2   # public start

``--public-docs N`` audits the fit from public starting topics (``init_topics``: scikit-learn's
batch LDA on N further documents of the same generator, outside the audited corpus).
"""
import argparse
import os
import sys
import time
import warnings

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
# the audit seeds its simulated models (test mode): keep the workers' warnings quiet too

import numpy as np  # noqa: E402
from sklearn.decomposition import LatentDirichletAllocation  # noqa: E402

from dptm.attacks.evaluation import (attack_summary, clopper_pearson, tpr_at_fpr,  # noqa: E402
                                     tpr_null_p_value)
from dptm.attacks.lira import audit  # noqa: E402
from dptm.datasets import make_lda_corpus  # noqa: E402
from dptm.models.private_vb import PrivateBatchLDA  # noqa: E402


def main():
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--docs", type=int, default=3000)
    p.add_argument("--shadows", type=int, default=64)
    p.add_argument("--epsilon", type=float, default=4.0)
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--quick", action="store_true")
    p.add_argument("--seed", type=int, default=0, help="seed of the audit's split and fits")
    p.add_argument("--threshold", type=float, default=None,
                   help="PrivateBatchLDA's threshold (default None: the posterior-mean release)")
    p.add_argument("--private-only", action="store_true")
    p.add_argument("--public-docs", type=int, default=0, metavar="N",
                   help="start from the topics of N public documents of the same generator")
    a = p.parse_args()
    if a.quick:
        a.docs, a.shadows = 1000, 16
    K = 10
    X, _, _ = make_lda_corpus(a.docs + a.public_docs, 1000, K, doc_length=80, random_state=0)
    X, public = X[:a.docs], X[a.docs:]
    print(f"synthetic corpus: {a.docs} documents, V = 1000, K = {K}; {a.shadows} shadow "
          f"models; load {os.getloadavg()}")
    init = None if not a.public_docs else LatentDirichletAllocation(
        K, learning_method="batch", random_state=0).fit(public).components_
    start = "" if init is None else f", start of {a.public_docs} public docs"
    trainers = {
        f"PrivateBatchLDA eps={a.epsilon:g}{start}": PrivateBatchLDA(
            K, target_epsilon=a.epsilon, target_delta=1e-5, threshold=a.threshold,
            init_topics=init),
        "non-private (sklearn batch VB)": LatentDirichletAllocation(K, learning_method="batch"),
    }
    print(f"\n{'model':34s} {'attack':24s} {'TPR@0.1%':>9s} {'95% CP interval':>16s}"
          f"{'TPR@1%':>8s} {'AUC':>7s}  CP?  null p")
    if a.private_only:
        trainers.pop("non-private (sklearn batch VB)")
    for name, trainer in trainers.items():
        t = time.perf_counter()
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # public starting topics are over the full vocabulary: no restriction to the
            # target's words (the vocabulary is public here, as the model assumes)
            res = audit(trainer, X, n_shadows=a.shadows, n_jobs=a.jobs, random_state=a.seed,
                        baselines=False, restrict_vocabulary=init is None)
        labels = np.asarray(res.labels, dtype=bool)
        for attack, scores in res.scores.items():
            scores = np.asarray(scores, dtype=float)
            method = "online" if "online" in attack else "offline"
            loo_s, loo_l = res.lira.leave_one_out(method)
            for rows, s_, l_ in (("target", scores, labels),
                                 ("pooled", np.concatenate([scores, loo_s.ravel()]),
                                  np.concatenate([labels, loo_l.ravel()]))):
                n = int(l_.sum())
                tp = int(round(tpr_at_fpr(l_, s_, 0.001) * n))
                lo, hi = clopper_pearson(tp, n)
                m = attack_summary(l_, s_)
                ok = lo <= 0.001 <= hi
                pv = tpr_null_p_value(l_, s_, 0.001)
                print(f"{name:34s} {attack + ' ' + rows:24s} {tp / n:9.4f} [{lo:.4f}, {hi:.4f}]"
                      f"{m['tpr@0.01']:8.4f} {m['auc']:7.4f}  {'yes' if ok else 'NO':3s} "
                      f"{pv:8.3g}  ({tp} of {n})", flush=True)
        print(f"  ({time.perf_counter() - t:.0f} s)")


if __name__ == "__main__":
    # the worker processes' warnings, silenced only when run as a script (imported by
    # the tests, it would silence every subprocess the test session starts)
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    main()
