"""The DRY lens on copies its plain matching missed: statements put in another order, a whole
definition under 50 normalized characters dense with logic (a decision and calls), and a function
around a table of the same data. And what it still leaves alone: a reordered block whose names
follow no renaming, a short definition of plain assignments and returns copied whole, a short
fragment, a table alone."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.findings import Finding
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.duplication import reordering
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import normalized_lines
from reviewgate.reviewers.builtin.lenses.duplication.substance import substance
from testing.changes import DRY_JOBS as JOBS
from testing.lenses import review_change

_ROWS = '''\


def merge_rows(self, rows, columns):
    engine = self.engine
    columns = sorted(columns.items())
    for row in rows:
        for index, (name, cast) in columns:
            value = row.get(name)
            if value is not None:
                value = cast(value, engine)
            row[index] = value
        yield row
'''
# Two independent steps swapped, every bound name renamed.
_ROWS_REORDERED = '''\


def combine_records(self, records, fields):
    fields = sorted(fields.items())
    backend = self.engine
    for record in records:
        for position, (label, convert) in fields:
            item = record.get(label)
            if item is not None:
                item = convert(item, backend)
            record[position] = item
        yield record
'''
# The same steps swapped, the names following no one renaming.
_ROWS_SHUFFLED = '''\


def combine_records(self, records, fields):
    fields = sorted(records.items())
    backend = self.engine
    for record in fields:
        for position, (label, convert) in records:
            item = backend.get(position)
            if label is not None:
                item = record(convert, fields)
            convert[item] = label
        yield backend
'''

_SAVE = '''\


def save_related(self):
    """Save the related objects the form edited."""
    data = self.cleaned_data
    fields = self.meta.fields
    exclude = self.meta.exclude
    options = self.instance.options
    for field in chain(options.many, options.private):
        if not hasattr(field, "save_form_data"):
            continue
        if fields and field.name not in fields:
            continue
        if exclude and field.name in exclude:
            continue
        if field.name in data:
            field.save_form_data(self.instance, data[field.name])
'''
# Two lines of one shape swapped: in order, `flds` would stand for `exclude`.
_SAVE_REORDERED = '''\


def store_links(self):
    """Save the related objects the form edited."""
    clean = self.cleaned_data
    excld = self.meta.exclude
    flds = self.meta.fields
    opts = self.instance.options
    for item in chain(opts.many, opts.private):
        if not hasattr(item, "save_form_data"):
            continue
        if flds and item.name not in flds:
            continue
        if excld and item.name in excld:
            continue
        if item.name in clean:
            item.save_form_data(self.instance, clean[item.name])
'''

# Each followed by a definition, as most are, so windows of 40 normalized characters reach past
# it into the code after it: the whole definition is 38.
_SLASHES = '''\


def escape_slashes(url):
    """
    A second leading slash would make a browser read the path as a host.
    """
    if url.startswith("//"):
        url = "/%2F{}".format(url.removeprefix("//"))
    return url


def other(count):
    return count + 1
'''
_SLASHES_COPY = '''\


def quote_path(link):
    """
    A second leading slash would make a browser read the path as a host.
    """
    if link.startswith("//"):
        link = "/%2F{}".format(link.removeprefix("//"))
    return link


def more(number):
    return number * 2
'''
# A definition as short, of as many lines, with no decision, call or arithmetic: plain assignments
# and a return (36 normalized characters).
_PLAIN = '''\


def describe(item):
    """
    The parts of an item a list shows.
    """
    title = item.title
    item.summary = item.subtitle
    return title, item.summary


def other(count):
    return count + 1
'''
_PLAIN_COPY = '''\


def outline(entry):
    """
    The parts of an item a list shows.
    """
    heading = entry.title
    entry.summary = entry.subtitle
    return heading, entry.summary


def more(number):
    return number * 2
'''
# The same lines inside a longer function: a fragment that short is an idiom.
_SLASHES_FRAGMENT = '''\


def handle(request, link):
    request.seen = True
    if link.startswith("//"):
        link = "/%2F{}".format(link.removeprefix("//"))
    return link


def more(number):
    return number * 2
'''

_ENTRIES = "".join(f'        "{letter}": "{2 + index // 3}",\n' for index, letter in enumerate("abcdefghijkl"))
_KEYPAD = f'''\


def to_digits(phone):
    """Turn the letters of a phone number into its digits."""
    keypad = {{
{_ENTRIES}    }}
    return "".join(keypad.get(char, char) for char in phone.lower())
'''
_KEYPAD_COPY = f'''\


def dial_code(text):
    """Turn the letters of a phone number into its digits."""
    table = {{
{_ENTRIES}    }}
    return "".join(table.get(entry, entry) for entry in text.lower())
'''
# The table alone under a new name: its rows are data, and nothing else repeats.
_KEYPAD_ALONE = f'''\


LETTERS = {{
{_ENTRIES.replace("        ", "    ")}}}
'''


@pytest.fixture(params=["compiled", "python"])
def growth_path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """The growth over reordered lines compiled (`_runs.reordered_growth`) and in Python: the same
    findings either way."""
    if request.param == "python":
        monkeypatch.setattr(reordering, "_compiled_growth", None)
    elif reordering._compiled_growth is None:
        pytest.skip("built only where a C compiler is at hand (.ci/run checks that it was)")


def _duplicates(tmp_path: Path, existing: str, added: str) -> list[Finding]:
    findings = review_change(tmp_path, {"app/existing.py": existing, "app/jobs.py": JOBS},
                             {"app/jobs.py": JOBS + added})
    return [item for item in findings if item.rule.startswith("reuse/")]


def _found(findings: list[Finding]) -> list[tuple[str | None, int | None, int | None]]:
    return [(item.path, item.line, item.end_line) for item in findings if "app/existing.py" in item.title]


@pytest.mark.usefixtures("growth_path")
def test_a_copy_with_two_independent_statements_swapped_is_one_finding_over_the_whole_copy(tmp_path: Path) -> None:
    # Lines 8-17 of app/jobs.py: the definition, from its `def`.
    assert _found(_duplicates(tmp_path, _ROWS, _ROWS_REORDERED)) == [("app/jobs.py", 8, 17)]


@pytest.mark.usefixtures("growth_path")
def test_a_reordered_block_whose_names_follow_no_renaming_is_not_a_copy(tmp_path: Path) -> None:
    assert _duplicates(tmp_path, _ROWS, _ROWS_SHUFFLED) == []


@pytest.mark.usefixtures("growth_path")
def test_two_lines_of_one_shape_swapped_are_paired_by_their_names(tmp_path: Path) -> None:
    assert _found(_duplicates(tmp_path, _SAVE, _SAVE_REORDERED)) == [("app/jobs.py", 8, 22)]


def test_a_short_definition_dense_with_logic_is_a_copy_whole_and_not_as_a_fragment(tmp_path: Path) -> None:
    # 38 normalized characters: a decision and three calls.
    assert _found(_duplicates(tmp_path / "whole", _SLASHES, _SLASHES_COPY)) == [("app/jobs.py", 8, 14)]
    assert _duplicates(tmp_path / "fragment", _SLASHES, _SLASHES_FRAGMENT) == []


def test_a_short_definition_of_plain_assignments_is_no_copy_whole(tmp_path: Path) -> None:
    assert _duplicates(tmp_path, _PLAIN, _PLAIN_COPY) == []


def test_a_function_around_the_same_table_is_a_copy_and_the_table_alone_is_not(tmp_path: Path) -> None:
    assert _found(_duplicates(tmp_path / "function", _KEYPAD, _KEYPAD_COPY)) == [("app/jobs.py", 8, 24)]
    assert _duplicates(tmp_path / "alone", _KEYPAD, _KEYPAD_ALONE) == []


def _substance_of(source: str) -> int:
    return substance("".join(normalized_lines(source, Language.PYTHON)))


def test_the_substance_of_code_counts_decisions_calls_and_arithmetic_not_its_signature() -> None:
    # `if`, `and`, `ok(`, `g(`, `*`, `+`; not the comparison, nor the definition's own name.
    assert _substance_of("def f(a):\n    if a.ok() and a.n > 0:\n        return a.n * 2 + g(a)\n    return 0\n") == 6
    # Star-arguments, an annotation's arrow and a negative number are no arithmetic.
    assert _substance_of("def f(*args, **kwargs) -> int:\n    total = -1\n    return total\n") == 0
