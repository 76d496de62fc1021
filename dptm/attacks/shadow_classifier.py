"""Shadow-model membership inference against a classifier (Shokri et al. 2017), the attack
Zhao et al. 2021 (Section VII-C2) runs on an LDA-feature classifier to test private LDA.

The target is a supervised pipeline whose features are the topic proportions of a (private)
topic model, e.g. ``make_pipeline(NoisyGibbsLDA(...), LogisticRegression())``. Shadow copies
of the pipeline are trained on data from the same distribution; their prediction vectors on
their own training records ("in") and on held-out records ("out") train an attack
classifier (one per class label, as Shokri et al.), which is then applied to the target's
predictions.
"""
import numpy as np
from sklearn.base import clone

from .._utils import check_int, check_random_state, spawn_generators
from .lira import set_random_state

__all__ = ["ShadowClassifierAttack"]


def _features(proba, y, classes):
    """Attack features: the prediction vector, the probability of the true label and its
    negative log (the record's loss)."""
    idx = np.searchsorted(classes, y)
    p_true = proba[np.arange(len(y)), idx]
    return np.column_stack([proba, p_true, -np.log(np.maximum(p_true, 1e-300))])


class ShadowClassifierAttack:
    """Shokri et al. (2017) membership inference with shadow classifiers.

    Parameters
    ----------
    model : estimator with ``predict_proba``
        Unfitted copy of the target pipeline (topic model + classifier); cloned per shadow,
        each clone seeded from ``random_state`` by shadow index.
    n_shadows : int, default=10
    attack_model : classifier, default=None
        Binary classifier on the attack features; default a random forest (100 trees).
    per_class : bool, default=True
        One attack model per class label (Shokri et al.), or a single one.
    random_state : None, int, SeedSequence or Generator
    n_jobs : int or None
        Shadow pipelines trained in parallel with joblib.

    Attributes
    ----------
    classes_ : ndarray
    attack_models_ : dict label -> fitted classifier (key None when ``per_class=False``)

    Privacy
    -------
    An audit, not a mechanism. Its accuracy on balanced member / non-member sets (0.5 =
    no leakage) is what Zhao et al. 2021 Fig. 7 reports for (locally) private LDA.
    """

    def __init__(self, model, *, n_shadows=10, attack_model=None, per_class=True,
                 random_state=None, n_jobs=None):
        self.model = model
        self.n_shadows = n_shadows
        self.attack_model = attack_model
        self.per_class = per_class
        self.random_state = random_state
        self.n_jobs = n_jobs

    def _make_attack_model(self, seed):
        if self.attack_model is None:
            from sklearn.ensemble import RandomForestClassifier
            return RandomForestClassifier(n_estimators=100, min_samples_leaf=2, random_state=seed)
        return set_random_state(clone(self.attack_model), seed)

    def fit(self, X, y):
        """Train the shadow pipelines on random halves of the attacker's data ``(X, y)`` and
        the attack models on their in/out prediction vectors."""
        from joblib import Parallel, delayed

        n = check_int(self.n_shadows, "n_shadows", minimum=1)
        y = np.asarray(y)
        if X.shape[0] != y.shape[0]:
            raise ValueError(f"X and y have {X.shape[0]} and {y.shape[0]} rows")
        if X.shape[0] < 4:
            raise ValueError("need at least 4 labelled records for the shadow models")
        self.classes_ = np.unique(y)
        rng = check_random_state(self.random_state)
        split_rng, seed_rng, attack_rng = spawn_generators(rng, 3)
        seeds = [int(g.integers(2**32 - 1)) for g in spawn_generators(seed_rng, n)]
        splits = [split_rng.permutation(X.shape[0]) for _ in range(n)]

        def one(i):
            half = X.shape[0] // 2
            rows_in, rows_out = splits[i][:half], splits[i][half:2 * half]
            m = set_random_state(clone(self.model), seeds[i]).fit(X[rows_in], y[rows_in])
            p_in = self._proba(m, X[rows_in])
            p_out = self._proba(m, X[rows_out])
            return (np.vstack([_features(p_in, y[rows_in], self.classes_),
                               _features(p_out, y[rows_out], self.classes_)]),
                    np.r_[np.ones(half), np.zeros(half)], np.r_[y[rows_in], y[rows_out]])

        parts = Parallel(n_jobs=self.n_jobs)(delayed(one)(i) for i in range(n))
        F = np.vstack([p[0] for p in parts])
        M = np.concatenate([p[1] for p in parts])
        Y = np.concatenate([p[2] for p in parts])
        seed = int(attack_rng.integers(2**32 - 1))
        self.attack_models_ = {}
        groups = self.classes_ if self.per_class else [None]
        for c in groups:
            sel = np.ones(len(Y), bool) if c is None else (Y == c)
            if len(np.unique(M[sel])) < 2:
                continue
            self.attack_models_[c] = self._make_attack_model(seed).fit(F[sel], M[sel])
        return self

    def _proba(self, model, X):
        """Class probabilities in the order of ``self.classes_`` (classes a shadow never saw
        get probability 0)."""
        p = model.predict_proba(X)
        out = np.zeros((p.shape[0], len(self.classes_)))
        out[:, np.searchsorted(self.classes_, model.classes_)] = p
        return out

    def predict_proba(self, target, X, y):
        """Membership probability of each record ``(X[i], y[i])`` in ``target``'s training
        set (``target`` a fitted pipeline with ``predict_proba``)."""
        if not hasattr(self, "attack_models_"):
            raise AttributeError("call fit(X, y) on the attacker's data first")
        y = np.asarray(y)
        F = _features(self._proba(target, X), y, self.classes_)
        out = np.full(len(y), 0.5)
        for c, model in self.attack_models_.items():
            sel = np.ones(len(y), bool) if c is None else (y == c)
            if sel.any():
                out[sel] = model.predict_proba(F[sel])[:, list(model.classes_).index(1)]
        return out

    def score(self, target, X_in, y_in, X_out, y_out):
        """Membership-inference accuracy on members ``(X_in, y_in)`` and non-members
        ``(X_out, y_out)`` (threshold 0.5; use equal sizes for the papers' balanced accuracy)."""
        p_in = self.predict_proba(target, X_in, y_in)
        p_out = self.predict_proba(target, X_out, y_out)
        return float((np.sum(p_in > 0.5) + np.sum(p_out <= 0.5)) / (len(p_in) + len(p_out)))
