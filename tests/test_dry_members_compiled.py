"""The DRY lens's pass over a changed file's definitions (`rules._members`, which the boilerplate
families are built from), compiled (`_normalize.definition_members`) and in Python, its definition:
the same (first, last) lines for random files of definition, decorator, closer and body lines at
random indentations (tabs, form feeds and other spaces among them), in every language with a
definition pattern."""

from __future__ import annotations

import random

import pytest

from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.duplication import rules

HEADERS = ["def f(a):", "async def g():", "class C(B):", "@decorate", "@decorate(x=1)", "func (r *T) M() {",
           "func F() {", "type T struct {", "function h(x) {", "export default class K extends L {",
           "const k = (a) => {", "get name() {", "static set value(v) {", "public void run() {",
           "private static int count(int a) {", "fun <T> List<T>.second(): T {", "object O {", "interface I {",
           "class classy:", "if (x) {"]
BODIES = ["x = 1", "return x", "}", ")", "})", "):", "", "   ", "\t", "# def not(", "y = classy()", "@", "\u00e9 = 2"]
INDENTS = ["", "    ", "        ", "\t", "  \t", "\x0c", "\u00a0", "\u3000  "]
LANGUAGES = [Language.PYTHON, Language.GO, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.JAVA,
             Language.CSHARP, Language.KOTLIN]


def _python_members(lines: list[str], language: Language, monkeypatch: pytest.MonkeyPatch) -> list[tuple[int, int]]:
    with monkeypatch.context() as patched:
        patched.setattr(rules, "_compiled_members", None)
        return rules._members(lines, language)


def test_the_compiled_definitions_pass_is_that_of_python(monkeypatch: pytest.MonkeyPatch) -> None:
    if rules._compiled_members is None:
        pytest.skip("built only where a C compiler is at hand (.ci/run checks that it was)")
    rng = random.Random(17)
    decorated = members = 0
    for _ in range(3000):
        lines: list[str] = []
        for _ in range(rng.randint(0, 40)):
            indent = rng.choice(INDENTS[:3] if rng.random() < 0.8 else INDENTS)
            if rng.random() < 0.35:
                # A decorator before it at its depth, at another, or none.
                if rng.random() < 0.4:
                    lines.append(rng.choice([indent, rng.choice(INDENTS)]) + rng.choice(["@decorate", "@ x"]))
                lines.append(indent + rng.choice(HEADERS))
            else:
                lines.append(indent + rng.choice(BODIES))
        language = rng.choice(LANGUAGES)
        found = rules._members(lines, language)
        assert found == _python_members(lines, language, monkeypatch), (lines, language)
        members += len(found)
        decorated += sum(1 for first, _last in found if lines[first - 1].lstrip().startswith("@"))
    assert members > 6000 and decorated > 1200  # the cases find definitions, decorated ones among them


def test_the_compiled_definitions_pass_refuses_lines_that_are_not_text() -> None:
    if rules._compiled_members is None:
        pytest.skip("built only where a C compiler is at hand (.ci/run checks that it was)")
    with pytest.raises(TypeError, match="list of str"):
        rules._compiled_members(["def f():", b"x"], str.strip, None, "def", "class")
