"""Membership-inference auditing of topic models (Manzonelli et al. 2024, Zhao et al. 2021).

Names are loaded lazily from their modules.
"""
import importlib

_LAZY = {
    "zeta": "dptm.attacks.statistics",
    "topic_based_attack": "dptm.attacks.topic_based",
    "get_topic_word": "dptm.attacks.statistics",
    "compute_statistics": "dptm.attacks.statistics",
    "negative_entropy": "dptm.attacks.statistics",
    "topic_std": "dptm.attacks.statistics",
    "logit_max": "dptm.attacks.statistics",
    "LiRA": "dptm.attacks.lira",
    "audit": "dptm.attacks.lira",
    "AuditResult": "dptm.attacks.lira",
    "global_threshold_scores": "dptm.attacks.lira",
    "shadow_splits": "dptm.attacks.lira",
    "roc_curve": "dptm.attacks.evaluation",
    "tpr_at_fpr": "dptm.attacks.evaluation",
    "tpr_null_p_value": "dptm.attacks.evaluation",
    "auc": "dptm.attacks.evaluation",
    "empirical_epsilon": "dptm.attacks.evaluation",
    "clopper_pearson": "dptm.attacks.evaluation",
    "attack_summary": "dptm.attacks.evaluation",
    "plot_roc": "dptm.attacks.evaluation",
    "in_out_kl": "dptm.attacks.diagnostics",
    "normality_tests": "dptm.attacks.diagnostics",
    "example_documents": "dptm.attacks.diagnostics",
    "in_out_histograms": "dptm.attacks.diagnostics",
    "ShadowClassifierAttack": "dptm.attacks.shadow_classifier",
}

__all__ = sorted(_LAZY)


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'dptm.attacks' has no attribute {name!r}")


def __dir__():
    return __all__
