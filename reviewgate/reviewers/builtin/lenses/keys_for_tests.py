"""Whether a private key outside the test paths sits in test-support code: the nearest directory
above it that holds Python or JS/TS code (a test server with its certificates) is imported by test
files only, and by at least one. Such a key is generated for the tests, as a key in a test file is;
a key in a package that code outside the tests imports is not."""

from __future__ import annotations

import re

from reviewgate.context import ReviewRequest
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language, language_of

_IMPORTING_LANGUAGES = frozenset({Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT})
# Past this many code files outside the directory, its importers are not read (a whole monorepo).
_MAX_FILES_READ = 5000
# Files larger than this are not read for their imports (bundles, generated code).
_MAX_FILE_BYTES = 200_000


def _import_pattern(name: str) -> re.Pattern[str]:
    """An import of the directory as a module: Python's `from NAME…`/`import NAME`, JS's
    `require('…/NAME…')` and `from '…/NAME…'`."""
    escaped = re.escape(name)
    return re.compile(
        rf"^\s*(?:from|import)\s+{escaped}\b"
        rf"|(?:require\(\s*|\bfrom\s+|\bimport\s+)[\"'](?:[^\"'\n]*/)?{escaped}(?:[/\"'.])",
        re.MULTILINE,
    )


def _code_directory(key_path: str, files: list[str]) -> str | None:
    """The nearest directory above the key that holds code of a language that imports."""
    parts = key_path.split("/")[:-1]
    for depth in range(len(parts), 0, -1):
        directory = "/".join(parts[:depth]) + "/"
        if any(path.startswith(directory) and language_of(path) in _IMPORTING_LANGUAGES for path in files):
            return directory
    return None


def test_support_directory(request: ReviewRequest, key_path: str) -> str | None:
    """The directory of test-support code holding the key (`dummyserver/`), or None: no code
    directory above it, none importing it, or one importer that is not a test file."""
    files = request.head.list_files()
    directory = _code_directory(key_path, files)
    if directory is None:
        return None
    outside = [
        path for path in files
        if not path.startswith(directory) and language_of(path) in _IMPORTING_LANGUAGES
    ]
    if len(outside) > _MAX_FILES_READ:
        return None
    imports = _import_pattern(directory.rstrip("/").rsplit("/", 1)[-1])
    contents = request.head.read_many(outside, max_bytes=_MAX_FILE_BYTES)
    importers = [path for path, data in contents.items() if imports.search(data.decode("utf-8", "replace"))]
    return directory if importers and all(is_test_file(path) for path in importers) else None
