"""Which files the DRY search compares, on both sides: product code a person keeps in step by hand.
Test files are left on both sides: test helpers are meant to look alike, and a copy in a test is
not two places to fix."""

from __future__ import annotations

from reviewgate.context import ReviewRequest
from reviewgate.reviewers.builtin.file_kinds import (
    SUPPORT_DIRECTORIES,
    is_stub_file,
    is_test_file,
    is_test_input,
    is_translation_file,
)
from reviewgate.reviewers.builtin.language_table import CODE_LANGUAGES, language_of

# Files larger than this are generated or vendored, not code anyone keeps in step by hand.
MAX_FILE_BYTES = 1_000_000
_NOT_INDEXED = frozenset({"node_modules", "vendor", "third_party", "dist", "build", ".git", "site-packages"})
# Examples and benchmarks are standalone by design (each readable and runnable alone), so their
# copies are not two places to fix, and nothing calls into them.
# Scripts are support code too, but one script copying another's helper is still two places to fix.
_STANDALONE = SUPPORT_DIRECTORIES - {"scripts"}


def is_candidate(path: str) -> bool:
    parts = path.split("/")  # paths from git: no empty or `.` parts to normalize
    return (
        language_of(path) in CODE_LANGUAGES
        and not is_test_file(path)
        and not is_stub_file(path)
        and ".min." not in parts[-1]
        and not any(part in _NOT_INDEXED or part in _STANDALONE for part in parts[:-1])
        and not is_translation_file(path)
    )


def is_product_candidate(request: ReviewRequest, path: str) -> bool:
    """A candidate the repository's tooling does not run or type-check as a test: type-checker
    example files repeat each other (one copy per checker) by design."""
    return is_candidate(path) and not is_test_input(request, path)
