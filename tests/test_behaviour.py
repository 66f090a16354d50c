"""The behaviour analysis behind the tests lens: Python by `ast`, other languages by tree-sitter,
both sides compared against the merge base."""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Any

import pytest

from reviewgate.findings import Finding, Severity
from reviewgate.freeze.diff import ChangeStatus, FileChange
from reviewgate.freeze.git import SnapshotReader, TreeReader, prefetch_sides
from reviewgate.gate import blocks
from reviewgate.reviewers.builtin.function_comparison import EvidenceKind, compare
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.languages.python_shapes import python_shapes
from reviewgate.reviewers.builtin.languages.shapes import Shapes
from reviewgate.reviewers.builtin.moved_functions import MovedCode
from reviewgate.reviewers.builtin.side_shapes import shapes_of
from testing.lenses import review_change
from testing.repo import make_repo
from tests.test_corpus import _in_scope, load_cases, review_case


def _python(text: str) -> Shapes:
    return python_shapes(ast.parse(text), text)


def _tests_findings(findings: list[Finding]) -> list[Finding]:
    return [item for item in findings if item.rule.startswith("tests/")]


# --- Python -----------------------------------------------------------------------------------


def test_python_body_ignores_what_does_not_change_behaviour() -> None:
    before = _python(
        "def total(items, rate=2):\n"
        "    result = 0\n"
        "    for item in items:\n"
        "        if item.price:\n"
        "            result += item.price * rate\n"
        "    raise ValueError('no items') if not result else None\n"
        "    return result\n"
    )
    after = _python(
        "def total(items: list[Item], rate: int = 2) -> int:\n"
        '    """Sum of the priced items, times the rate."""\n'
        "    if TYPE_CHECKING:\n"
        "        reveal_type(items)\n"
        "    amount: int = 0  # running sum\n"
        "    for entry in items:\n"
        "        if entry.price:\n"
        "            amount += (\n"
        "                entry.price * rate\n"
        "            )\n"
        "    raise ValueError('the list holds no priced item') if not amount else None\n"
        "    return amount\n"
    )
    assert after["total"].body == before["total"].body
    assert (after["total"].branches, before["total"].branches) == (3, 3)


def test_python_body_sees_behaviour() -> None:
    base = _python("def f(x, limit=3):\n    return min(x, limit)\n")["f"]
    assert _python("def f(x, limit=3):\n    return max(x, limit)\n")["f"].body != base.body
    assert _python("def f(x, limit=4):\n    return min(x, limit)\n")["f"].defaults == (("limit", "4"),)
    # A global name is not a local one: calling another function is a change.
    assert _python("def f(x, limit=3):\n    return clamp(x, limit)\n")["f"].body != base.body


def test_python_branches_count_each_decision() -> None:
    shape = _python(
        "def f(a, b):\n"
        "    if a and b or a:\n"  # one if: boolean operators are no branches
        "        pass\n"
        "    elif b:\n"  # a nested if
        "        pass\n"
        "    while a:\n"
        "        break\n"
        "    try:\n"
        "        pass\n"
        "    except KeyError:\n"
        "        pass\n"
        "    except ValueError:\n"
        "        pass\n"
        "    match a:\n"
        "        case 1:\n"
        "            pass\n"
        "        case _:\n"
        "            pass\n"
        "    return [x for x in b if x] if a else None\n"  # conditional, loop, filter
    )["f"]
    assert shape.branches == 1 + 1 + 1 + 2 + 2 + 3


def test_python_shapes_skip_type_checking_and_main_guard_and_name_nested_functions() -> None:
    shapes = _python(
        "from typing import TYPE_CHECKING\n"
        "if TYPE_CHECKING:\n"
        "    def hidden(): ...\n"
        "class Client:\n"
        "    def get(self):\n"
        "        def _retry():\n"
        "            return 1\n"
        "        return _retry()\n"
        "    @property\n"
        "    def name(self):\n"
        "        return self._name\n"
        "    @name.setter\n"
        "    def name(self, value):\n"
        "        self._name = value\n"
        "    def _private(self):\n"
        "        pass\n"
        'if __name__ == "__main__":\n'
        "    def main(): ...\n"
    )
    assert sorted(shapes) == ["Client._private", "Client.get", "Client.get._retry", "Client.name", "Client.name#2"]
    assert shapes["Client.get"].public and not shapes["Client._private"].public
    assert not shapes["Client.get._retry"].public


# --- other languages, by tree-sitter -----------------------------------------------------------


def test_strings_comments_and_regex_literals_hold_no_branches() -> None:
    go = shapes_of(
        "package a\nfunc Run() {\n\tx := `\nif [ -n \"$a\" ]; then\n  echo 'if'\nfi\n`\n\t// if a {\n"
        "\t/* for { */ y := \"if\"\n\tuse(x, y)\n}\n",
        "a.go", Language.GO,
    )
    assert go is not None and go["Run"].branches == 0
    javascript = shapes_of(
        "function f(b, d) {\n  const re = /if\\(x\\) { for/g;\n  const t = `a ${b ? `c ${d}` : 'e'} if`;\n"
        "  return f(a / b / c);\n}\n",
        "a.js", Language.JAVASCRIPT,
    )
    assert javascript is not None and javascript["f"].branches == 1  # the `?` inside `${}` is code


def _other(text: str, path: str) -> Shapes:
    shapes = shapes_of(text, path, Language.OTHER)
    assert shapes is not None
    return shapes


def test_functions_of_other_languages() -> None:
    go = _other(
        "package x\nfunc (r *Router[T]) Handle(p string) (int, error) {\n\tif p == \"\" || r == nil {\n"
        "\t\treturn 0, nil\n\t}\n\tgo func() { if true {} }()\n\treturn 1, nil\n}\n"
        "func helper() interface{} { return nil }\n",
        "x.go",
    )
    assert sorted(go) == ["Router.Handle", "helper"]
    assert (go["Router.Handle"].line, go["Router.Handle"].branches, go["Router.Handle"].public) == (2, 2, True)
    assert not go["helper"].public
    typescript = _other(
        "export class Cart {\n  total(a: number): Map<string, number> {\n    return a ? 1 : 2;\n  }\n"
        "  private clear() { this.items = []; }\n}\n"
        "export const load = async (id: string) => {\n  if (id) { return 1; }\n};\n"
        "const table = { pick: (x) => { return x ?? 0; } };\n"
        "items.forEach((item) => { if (item) { use(item); } });\n"
        "function outer() { function inner() { while (true) {} } }\n",
        "cart.ts",
    )
    # A nested function is named under the one around it, as in Python.
    assert sorted(typescript) == ["Cart.clear", "Cart.total", "load", "outer", "outer.inner", "pick"]
    assert typescript["Cart.total"].branches == 1 and not typescript["Cart.clear"].public
    assert typescript["outer"].branches == 0 and typescript["outer.inner"].branches == 1
    java = _other(
        "public class Limits {\n  public static int clamp(int v) throws IOException {\n"
        "    new Thread(r) { };\n    synchronized (this) { }\n    return v;\n  }\n}\n",
        "Limits.java",
    )
    assert sorted(java) == ["Limits.clamp"]
    kotlin = _other("class A {\n  fun size(x: Int): Int {\n    return x\n  }\n}\nfun main() {\n  run(x) {\n  }\n}\n", "A.kt")
    assert sorted(kotlin) == ["A.size", "main"]


def test_unbalanced_source_gives_shapes_or_nothing_never_an_error() -> None:
    assert shapes_of("def f(:\n", "a.py", Language.PYTHON) is None
    for text in ("func (", "function f( {", "}}}{{{", "`unterminated ${", "x = /[/"):
        shapes = shapes_of(text, "a.js", Language.JAVASCRIPT)
        assert shapes is None or isinstance(shapes, dict)


# --- comparing the two sides ------------------------------------------------------------------


def _change(path: str, added: range) -> FileChange:
    lines = "".join(f"+line {number}\n" for number in added)
    patch = f"@@ -0,0 +{added.start},{len(added)} @@\n{lines}".encode()
    return FileChange(path=path, old_path=None, status=ChangeStatus.MODIFIED, raw_hunks=patch)


def test_compare_new_moved_grown_default_and_changed() -> None:
    base = _python(
        "def grow(a):\n    return a\n\n\n"
        "def moved_from_here(a):\n    return a * 2 + 1\n\n\n"
        "def connect(host, timeout=30):\n    return host\n\n\n"
        "def body(a):\n    return a\n"
    )
    head_text = (
        "def grow(a):\n    if a:\n        return 1\n    if not a:\n        return 2\n    return a\n\n\n"
        "def renamed(b):\n    return b * 2 + 1\n\n\n"
        "def connect(host, timeout=5):\n    return host\n\n\n"
        "def body(a):\n    return -a\n\n\n"
        "def _tiny():\n    return 1\n\n\n"
        "def parse(text):\n    if text:\n        return text\n    return None\n"
    )
    head = _python(head_text)
    moved = MovedCode([base["moved_from_here"]])
    found = compare(_change("app.py", range(1, head_text.count("\n") + 1)), base, head, moved)
    summary = {(item.kind, item.name, item.strong) for item in found}
    assert summary == {
        (EvidenceKind.MORE_BRANCHES, "grow", True),
        (EvidenceKind.CHANGED_DEFAULT, "connect", False),
        (EvidenceKind.CHANGED_BODY, "body", False),
        (EvidenceKind.NEW_FUNCTION, "_tiny", False),
        (EvidenceKind.NEW_FUNCTION, "parse", True),
    }
    details = {item.name: item.detail for item in found}
    assert details["grow"] == "branches: 0 → 2 in `grow`"
    assert details["connect"] == "default of `timeout` in `connect`: `30` → `5`"
    assert details["parse"].startswith("`parse` is absent at the merge base")


def test_file_added_everything_is_new_unless_moved() -> None:
    head = _python("def keep(a):\n    return a + 1\n\n\ndef fresh(a):\n    return a - 1\n")
    moved = MovedCode([_python("def old(x):\n    # one more\n    return (x +\n       1)\n")["old"]])
    found = compare(_change("new.py", range(1, 7)), None, head, moved)
    assert [item.name for item in found] == ["fresh"]
    # Without `changed_bodies` (a change not marked as a fix) a changed body is no evidence.
    base = _python("def keep(a):\n    return a\n")
    plain = compare(_change("new.py", range(1, 7)), base, head, MovedCode([]), changed_bodies=False)
    for_fix = compare(_change("new.py", range(1, 7)), base, head, MovedCode([]))
    assert [(item.kind, item.name) for item in plain] == [(EvidenceKind.NEW_FUNCTION, "fresh")]
    assert [(item.kind, item.name) for item in for_fix] == [
        (EvidenceKind.CHANGED_BODY, "keep"), (EvidenceKind.NEW_FUNCTION, "fresh")
    ]


# --- through the builtin reviewer -------------------------------------------------------------


def test_finding_body_names_the_evidence_and_severity_follows_its_strength(tmp_path: Path) -> None:
    base = {"app/a.py": "def f(x):\n    return x\n"}
    strong = review_change(
        tmp_path / "strong", base,
        {"app/a.py": "def f(x):\n    if x is None:\n        return 0\n    if x < 0:\n        return -x\n    return x\n"},
    )
    [finding] = _tests_findings(strong)
    assert (finding.rule, finding.line, finding.severity) == ("tests/missing-tests", 2, Severity.MAJOR)
    assert "`app/a.py:2`: branches: 0 → 2 in `f`" in finding.body
    weak = review_change(tmp_path / "weak", base, {"app/a.py": "def f(x):\n    return 0 if x is None else x\n"})
    [finding] = _tests_findings(weak)
    assert finding.severity is Severity.MINOR and not blocks(finding)


def test_unparsable_base_side_gives_no_evidence(tmp_path: Path) -> None:
    findings = review_change(
        tmp_path, {"app/a.py": "def f(:\n"}, {"app/a.py": "def f(x):\n    if x:\n        return 1\n    return 2\n"}
    )
    assert _tests_findings(findings) == []


def test_fix_evidence_names_the_changed_function(tmp_path: Path) -> None:
    findings = review_change(
        tmp_path,
        {"lib/total.js": "export function total(a, b) {\n  return a + b;\n}\n"},
        {"lib/total.js": "export function total(a, b) {\n  return Math.round((a + b) * 100) / 100;\n}\n"},
        branch_name="fix/rounding",
    )
    [finding] = _tests_findings(findings)
    # A few changed lines in an existing function: a remark, not a block (calibrated on real fixes).
    assert finding.rule == "tests/fix-without-test" and not blocks(finding)
    assert finding.severity.value == "minor" and "Reported as minor" in finding.body
    assert "`lib/total.js:2`: `total` does something different than at the merge base" in finding.body


_BLOCKING_CASES = [case for case in load_cases() if "blocks" in case]


@pytest.mark.parametrize("case", _BLOCKING_CASES, ids=[case["name"] for case in _BLOCKING_CASES])
def test_corpus_cases_block_only_where_they_should(case: dict[str, Any], tmp_path: Path) -> None:
    findings = review_case(case, tmp_path)
    blocking = [item.rule for item in findings if _in_scope(item.rule, case["scope"]) and blocks(item)]
    assert bool(blocking) is case["blocks"], blocking


def test_prefetch_sides_reads_head_and_base_in_one_batch(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"a.py": "old\n", "dir/b.py": "b\n"}, {"a.py": "new\n", "c.py": "c\n"})
    head, base = TreeReader(repo.path, repo.head_sha), TreeReader(repo.path, repo.base_sha)
    prefetch_sides([(head, ["a.py", "c.py", "dir"]), (base, ["a.py", "c.py"])])
    assert head._cache == {"a.py": b"new\n", "c.py": b"c\n", "dir": None}  # a directory is no file
    assert base._cache == {"a.py": b"old\n", "c.py": None}
    assert base.is_directory("dir") and not base.is_directory("a.py") and not base.is_directory("none")
    snapshot = SnapshotReader(repo.path, {"dir/x.md": b"x"})
    prefetch_sides([(snapshot, ["dir/x.md"])])
    assert snapshot.is_directory("dir") and not snapshot.is_directory("di")


def test_new_public_function_is_strong_unless_a_stub_or_a_bare_accessor() -> None:
    head = _python(
        "def divide(a, b):\n    return a / b\n\n\n"
        "@overload\ndef convert(x: int) -> int: ...\n\n\n"
        "def name(self):\n    return self._name\n\n\n"
        "def abstract(self):\n    raise NotImplementedError\n\n\n"
        "def _helper(a):\n    return a * 2\n"
    )
    found = compare(_change("lib.py", range(1, 19)), None, head, MovedCode([]))
    # An `@overload` stub is no function at all: a signature for the type checker.
    assert {item.name: item.strong for item in found} == {
        "divide": True, "name": False, "abstract": False, "_helper": False
    }
    go = _other(
        "package x\nfunc (u *User) Name() string { return u.name }\nfunc Half(v int) int { return v / 2 }\n", "x.go"
    )
    assert (go["User.Name"].trivial, go["Half"].trivial) == (True, False)


def test_shapes_let_go_of_their_syntax_tree_and_still_answer_everything() -> None:
    """A change's shapes are held until the whole change is compared: they must not keep their
    trees alive (at +300k lines those were most of the review's memory), yet a body or a private
    function's defaults asked later are what the tree gave."""
    import gc
    import weakref

    from reviewgate.reviewers.builtin.python_parsing import forget_parsed_trees, parse_python

    text = (
        "def load(path, mode='r', *, retries=3):\n    if not path:\n        return None\n    return open(path, mode)\n\n"
        "def _helper(value=1):\n    total = value + 1\n    return total\n"
    )
    tree = parse_python(text, "app.py")  # the tree the lenses share, which shapes_of reads
    assert tree is not None
    held = weakref.ref(tree)
    del tree
    shapes = shapes_of(text, "app.py", Language.PYTHON)
    forget_parsed_trees()
    gc.collect()
    assert held() is None, "the shapes keep their syntax tree alive"
    assert shapes is not None
    fresh = _python(text)
    for name, shape in shapes.items():
        assert (shape.branches, shape.statements, shape.trivial) == (fresh[name].branches, fresh[name].statements,
                                                                    fresh[name].trivial)
        assert shape.defaults == fresh[name].defaults
        assert shape.body == fresh[name].body
    from reviewgate.reviewers.builtin.languages.tree_shapes import shapes_of_file

    javascript = "function _load(path, mode = 'r') {\n  if (!path) { return null; }\n  return open(path, mode);\n}\n"
    settled, tree_fresh = _other(javascript, "app.js"), shapes_of_file(javascript, "app.js")
    assert tree_fresh is not None
    assert settled["_load"].body == tree_fresh["_load"].body != ""
    assert settled["_load"].defaults == tree_fresh["_load"].defaults != ()
    assert settled["_load"].trivial is tree_fresh["_load"].trivial is False


def test_a_missing_tests_finding_spans_the_code_its_evidence_is_about(tmp_path: Path) -> None:
    # All of a new function is untested: a later fix anywhere in it lands on the finding's lines.
    new = review_change(tmp_path / "new", {"app/a.py": "X = 1\n"},
                        {"app/a.py": "X = 1\n\n\ndef rate(x):\n    if x is None:\n        return 0\n    return x * 2\n"})
    [finding] = _tests_findings(new)
    assert (finding.line, finding.end_line) == (4, 7)
    # More branches in a function the base had: the finding spans its added lines, first to last.
    grown = review_change(
        tmp_path / "grown",
        {"app/a.py": "def rate(x):\n    return x * 2\n"},
        {"app/a.py": "def rate(x):\n    if x is None:\n        return 0\n    if x < 0:\n        return -1\n    return x * 2\n"},
    )
    [finding] = _tests_findings(grown)
    assert (finding.line, finding.end_line) == (2, 5)
