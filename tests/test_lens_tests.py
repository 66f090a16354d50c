"""New behaviour needs a test change; a fix needs a regression test."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.common import is_test_file
from testing.lenses import review_change


def _found(findings: list) -> list[tuple[str, str | None, int | None]]:  # type: ignore[type-arg]
    return sorted(
        (item.rule, item.path or "", item.line or 0)
        for item in findings  # type: ignore[misc]
        if item.rule.startswith("tests/")
    )


@pytest.mark.parametrize(
    "path",
    [
        "tests/unit/a.py",
        "test_a.py",
        "pkg/a_test.py",
        "a/b_test.go",
        "src/x.test.ts",
        "src/x.spec.jsx",
        "src/__tests__/x.js",
        "src/test/java/a/FooTest.java",
        "spec/models/user_spec.rb",
        "lib/user_spec.rb",
        "lib/test_user.rb",
        "lib/user_test.rb",
        "src/CartTest.php",
        "crate/tests/parse.rs",
        "conftest.py",
    ],
)
def test_test_file_conventions(path: str) -> None:
    assert is_test_file(path)


@pytest.mark.parametrize(
    "path", ["app/testing_utils.py", "src/contest.ts", "latest.go", "src/Attestation.java", "lib/latest.rb",
             "src/Contest.php", "src/test_data.rs"]
)
def test_not_test_files(path: str) -> None:
    assert not is_test_file(path)


def test_branch_in_existing_function_counts_and_docs_do_not(tmp_path: Path) -> None:
    base = {"app/a.py": "def f(x):\n    return x\n", "docs/conf.py": "x = 1\n", "examples/demo.py": "x = 1\n"}
    branch = {
        "app/a.py": "def f(x):\n    if x is None:\n        return 0\n    return x\n",
        "docs/conf.py": "def setup(app):\n    return app\n",
        "examples/demo.py": "def main():\n    pass\n",
    }
    assert _found(review_change(tmp_path, base, branch)) == [("tests/missing-tests", "app/a.py", 2)]


def test_fix_with_test_change_is_complete(tmp_path: Path) -> None:
    base = {"app/a.py": "def f(x):\n    return x\n", "tests/test_a.py": "def test_f():\n    pass\n"}
    branch = {
        "app/a.py": "def f(x):\n    return x or 0\n",
        "tests/test_a.py": "def test_f():\n    pass\n\n\ndef test_none():\n    pass\n",
    }
    assert _found(review_change(tmp_path, base, branch, branch_name="bugfix/none")) == []
    # `x or 0` is one more branch: weak evidence of new behaviour besides the untested fix.
    assert _found(
        review_change(tmp_path / "b", base, {"app/a.py": branch["app/a.py"]}, branch_name="bugfix/none")
    ) == [("tests/fix-without-test", "", 0), ("tests/missing-tests", "app/a.py", 2)]


def test_a_rust_test_added_in_the_file_it_tests_is_a_test_change(tmp_path: Path) -> None:
    base = {"src/limits.rs": "pub fn double(v: i32) -> i32 {\n    v * 2\n}\n"}
    function = "\npub fn clamp(v: i32, low: i32) -> i32 {\n    if v < low { low } else { v }\n}\n"
    untested = {"src/limits.rs": base["src/limits.rs"] + function}
    assert _found(review_change(tmp_path / "untested", base, untested)) == [
        ("tests/missing-tests", "src/limits.rs", 5)
    ]
    for attribute in ("#[test]", "#[tokio::test(flavor = \"multi_thread\")]"):
        tested = {
            "src/limits.rs": untested["src/limits.rs"]
            + f"\n#[cfg(test)]\nmod tests {{\n    {attribute}\n    fn clamps() {{}}\n}}\n"
        }
        assert _found(review_change(tmp_path / str(len(attribute)), base, tested)) == []
