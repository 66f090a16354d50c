"""Swallowed failures across languages: only what the branch added, on the handler's line."""

from __future__ import annotations

import time
from pathlib import Path

from testing.lenses import review_change


def _found(findings: list, prefix: str = "correctness/") -> list[tuple[str, str, int | None]]:  # type: ignore[type-arg]
    return sorted((item.rule, item.path, item.line) for item in findings if item.rule.startswith(prefix))


def test_python_handler_variants(tmp_path: Path) -> None:
    source = """def a(items):
    for item in items:
        try:
            item.run()
        except:
            continue


def b():
    try:
        return 1
    except BaseException:
        ...


def c():
    try:
        return 1
    except (ValueError, Exception):
        return False


def d():
    try:
        return 1
    except Exception as error:
        return repr(error)
"""
    findings = review_change(tmp_path, {"m.py": "\n"}, {"m.py": source})
    assert _found(findings) == [
        ("correctness/swallowed-exception", "m.py", 5),
        ("correctness/swallowed-exception", "m.py", 12),
        ("correctness/swallowed-exception", "m.py", 19),
    ]


def test_python_handler_already_on_base_is_not_reported(tmp_path: Path) -> None:
    old = "def a():\n    try:\n        return 1\n    except Exception:\n        pass\n"
    findings = review_change(tmp_path, {"m.py": old}, {"m.py": old + "\n\nVALUE = 2\n"})
    assert _found(findings) == []


def test_c_like_catches(tmp_path: Path) -> None:
    kotlin = "fun load() {\n    try {\n        read()\n    } catch (e: IOException) {\n    }\n}\n"
    csharp = "class A {\n  void B() {\n    try { C(); } catch (Exception) { /* ignored */ }\n  }\n}\n"
    promise = "export const go = (p) => p.then(run).catch(function () {});\n"
    commented = "// try { x(); } catch (e) {}\nexport const y = 1;\n"
    findings = review_change(
        tmp_path,
        {"README.md": "x\n"},
        {"a/Load.kt": kotlin, "a/B.cs": csharp, "a/go.js": promise, "a/c.ts": commented},
    )
    assert _found(findings) == [
        ("correctness/empty-catch", "a/B.cs", 3),
        ("correctness/empty-catch", "a/Load.kt", 4),
        ("correctness/empty-catch", "a/go.js", 1),
    ]


def test_go_variants(tmp_path: Path) -> None:
    source = """package a

func A() (*T, error) {
	if err := run(); err != nil {
		return nil, nil
	}
	if err != nil {
	}
	return nil, nil
}
"""
    findings = review_change(tmp_path, {"a/a.go": "package a\n"}, {"a/a.go": source})
    assert _found(findings) == [
        ("correctness/dropped-error", "a/a.go", 4),
        ("correctness/dropped-error", "a/a.go", 7),
    ]


def test_shell_only_in_scripts_and_ci(tmp_path: Path) -> None:
    workflow = "jobs:\n  t:\n    steps:\n      - run: npm test || true\n"
    findings = review_change(
        tmp_path,
        {"README.md": "x\n"},
        {
            ".github/workflows/ci.yml": workflow,
            "docs/howto.md": "Run `make || true` to ignore it.\n",
            "Makefile": "test:\n\tpytest || :\n",
            "tools/x.sh": "set +o errexit\necho ok\n",
        },
    )
    assert _found(findings) == [
        ("correctness/ignored-exit-status", ".github/workflows/ci.yml", 4),
        ("correctness/ignored-exit-status", "Makefile", 2),
        ("correctness/ignored-exit-status", "tools/x.sh", 1),
    ]


def test_c_like_catch_already_on_base_is_not_reported_when_reindented(tmp_path: Path) -> None:
    # A formatter's pass (or a test wrapped in `describe`) re-indents an existing empty catch:
    # every line is "added", but the merge base had the catch already.
    old = "export function load() {\n  try { read(); } catch (err) {}\n}\n"
    new = "export function load() {\n    try {\n        read();\n    } catch (err) {\n        /* empty */\n    }\n}\n"
    findings = review_change(tmp_path, {"lib/load.js": old}, {"lib/load.js": new})
    assert _found(findings) == []
    grown = new + "export function save() {\n    try { write(); } catch (err) {}\n}\n"
    findings = review_change(tmp_path / "grown", {"lib/load.js": old}, {"lib/load.js": grown})
    assert ("correctness/empty-catch", "lib/load.js", 9) in _found(findings)


def test_empty_catch_in_a_test_file_is_minor(tmp_path: Path) -> None:
    test = "test('x', () => {\n  try { program.parse(['x']); } catch (err) { /* empty */ }\n  expect(1).toBe(1);\n});\n"
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"tests/parse.test.js": test})
    (finding,) = [item for item in findings if item.rule == "correctness/empty-catch"]
    assert finding.severity.value == "minor" and "test or support code" in finding.body


def test_comment_banners_after_a_catch_do_not_stall_the_lens(tmp_path: Path) -> None:
    # A catch followed by lines of slashes and no closing brace: the pattern once backtracked
    # exponentially here (a real 1,300-line file took minutes); pytest's timeout fails it now.
    banner = "//" + "/" * 40 + "\n"
    source = "// } catch (_) {\n" + banner * 30 + "export const a = 1;\n" + "try { a(); } catch (e) {}\n"
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/checks.ts": source})
    assert _found(findings) == [("correctness/empty-catch", "src/checks.ts", 33)]


def test_block_comments_that_never_close_do_not_stall_the_lens(tmp_path: Path) -> None:
    # 300 KB of handlers opening a comment that no `*/` ends: the patterns (and the JavaScript
    # reader every JS lens shares) tried each `/*` to the end of the file, minutes for this file;
    # pytest's timeout fails it if they do again. The handler before them is still found.
    flood = "} catch {/*\n" * 15_000 + "p.catch(() => {/*\n" * 7_000
    source = "try { a(); } catch (e) {}\ntry { b(); /* c */\n" + flood
    started = time.perf_counter()
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/flood.js": source})
    assert time.perf_counter() - started < 30  # about 0.4 s; each part left quadratic takes minutes
    assert _found(findings) == [("correctness/empty-catch", "src/flood.js", 1)]


def test_a_file_of_routes_parses_to_the_same_tree_with_its_openers_defused() -> None:
    """Past UNCLOSABLE_OPENERS_KEPT, the `/*` after the last `*/` are parsed as `/ `: in code that
    compiles they sit in strings, line comments and patterns, and the tree is the same."""
    from reviewgate.reviewers.builtin.languages import syntax_tree

    routes = "".join(f'app.get("/v{number}/*", handler{number}); // all of /v{number}/*\n' for number in range(100))
    source = "/* routes */\n" + routes + "const pattern = /a\\/*b/;\n"
    defused = syntax_tree._without_unclosable_openers(source.encode())
    assert defused != source.encode() and len(defused) == len(source.encode())

    def shape(node: object) -> list[tuple[str, int, int]]:
        found = [(node.type, node.start_byte, node.end_byte)]  # type: ignore[attr-defined]
        for child in node.children:  # type: ignore[attr-defined]
            found += shape(child)
        return found

    tree = syntax_tree.parse("javascript", source)
    assert not tree.root_node.has_error
    assert shape(tree.root_node) == shape(syntax_tree.parser("javascript").parse(source.encode()).root_node)
    few = "/* a */\n" + 'x("/*");\n' * syntax_tree.UNCLOSABLE_OPENERS_KEPT
    assert syntax_tree._without_unclosable_openers(few.encode()) == few.encode()


def test_defused_openers_leave_every_match_where_it_was() -> None:
    """The swallowed-failure patterns and the JavaScript reader over the defused text: the same
    matches at the same offsets as over the text itself, on random strings of catches, braces,
    comment marks, quotes and the characters that may stand in for a `*`."""
    import random

    from reviewgate.reviewers.builtin.comments import defused_comment_openers
    from reviewgate.reviewers.builtin.languages import javascript_source
    from reviewgate.reviewers.builtin.lenses.swallowed import other_languages

    pieces = ["catch {", "catch (e) {", ".catch(() => {", "}", ")", "/*", "*/", "//", "*", "/", "\n", " ",
              '"', "'", "`", "\\", "a", "\x00", "\x02"]
    rng = random.Random(5)
    for _ in range(20_000):
        text = "".join(rng.choice(pieces) for _ in range(rng.randint(0, 24)))
        defused = defused_comment_openers(text)[0]
        assert len(defused) == len(text)
        for pattern in (other_languages._EMPTY_CATCH, other_languages._PROMISE_CATCH):
            assert [match.span() for match in pattern.finditer(defused)] == [
                match.span() for match in pattern.finditer(text)], text
        plain = javascript_source._PARTS.sub(javascript_source._blank, text)
        assert javascript_source.read_js(text).masked == plain, text
