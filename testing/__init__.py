"""Test helpers shared by the suite: real git repositories, the CLI in a subprocess."""
