"""The lab's fm_training: used by studies and builders, never by the coreenv wheel."""
