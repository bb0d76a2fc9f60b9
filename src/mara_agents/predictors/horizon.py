"""H, the one generation cap shared by the predictors and by the protocol that scores them."""

HORIZON = 500
"""H in batches: a crossing further ahead is "unknown" (``inf``), and errors are capped at H."""
