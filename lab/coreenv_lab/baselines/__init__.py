"""The lab's baselines: used by studies and builders, never by the coreenv wheel."""
