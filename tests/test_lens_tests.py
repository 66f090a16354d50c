"""New behaviour needs a test change; a fix needs a regression test."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.file_kinds import is_test_file
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
        "features/include_relative_tag.feature",
        "features/step_definitions/table_steps.rb",
        "features/support/env.rb",
        "features/steps/login.py",
        "test/features/step_definitions/cart.steps.js",
        "src/Acme.Tests/NameResolutionTester.cs",
        "src/Acme.Tests.Benchmarks/AccessorCacheBenchmark.cs",
        "src/Acme.UnitTests/Helpers.cs",
        "flask/testsuite/config.py",
        "src/test-suite/runner.js",
    ],
)
def test_test_file_conventions(path: str) -> None:
    assert is_test_file(path)


@pytest.mark.parametrize(
    "path", ["app/testing_utils.py", "src/contest.ts", "latest.go", "src/Attestation.java", "lib/latest.rb",
             "src/Contest.php", "src/test_data.rs", "src/Acme.Latest/Cart.cs", "src/Acme.Contest/Cart.cs",
             "app/testsuites.py", "src/features/checkout/steps.ts", "app/features/support/billing.rb"]
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
    # `x or 0` is no branch (a boolean operator): the fix changes a body, adds no behaviour.
    assert _found(
        review_change(tmp_path / "b", base, {"app/a.py": branch["app/a.py"]}, branch_name="bugfix/none")
    ) == [("tests/fix-without-test", "app/a.py", 2)]


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


def test_boolean_operators_are_not_branches(tmp_path: Path) -> None:
    base = {"src/guard.js": "export function guard(a, b, c) {\n  if (a) {\n    return 1;\n  }\n  return 2;\n}\n"}
    hoisted = {"src/guard.js": "export function guard(a, b, c) {\n  if (a || b || c || a === b) {\n    return 1;\n  }\n"
               "  return 2;\n}\n"}
    assert _found(review_change(tmp_path / "js", base, hoisted)) == []
    python = {"app/guard.py": "def guard(a, b):\n    if a:\n        return 1\n    return 2\n"}
    hoisted_python = {"app/guard.py": "def guard(a, b):\n    if a or b or a == b:\n        return 1\n    return 2\n"}
    assert _found(review_change(tmp_path / "py", python, hoisted_python)) == []


def test_a_rust_macros_arms_are_decisions_on_both_sides(tmp_path: Path) -> None:
    base = {"src/serve.rs": (
        "pub async fn serve(one: One, two: Two) -> u8 {\n    tokio::select! {\n"
        "        a = one.next() => { if a { 1 } else { 2 } },\n        b = two.next() => 3,\n    }\n}\n"
    )}
    branch = {"src/serve.rs": (
        "pub async fn serve(one: One, two: Two) -> u8 {\n    match select(one.next(), two.next()).await {\n"
        "        Either::Left(a) => { if a { 1 } else { 2 } },\n        Either::Right(_) => 3,\n    }\n}\n"
    )}
    assert _found(review_change(tmp_path, base, branch)) == []


def test_an_exported_one_liner_that_decides_nothing_is_no_new_behaviour(tmp_path: Path) -> None:
    base = {"src/util.ts": "export function keys(value: object): string[] {\n  return Object.keys(value);\n}\n"}
    branch = {"src/util.ts": base["src/util.ts"] + "\nexport const blank = () => Object.create(null);\n"}
    assert _found(review_change(tmp_path / "one", base, branch)) == []
    # A new exported function of several lines is still new behaviour.
    longer = {"src/util.ts": base["src/util.ts"] + (
        "\nexport function blank(prototype: object | null) {\n  const made = Object.create(prototype);\n"
        "  made.created = Date.now();\n  return made;\n}\n"
    )}
    assert _found(review_change(tmp_path / "longer", base, longer)) == [("tests/missing-tests", "src/util.ts", 5)]


def test_code_a_macro_generates_is_no_decision_of_the_function_around_it(tmp_path: Path) -> None:
    base = {"derive/src/expand.rs": "pub fn expand(x: Ident) -> TokenStream {\n    quote! { #x }\n}\n"}
    branch = {"derive/src/expand.rs": (
        "pub fn expand(x: Ident) -> TokenStream {\n    quote! {\n        match #x {\n"
        "            A => 1,\n            B => if ready { 2 } else { 3 },\n            _ => 4,\n        }\n    }\n}\n"
    )}
    assert _found(review_change(tmp_path, base, branch)) == []


def test_a_gherkin_scenario_is_a_test_change(tmp_path: Path) -> None:
    base = {"lib/site/include.rb": "module Site\n  class Include\n    def render(path)\n      path\n    end\n  end\nend\n"}
    method = "    def load_partial(path, context)\n      context[:partials] ||= {}\n      context[:partials][path] ||= parse(path)\n    end\n"
    branch = {"lib/site/include.rb": base["lib/site/include.rb"].replace("  class Include\n", "  class Include\n" + method)}
    assert _found(review_change(tmp_path / "untested", base, branch)) == [("tests/missing-tests", "lib/site/include.rb", 3)]
    scenario = "Feature: include\n  Scenario: a partial\n    Given a site\n    Then it renders\n"
    tested = {**branch, "features/include.feature": scenario}
    assert _found(review_change(tmp_path / "tested", base, tested)) == []


_COLLECTOR = '''<?php
class Collector
{
    public function group(string $pattern, $callable): Group
    {
        $proxy = new Proxy(
            $this->factory,
            $this->resolver,
            $pattern
        );
        $group = new Group($pattern, $callable, $this->resolver, $proxy);
        $this->groups[] = $group;
        return $group;
    }
}
'''


def test_helpers_split_out_of_an_existing_function_are_no_new_behaviour(tmp_path: Path) -> None:
    split = _COLLECTOR.replace('''        $proxy = new Proxy(
            $this->factory,
            $this->resolver,
            $pattern
        );
        $group = new Group($pattern, $callable, $this->resolver, $proxy);
''', '''        $group = $this->createGroup($pattern, $callable);
''').replace('''        return $group;
    }
''', '''        return $group;
    }

    protected function createGroup(string $pattern, $callable): Group
    {
        $proxy = $this->createProxy($pattern);
        return new Group($pattern, $callable, $this->resolver, $proxy);
    }

    protected function createProxy(string $pattern): Proxy
    {
        return new Proxy($this->factory, $this->resolver, $pattern);
    }
''')
    findings = review_change(tmp_path / "split", {"src/Collector.php": _COLLECTOR}, {"src/Collector.php": split})
    assert [item.severity.value for item in findings if item.rule == "tests/missing-tests"] in ([], ["minor"])
    # A new public method that writes new statements is new behaviour.
    added = _COLLECTOR.replace("        return $group;\n    }\n", (
        "        return $group;\n    }\n\n    public function names(): array\n    {\n        $names = [];\n"
        "        $names[] = $this->prefix;\n        $names[] = $this->suffix;\n        return $names;\n    }\n"
    ))
    findings = review_change(tmp_path / "added", {"src/Collector.php": _COLLECTOR}, {"src/Collector.php": added})
    assert [item.severity.value for item in findings if item.rule == "tests/missing-tests"] == ["major"]


def _severities(findings: list, rule: str) -> list[str]:  # type: ignore[type-arg]
    return [item.severity.value for item in findings if item.rule == rule]  # type: ignore[misc]


@pytest.mark.parametrize(
    ("path", "base", "probe", "computed"),
    [
        (
            "lib/site/platforms.rb",
            "module Site\n  module Platforms\n    def windows?\n      RbConfig::CONFIG[\"host_os\"].include?(\"mswin\")\n    end\n  end\nend\n",
            "    def jruby?\n      RUBY_ENGINE == \"jruby\"\n    end\n",
            "    def name_of(path)\n      File.basename(path, \".*\").downcase + \".html\"\n    end\n",
        ),
        (
            "lib/gem/orm.rb",
            "module Gem\n  module Orm\n    def self.load\n      require \"gem/orm/base\"\n    end\n  end\nend\n",
            "    def self.rails72_and_up?\n      Rails::VERSION::MAJOR > 7 || (Rails::VERSION::MAJOR == 7 && Rails::VERSION::MINOR >= 2)\n    end\n",
            "    def self.table_for(model)\n      model.table_name.to_s + \"_versions\"\n    end\n",
        ),
    ],
)
def test_a_new_predicate_on_the_runtime_is_weak_evidence(
    tmp_path: Path, path: str, base: str, probe: str, computed: str
) -> None:
    # Ruby: a public method whose one statement asks which engine or framework version runs the
    # code; one test process can only see one answer, so it is minor, never blocking.
    anchor = base.split("\n")[1] + "\n" + base.split("\n")[2] + "\n"
    with_probe = {path: base.replace(anchor, anchor + probe)}
    findings = review_change(tmp_path / "probe", {path: base}, with_probe)
    assert _severities(findings, "tests/missing-tests") == ["minor"]
    assert any("asks what the runtime is" in item.body for item in findings if item.rule == "tests/missing-tests")
    # The same shape computing from its argument is new behaviour: major.
    with_computed = {path: base.replace(anchor, anchor + computed)}
    assert _severities(review_change(tmp_path / "computed", {path: base}, with_computed), "tests/missing-tests") == ["major"]


def test_runtime_predicates_in_python_and_go_are_weak_evidence_and_a_parameter_named_platform_is_not(
    tmp_path: Path,
) -> None:
    base = {"app/system.py": "import sys\n\n\ndef encoding():\n    return sys.getdefaultencoding()\n"}
    probe = {"app/system.py": base["app/system.py"] + "\n\ndef is_windows():\n    return sys.platform == \"win32\"\n"}
    assert _severities(review_change(tmp_path / "py", base, probe), "tests/missing-tests") == ["minor"]
    named = {"app/system.py": base["app/system.py"] + "\n\ndef label(platform):\n    return platform.title() + \" build\"\n"}
    assert _severities(review_change(tmp_path / "named", base, named), "tests/missing-tests") == ["major"]
    go_base = {"sys/sys.go": "package sys\n\nfunc Name() string {\n\treturn \"sys\"\n}\n"}
    go_probe = {"sys/sys.go": go_base["sys/sys.go"] + "\nfunc IsWindows() bool {\n\treturn runtime.GOOS == \"windows\"\n}\n"}
    assert _severities(review_change(tmp_path / "go", go_base, go_probe), "tests/missing-tests") == ["minor"]
