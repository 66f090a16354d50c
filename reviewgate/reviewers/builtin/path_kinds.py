"""What a path alone says of a file: vendored, generated, documentation or example code, by the
directories that hold it and its name (compared case-insensitively: a .NET `Docs/` is a `docs/`).
product_code.py weighs this with the repository's tooling; the secrets lens asks it too."""

from __future__ import annotations

from reviewgate.freeze.exclusions import GENERATED_DIRECTORIES, GENERATED_NAME, VENDORED_DIRECTORIES

VENDORED = "vendored code"
GENERATED = "generated code"
DOCUMENTATION = "documentation"
EXAMPLES = "example code"

_DOCUMENTATION_DIRECTORIES = frozenset({"docs", "doc", "documentation", "_docs"})
# Files written for people to read, wherever they are.
_DOCUMENTATION_SUFFIXES = (".md", ".mdx", ".markdown", ".rst", ".txt", ".adoc", ".asciidoc")
_EXAMPLE_DIRECTORIES = frozenset({"examples", "example", "samples", "sample", "demo", "demos", "docs_src"})
# A directory named for examples of something (`typing-examples/`, `code_samples/`).
_EXAMPLE_SUFFIXES = ("-examples", "_examples", "-samples", "_samples")
# Where javadoc and similar tools write their HTML, scripts and style sheets.
_API_DOCUMENTATION_OUTPUT = frozenset({"javadoc", "javadocs", "apidocs", "api-docs"})


def _directories(path: str) -> list[str]:
    return [part.lower() for part in path.split("/")[:-1]]


def by_path(path: str) -> str | None:
    directories = _directories(path)
    if any(part in VENDORED_DIRECTORIES for part in directories):
        return VENDORED
    if any(part in GENERATED_DIRECTORIES or part in _API_DOCUMENTATION_OUTPUT for part in directories):
        return GENERATED
    if GENERATED_NAME.search(path.rpartition("/")[2]):
        return GENERATED
    if any(part in _EXAMPLE_DIRECTORIES or part.endswith(_EXAMPLE_SUFFIXES) for part in directories):
        return EXAMPLES
    if any(part in _DOCUMENTATION_DIRECTORIES for part in directories):
        return DOCUMENTATION
    return None


def is_example_code(path: str) -> bool:
    """Code under an examples directory (`examples/`, `samples/`, `typing-examples/`) that no
    vendored or generated directory holds: it shows how to use the product, and is never deployed."""
    return by_path(path) == EXAMPLES


def is_documentation(path: str) -> bool:
    """A file written for people to read: a documentation file, or any file in a documentation
    directory (`docs/`, a .NET `Docs/`)."""
    return path.lower().endswith(_DOCUMENTATION_SUFFIXES) or any(
        part in _DOCUMENTATION_DIRECTORIES for part in _directories(path))
