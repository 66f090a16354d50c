"""The tree-sitter layer: every grammar the lenses read parses offline from its wheel, and a
grammar is imported only when asked for."""

from __future__ import annotations

import subprocess
import sys
import time
from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.languages.syntax_tree import (
    GRAMMAR_OF_EXTENSION,
    GRAMMARS,
    ParseBudgetWarning,
    grammar_of,
    parse,
    parser,
)
from testing.hostile_parses import LINES, SLOW_FILES

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


@pytest.mark.parametrize(("grammar", "line"), [("go", "<!--\n"), ("ruby", "<a\n")])
def test_input_a_grammar_explodes_on_is_given_up_as_a_file_that_does_not_parse(grammar: str, line: str) -> None:
    """10-12 KB on which the grammar's parse takes minutes (a Go file of `<!--` lines: 7 s for
    2,000 of them and four times as long for each doubling): given up within its budget, it
    reads as the tree of an empty text. The parser parses the next file from its start."""
    started = time.thread_time()
    with pytest.warns(ParseBudgetWarning, match=f"^src/slow.{grammar}: not parsed, its {grammar} parse went over"):
        tree = parse(grammar, line * 4_000, f"src/slow.{grammar}")
    assert time.thread_time() - started < 10  # about 1 s
    assert (tree.root_node.end_byte, tree.root_node.child_count) == (0, 0)
    assert not parse(grammar, SAMPLES[grammar]).root_node.has_error


def test_real_code_parses_within_its_budget_to_the_tree_of_a_plain_parse() -> None:
    """The grammars' samples and every file of the lens corpus (real-shaped code in each
    language): the budgeted parse gives tree-sitter's own tree."""
    from reviewgate.tomlfile import read_toml

    files = list(SAMPLES.items())
    for path in sorted((Path(__file__).resolve().parent / "corpus").glob("*.toml")):
        for case in read_toml(path).get("case", []):
            for name, text in {**case.get("base", {}), **case.get("branch", {})}.items():
                if isinstance(text, str) and (grammar := grammar_of(name)) is not None:
                    files.append((grammar, text))
    assert len(files) > 200
    for grammar, text in files:
        budgeted, plain = parse(grammar, text).root_node, parser(grammar).parse(text.encode()).root_node
        # The same nodes, and the same text behind them (a tree parsed through a callback reads it through the callback).
        assert (str(budgeted), budgeted.text) == (str(plain), plain.text), text[:200]
        assert [child.text for child in budgeted.named_children] == [child.text for child in plain.named_children]


# The files of testing/hostile_parses.py, by grammar.
UNREPORTED = [(grammar_of(path), line) for path, line in SLOW_FILES]


@pytest.mark.timeout(60)
@pytest.mark.parametrize(("grammar", "line"), UNREPORTED)
def test_a_parse_that_reports_no_progress_is_given_up_at_its_budget(grammar: str, line: str) -> None:
    """Past CHILD_MIN_BYTES a file is parsed first in a forked child held to the budget's CPU
    seconds: the child is killed, the file given up and named, and no child is left behind (how
    long it takes: benchmarks/parse_budget_benchmark.py --hostile)."""
    import psutil

    with pytest.warns(ParseBudgetWarning, match=f"^src/slow.{grammar}: not parsed, its {grammar} parse went over"):
        tree = parse(grammar, line * LINES, f"src/slow.{grammar}")
    assert (tree.root_node.end_byte, tree.root_node.child_count) == (0, 0)
    assert psutil.Process().children() == []
    assert not parse(grammar, SAMPLES[grammar]).root_node.has_error


@pytest.mark.timeout(60)
def test_a_child_that_gets_no_cpu_is_killed_at_its_budget_plus_the_wall_slack() -> None:
    """The child's CPU timer cannot end a child that never runs (stopped here, as by a runner
    starved of CPU): the wall deadline does, and the text reads as one that did not parse in time."""
    import threading

    import psutil

    from reviewgate.reviewers.builtin.languages.parse_child import WALL_SLACK_SECONDS, parses_in_time

    stopped: list[int] = []

    def stop_the_child() -> None:
        while not stopped:
            for child in psutil.Process().children():
                child.suspend()
                stopped.append(child.pid)
            time.sleep(0.001)

    stopping = threading.Thread(target=stop_the_child, daemon=True)
    stopping.start()
    started = time.perf_counter()
    # A minute of parsing: the child is surely still at it when stopped, long before 0.5 s of its CPU.
    assert not parses_in_time(parser("java"), b"a<b<c<\n" * LINES, 0.5)
    assert time.perf_counter() - started >= WALL_SLACK_SECONDS
    stopping.join()
    assert stopped and not psutil.pid_exists(stopped[0])
    assert psutil.Process().children() == []


@pytest.mark.timeout(60)
def test_this_process_runs_its_other_threads_while_such_a_parse_is_given_up() -> None:
    """The child parses; this process only waits on it, without the GIL: a thread of its own (a
    model reviewer's request, the gate's cancellation) is not held up for the whole file."""
    import threading

    beats: list[float] = []
    done = threading.Event()

    def beat() -> None:
        while not done.is_set():
            beats.append(time.perf_counter())
            time.sleep(0.01)

    beating = threading.Thread(target=beat)
    beating.start()
    try:
        with pytest.warns(ParseBudgetWarning):
            parse("java", "a<b<c<\n" * (LINES + 100), "src/Slow.java")  # not the text above: one child a text
    finally:
        done.set()
        beating.join()
    assert len(beats) > 20
    assert max(later - earlier for earlier, later in zip(beats, beats[1:], strict=False)) < 1.0


@pytest.mark.parametrize("grammar", sorted(GRAMMARS))
def test_real_code_past_the_child_size_parses_to_the_tree_of_a_plain_parse(grammar: str) -> None:
    """A file the child parses first within its budget is parsed here to tree-sitter's own tree."""
    from reviewgate.reviewers.builtin.languages.syntax_tree import CHILD_MIN_BYTES

    sample = SAMPLES[grammar]
    body = sample.split("\n", 1)[1] if grammar in ("go", "php") else sample
    text = sample + body * (2 * CHILD_MIN_BYTES // len(body))
    assert len(text.encode()) > CHILD_MIN_BYTES
    budgeted, plain = parse(grammar, text).root_node, parser(grammar).parse(text.encode()).root_node
    assert not budgeted.has_error
    assert (str(budgeted), budgeted.text) == (str(plain), plain.text)
