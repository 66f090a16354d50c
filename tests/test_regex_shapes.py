"""The regular expression shapes that backtrack exponentially (lenses/regex_shapes.py): a repeated
group one repeated character in it can fill, or a repeated alternation of overlapping characters,
beside the unambiguous look-alikes."""

from __future__ import annotations

import pytest

from reviewgate.reviewers.builtin.lenses.regex_shapes import exponential_shape


@pytest.mark.parametrize(
    ("pattern", "ignore_case", "shape"),
    [
        (r"^(\p{Extended_Pictographic}|\p{Emoji_Component})+$", False, r"(\p{Extended_Pictographic}|\p{Emoji_Component})+"),
        (r"^([A-Z0-9_+-]+\.?)*[A-Z0-9_+-]@([A-Z0-9][A-Z0-9\-]*\.)+[A-Z]{2,}$", True, r"([A-Z0-9_+-]+\.?)*"),
        (r"^(a+)+$", False, "(a+)+"),
        (r"^(\s*\w+\s*,?)*$", False, r"(\s*\w+\s*,?)*"),
        (r"^(\w|\d)+$", False, r"(\w|\d)+"),
        (r"^(.*a)*$", False, "(.*a)*"),
        (r"^(.|\s)*x$", False, r"(.|\s)*"),
        (r"\((?:[^)(]+|\([^)(]*\))*\)", False, r"(?:[^)(]+|\([^)(]*\))*"),
        # Beside the look-alikes below: a lookahead that lets the run's own character follow, a word
        # boundary before a run that also matches a non-word character.
        (r"^(a+(?!b))+$", False, "(a+(?!b))+"),
        (r"^(\b[a-z.]+)+$", False, r"(\b[a-z.]+)+"),
    ],
)
def test_an_ambiguous_repeated_group_is_found(pattern: str, ignore_case: bool, shape: str) -> None:
    assert exponential_shape(pattern, ignore_case) == shape


@pytest.mark.parametrize(
    "pattern",
    [
        r"^[\p{Extended_Pictographic}\p{Emoji_Component}]+$",  # one character class
        r"^(?!\.)(?!.*\.\.)([A-Z0-9_+-\.]*)[A-Z0-9_+-]@([A-Z0-9][A-Z0-9\-]*\.)+[A-Z]{2,}$",
        r"^(\w+\.)*\w+$",  # a separator the repeated part cannot match
        r"^\w+(\s*,\s*\w+)*$",
        r"^(a|b)+$",  # disjoint characters
        r"^(\p{L}|\p{N})+$",  # disjoint general categories
        r"^(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*$",  # bounded counts
        r"(a+)+",  # nothing after the group can fail
        r"^(a++)+$",  # possessive
        r"^(?>a+)+$",  # atomic
        r"^([^\"]+\")*$",
        r"for key '?((.|\s)*?)'?$",  # the group reaches the end of any text: nothing after it can fail
        r"(unclosed",  # unreadable: not judged
        # A run a lookahead keeps whole: Prism 1.30.0 `prism-css.js:12`, `prism-stan.js:37`; markdown 3.11.4
        # `blockprocessors.py:470` (whole-tree scans, 2026-12-07).
        r"(?:[^()\s]|\s+(?![\s)])|\((?:[^()]|\([^()]*\))*\))+\)",
        r"(?:\S|\s+(?!\s))*?;",
        r"(?:^|\n)(?P<level>#{1,6})(?P<header>(?:\\.|[^\\#]|#+(?=[^#\n]))*?)#*(?:\n|$)",
        # A turn that starts at a word boundary, over a run of word characters: Prism `prism-php.js:40`,
        # `prism-antlr4.js:34`.
        r"(?:\\?\b[a-z_]\w*)+(?=\s*\()",
        r"^(\b\w+\s?)*$",
    ],
)
def test_an_unambiguous_pattern_is_not(pattern: str) -> None:
    assert exponential_shape(pattern) == ""
