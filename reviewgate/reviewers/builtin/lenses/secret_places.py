"""Where a key-shaped value sits, for the secrets lens (secrets.py): documentation, a comment,
test or example code, an example key of a JSON or YAML file, test-support code. A generic value
there is an example for people to read, not a credential that runs: minor, not a blocker."""

from __future__ import annotations

import re
from pathlib import PurePosixPath

from reviewgate.context import ReviewRequest
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.comments import comment_on
from reviewgate.reviewers.builtin.file_kinds import is_test_file, is_test_input
from reviewgate.reviewers.builtin.language_table import language_of
from reviewgate.reviewers.builtin.path_kinds import is_documentation, is_example_code


def example_or_test_code(request: ReviewRequest, path: str) -> str | None:
    """A test file, a test directory the repository's own test runner names (pytest's `testpaths`:
    celery's `t/unit/`), or example code (path_kinds: `examples/`, `samples/`): what it holds
    is never deployed."""
    if is_test_file(path) or is_test_input(request, path):
        return "a test file"
    if is_example_code(path):
        return "example code"
    return None


def example_context(request: ReviewRequest, path: str, number: int, line: str) -> str | None:
    """Where a generic key-shaped value is most likely an example: documentation, a comment,
    a test file, example code. None in code that runs."""
    if is_documentation(path):
        return "a documentation file"
    place = example_or_test_code(request, path)
    if place is not None:
        return place
    comment = comment_on(number, line, language_of(path))
    if comment is not None and comment.whole_line:
        return "a comment"
    return _under_an_example_key(request, path, number)


# Data files whose nesting their indentation shows, and the keys that hold examples in them: an
# OpenAPI document's `example:` and `examples:`, botocore's `examples-1.json` (`"examples": {…}`).
_NESTED_DATA_SUFFIXES = frozenset({".json", ".yaml", ".yml"})
_EXAMPLE_KEY = LazyPattern(r"""^\s*-?\s*["']?(?:examples?|x-examples?)["']?\s*:""", re.IGNORECASE)


def _under_an_example_key(request: ReviewRequest, path: str, number: int) -> str | None:
    """The place ("an example in a data file") when a JSON or YAML value sits inside an `example` or
    `examples` key: the keys above it with less indentation, each enclosing the next."""
    if PurePosixPath(path).suffix.lower() not in _NESTED_DATA_SUFFIXES:
        return None
    text = request.head.read_text(path)
    if text is None:
        return None
    lines = text.splitlines()
    if not 0 < number <= len(lines):
        return None
    indent = len(lines[number - 1]) - len(lines[number - 1].lstrip())
    for above in range(number - 2, -1, -1):  # up to the top: botocore's examples run 1,500 lines
        line = lines[above]
        stripped = line.lstrip()
        if not stripped or stripped.startswith("#"):
            continue
        depth = len(line) - len(stripped)
        if depth >= indent:
            continue
        if _EXAMPLE_KEY.match(line):
            return "an example in a data file (under its `example` or `examples` key)"
        indent = depth
        if indent == 0:
            break
    return None


def test_support(request: ReviewRequest, path: str) -> str | None:
    # Imported where a private key outside the test paths is found, rarely: not at start-up.
    from reviewgate.reviewers.builtin.lenses.keys_for_tests import test_support_directory

    directory = test_support_directory(request, path)
    return None if directory is None else f"test-support code only test files import (`{directory}`)"
