"""Swallowed failures: handlers that make a real failure look like success."""
