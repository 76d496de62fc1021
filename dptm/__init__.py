"""dptm: differentially private topic modeling and membership-inference auditing.

The estimators are loaded lazily, so ``import dptm`` stays cheap and a missing optional
extra only matters when the feature that needs it is used.
"""
import importlib
import logging

__version__ = "0.1.0"

# The package never configures logging; applications do. Progress of verbose fits goes to
# this logger (see dptm._progress: verbose >= 1 attaches a stderr handler for the fit only
# when the application configured none).
logging.getLogger(__name__).addHandler(logging.NullHandler())

_LAZY = {
    "Corpus": "dptm.corpus",
    "GibbsLDA": "dptm.models.gibbs",
    "NoisyGibbsLDA": "dptm.models.private_gibbs",
    "SubsampledGibbsLDA": "dptm.models.subsampled_gibbs",
    "PrivateOnlineLDA": "dptm.models.svi",
    "PrivateBatchLDA": "dptm.models.private_vb",
    "LocalDPLDA": "dptm.models.local",
    "OnlineLocalDPLDA": "dptm.models.local",
    "TopicDP": "dptm.models.topicdp",
    "DPVocabulary": "dptm.vocab",
    "FullyPrivateTopicModel": "dptm.pipeline",
    "Release": "dptm.release",
    "set_progress": "dptm._progress",
    "spending": "dptm.selection",
    "select_private": "dptm.selection",
}
_SUBMODULES = {
    "accounting", "attacks", "corpus", "datasets", "exceptions", "local", "mechanisms",
    "guardrails", "metrics", "models", "plotting", "text", "vocab", "pipeline", "release",
    "testing", "selection",
}

__all__ = sorted(_LAZY) + sorted(_SUBMODULES)


def __getattr__(name):
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    if name in _SUBMODULES:
        return importlib.import_module(f"dptm.{name}")
    raise AttributeError(f"module 'dptm' has no attribute {name!r}")


def __dir__():
    return __all__
