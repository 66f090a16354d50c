"""The verify: stand the app up from `.prepcook/scripts.toml`, run its tests, always tear down."""
