"""Security exposures the diff creates, and the fixes that are mechanical."""
