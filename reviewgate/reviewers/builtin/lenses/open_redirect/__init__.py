"""Open redirect: a redirect whose target the request decides (lens.py), read per family of languages."""
