"""The diff parser on what breaks tools: very long lines, bytes that are not UTF-8, CRLF."""

from __future__ import annotations

import hashlib

from reviewgate.freeze.diff import LONG_LINE_CHARS, FileChange
from reviewgate.freeze.diff_files import parse_diff
from reviewgate.freeze.freeze import canonical_patch_hash


def patch_with(line: bytes) -> bytes:
    return (
        b"diff --git a/f.js b/f.js\nindex 1111111..2222222 100644\n--- a/f.js\n+++ b/f.js\n"
        b"@@ -1,1 +1,1 @@\n-old\n+" + line + b"\n"
    )


def test_a_very_long_line_is_cut_with_its_length_and_digest() -> None:
    line = b"x" * (LONG_LINE_CHARS * 3)
    (change,) = parse_diff(patch_with(line))
    text = change.added_lines()[1]
    assert len(text) < LONG_LINE_CHARS + 80
    assert f"[line cut: {len(line)} bytes, sha256 {hashlib.sha256(line).hexdigest()[:16]}]" in text


def test_two_long_lines_differing_only_at_the_end_hash_differently() -> None:
    first = parse_diff(patch_with(b"y" * (LONG_LINE_CHARS * 2) + b"A"))
    second = parse_diff(patch_with(b"y" * (LONG_LINE_CHARS * 2) + b"B"))
    assert canonical_patch_hash(first) != canonical_patch_hash(second)


def test_bytes_that_are_not_utf8_become_replacement_characters() -> None:
    (change,) = parse_diff(patch_with(b"caf\xe9 \xff\xfe crlf\r"))
    assert change.added_lines() == {1: "caf\ufffd \ufffd\ufffd crlf\r"}


def test_a_long_line_cut_inside_a_multibyte_character_stays_valid_text() -> None:
    line = "é".encode() * LONG_LINE_CHARS
    (change,) = parse_diff(patch_with(line))
    text = change.added_lines()[1]
    assert "\ufffd" not in text and text.startswith("é" * (LONG_LINE_CHARS // 2))


def test_a_marker_only_in_the_hunks_text_may_be_added_and_one_absent_is_not() -> None:
    (change,) = parse_diff(patch_with(b"x = 1  # reviewgate: ignore[security] fixture"))
    assert change.may_add(b"reviewgate:")
    assert not change.may_add(b"noqa")
    # Built from parsed hunks, without git's text: the added lines themselves are read.
    rebuilt = FileChange(change.path, change.old_path, change.status, hunks=change.hunks)
    assert rebuilt.may_add(b"reviewgate:") and not rebuilt.may_add(b"old")
    assert change.may_add(b"old")  # a removed line's text: a superset, never a miss
