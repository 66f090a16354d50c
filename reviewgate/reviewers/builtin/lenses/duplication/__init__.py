"""The DRY lens: added code that repeats code the repository already has."""
