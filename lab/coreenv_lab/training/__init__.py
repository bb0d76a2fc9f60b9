"""The lab's training: used by studies and builders, never by the coreenv wheel."""
