"""Which lines of a Python file are code and which are prose (code_names.py), and the window a
use is shown with: read from real source text with `tokenize`."""

from __future__ import annotations

from reviewgate.reviewers.model.code_names import read_python

SOURCE = '''def fail(value):
    """Raise for `value`.

    Never returns.
    """
    # the message names the value
    raise ValueError(
        "bad value"
    )  # closes the call
"""A bare string between statements."""

MESSAGE = f"{fail}"
'''


def test_docstrings_comments_and_bare_strings_are_prose_and_a_strings_argument_is_code() -> None:
    reading = read_python(SOURCE)
    assert reading is not None
    assert reading.prose == {2, 3, 4, 5, 6, 10}
    assert reading.code == {1, 7, 8, 9, 12}  # line 8 is the call's argument; 9 has code and a comment
    assert reading.names["fail"] == {1, 12}  # the f-string's field is code, the docstring's mention not


def test_a_window_is_trimmed_only_where_prose_stands_at_its_edge() -> None:
    reading = read_python(SOURCE)
    assert reading is not None
    assert reading.code_window(5, 9, 7) == (7, 9)  # docstring's end and a comment above: left out
    assert reading.code_window(7, 11, 9) == (7, 9)  # the bare string and the blank line after it
    assert reading.code_window(6, 8, 7) == (7, 8)
    assert reading.code_window(11, 12, 12) == (11, 12)  # a blank line alone is kept, as found
    assert reading.code_window(1, 7, 7) == (1, 7)  # prose between two lines of code is kept


def test_text_that_does_not_tokenize_is_not_read() -> None:
    assert read_python('def broken(:\n    """never closed\n') is None
