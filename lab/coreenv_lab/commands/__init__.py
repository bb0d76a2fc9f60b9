"""The lab's commands: used by studies and builders, never by the coreenv wheel."""
