"""The tree-sitter layer: every grammar the lenses read parses offline from its wheel, and a
grammar is imported only when asked for."""

from __future__ import annotations

import subprocess
import sys

import pytest

from reviewgate.reviewers.builtin.languages.syntax_tree import GRAMMAR_OF_EXTENSION, GRAMMARS, grammar_of, parse

SAMPLES = {
    "python": "def f(x):\n    return x\n",
    "javascript": "function f(x) { return x; }\n",
    "typescript": "function f(x: number): number { return x; }\n",
    "tsx": "const A = () => <div>{1}</div>;\n",
    "go": "package a\nfunc F(x int) int { return x }\n",
    "java": "class A { int f(int x) { return x; } }\n",
    "kotlin": "fun f(x: Int): Int { return x }\n",
    "csharp": "class A { int F(int x) { return x; } }\n",
    "rust": "fn f(x: i32) -> i32 { x }\n",
    "ruby": "def f(x)\n  x\nend\n",
    "php": "<?php\nfunction f($x) { return $x; }\n",
}


@pytest.mark.parametrize("grammar", sorted(GRAMMARS))
def test_every_grammar_parses_a_function_without_error(grammar: str) -> None:
    tree = parse(grammar, SAMPLES[grammar])
    assert not tree.root_node.has_error, (grammar, str(tree.root_node))
    assert "function" in str(tree.root_node) or "method" in str(tree.root_node) or "arrow" in str(tree.root_node)


def test_a_syntax_error_is_a_node_not_an_exception() -> None:
    assert parse("python", "def f(:\n").root_node.has_error


def test_extensions_name_known_grammars() -> None:
    assert set(GRAMMAR_OF_EXTENSION.values()) <= set(GRAMMARS)
    assert grammar_of("src/App.TSX") == "tsx"
    assert grammar_of("lib/a.rb") == "ruby"
    assert grammar_of("dir.py/Makefile") is None
    assert grammar_of("README") is None


def test_a_grammar_is_imported_only_when_asked_for() -> None:
    code = (
        "import sys\n"
        "from reviewgate.reviewers.builtin.languages.syntax_tree import parse\n"
        "parse('go', 'package a\\n')\n"
        "print(sorted(m for m in sys.modules if m.startswith('tree_sitter_') and '.' not in m))\n"
    )
    shown = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert shown.strip() == "['tree_sitter_go']"
