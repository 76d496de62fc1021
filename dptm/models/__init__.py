"""Topic model estimators (scikit-learn API)."""
from .private_vb import PrivateBatchLDA  # noqa: F401
