"""The lab's predictor_eval: used by studies and builders, never by the coreenv wheel."""
