"""Talking to forges (GitHub, GitLab) over REST: clients, settings and the per-run forge state."""
