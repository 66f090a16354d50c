"""The renamed-copies benchmark's second generator (`--generator habits`): copies another
developer would make, still Python, every bound name changed, only independent statements swapped."""

from __future__ import annotations

import ast
import random

from benchmarks.renamed_copies import Definition, _renamed, _swapped_statements

_SOURCE = '''\
def push_state(self, template, isolated_context=True):
    initial = self.template
    self.template = template
    total_count = len(template.nodes)
    firstName = "first item here"
    if isolated_context:
        self.push(total_count * 10, firstName)
    return initial
'''


def _copy(seed: int) -> str:
    lines = _SOURCE.splitlines(keepends=True)
    return _renamed(lines, Definition("app.py", 1, len(lines), "push_state"), random.Random(seed), "habits")


def test_every_copy_is_python_with_every_bound_name_changed() -> None:
    bound = {"push_state", "template", "isolated_context", "initial", "total_count", "firstName"}
    for seed in range(40):
        copy = _copy(seed)
        names = {node.id for node in ast.walk(ast.parse(copy)) if isinstance(node, ast.Name)}
        names |= {node.arg for node in ast.walk(ast.parse(copy)) if isinstance(node, ast.arg)}
        assert not (bound - {"push_state"}) & names, copy
        assert "def push_state(" not in copy and "self.template = " in copy


def test_only_assignments_to_names_that_do_not_read_each_other_are_swapped() -> None:
    """`initial = self.template` reads what `self.template = template` stores: never swapped; the
    two assignments after them are independent and are the only pair that can be."""
    swapped = {_swapped_statements(_SOURCE, random.Random(seed)) for seed in range(20)}
    lines = _SOURCE.splitlines(keepends=True)
    lines[3], lines[4] = lines[4], lines[3]
    assert swapped == {"".join(lines)}


def test_numbers_and_messages_change_and_the_docstring_stays() -> None:
    copy = _copy(1)
    assert "* 20" in copy and '"Note: first item here"' in copy
    documented = 'def load(path):\n    """Read the file at path."""\n    return open(path).read()\n'
    lines = documented.splitlines(keepends=True)
    assert '"""Read the file at path."""' in _renamed(lines, Definition("a.py", 1, 3, "load"), random.Random(1), "habits")
