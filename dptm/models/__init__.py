"""Topic model estimators (scikit-learn API)."""
