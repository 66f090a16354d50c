"""The bug rules for five more kinds (a case-sensitive URL scheme check, an API newer than the declared
runtime, Set-Cookie values joined into one header, a JWT without pinned algorithms, an error wrapped
without its cause) and the widened ones: what each finding says (the source, the sink), that the
declared runtime is read from the target side only, and that a new rule reports at minor. The
must-find cases and look-alikes are in tests/corpus/bug-kinds.toml, bug-rules-widened.toml and
bug-rules-held-out.toml."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.findings import Finding, Severity
from reviewgate.gate import blocks
from reviewgate.reviewers.builtin.lenses.error_cause import RULE_ERROR_CAUSE_DROPPED
from reviewgate.reviewers.builtin.lenses.joined_set_cookie import RULE_JOINED_SET_COOKIE
from reviewgate.reviewers.builtin.lenses.jwt_algorithm import RULE_JWT_ALGORITHM_UNPINNED
from reviewgate.reviewers.builtin.lenses.open_redirect.lens import RULE_OPEN_REDIRECT
from reviewgate.reviewers.builtin.lenses.runtime_minimum import RULE_API_NEWER_THAN_RUNTIME
from reviewgate.reviewers.builtin.lenses.scheme_case import RULE_CASE_SENSITIVE_SCHEME
from reviewgate.reviewers.builtin.lenses.target_manifest import lowest_allowed
from reviewgate.reviewers.builtin.lenses.wrong_exception import RULE_WRONG_EXCEPTION
from reviewgate.reviewers.builtin.rules import BUILTIN_RULES, RULES_BY_ID
from testing.lenses import review_change

NEW_RULES = (RULE_CASE_SENSITIVE_SCHEME, RULE_API_NEWER_THAN_RUNTIME, RULE_JOINED_SET_COOKIE,
             RULE_JWT_ALGORITHM_UNPINNED, RULE_ERROR_CAUSE_DROPPED)
FETCH = {"src/client.js": "export async function load(url) {\n  return (await fetch(url)).json();\n}\n"}


def _of(findings: list[Finding], rule: str) -> list[Finding]:
    return [item for item in findings if item.rule == rule]


@pytest.mark.parametrize(
    ("declared", "lowest"),
    [
        (">=16.0.0", (16, 0, 0)),
        ("^16.14 || >=18", (16, 14, 0)),
        (">=18 <21", (18, 0, 0)),
        ("14.x", (14, 0, 0)),
        ("~=3.10", (3, 10, 0)),
        (">=3.9 <4", (3, 9, 0)),
        ("*", None),
        ("<20", None),
        (">=14 || <12", None),  # one alternative without a lower bound: any release may run it
    ],
)
def test_the_oldest_release_a_declared_range_allows(declared: str, lowest: tuple[int, int, int] | None) -> None:
    assert lowest_allowed(declared) == lowest


def test_the_new_rules_are_registered_and_minor_until_earned(tmp_path: Path) -> None:
    for rule in NEW_RULES:
        declared = RULES_BY_ID[rule]
        assert rule in BUILTIN_RULES and declared.by_record and not declared.earned
        assert declared.reported_severity is Severity.MINOR
    findings = _of(review_change(tmp_path, {"package.json": '{"engines": {"node": ">=16"}}\n'}, FETCH),
                   RULE_API_NEWER_THAN_RUNTIME)
    assert [(item.path, item.line, item.severity) for item in findings] == [("src/client.js", 2, Severity.MINOR)]
    assert not blocks(findings[0]) and "2 of its 3 findings there held" in findings[0].body


def test_the_declared_runtime_is_the_target_branchs_not_the_branchs(tmp_path: Path) -> None:
    # The branch lowers the minimum to 16 beside its `fetch`: the target branch still says 18.
    lowered = review_change(
        tmp_path / "lowered", {"package.json": '{"engines": {"node": ">=18"}}\n'},
        {"package.json": '{"engines": {"node": ">=16"}}\n', **FETCH},
    )
    assert _of(lowered, RULE_API_NEWER_THAN_RUNTIME) == []
    # The branch raises it to 18 beside its `fetch`: the target branch still says 16.
    raised = review_change(
        tmp_path / "raised", {"package.json": '{"engines": {"node": ">=16"}}\n'},
        {"package.json": '{"engines": {"node": ">=18"}}\n', **FETCH},
    )
    [finding] = _of(raised, RULE_API_NEWER_THAN_RUNTIME)
    assert "Node 18" in finding.body and "`>=16`" in finding.body and "Node 16" in finding.body


def test_the_jwt_finding_names_the_token_from_the_request_and_the_decode(tmp_path: Path) -> None:
    source = (
        "import jwt\n\n\n"
        "def user_of(request, key):\n"
        '    token = request.headers["Authorization"]\n'
        '    return jwt.decode(token, key)["sub"]\n'
    )
    [finding] = _of(review_change(tmp_path, {"README.md": "x\n"}, {"app/auth.py": source}),
                    RULE_JWT_ALGORITHM_UNPINNED)
    assert finding.line == 6
    assert "the token `token` (from `request.headers['Authorization']` at line 5) reaches `jwt.decode`" in finding.body
    assert "no `algorithms`" in finding.body


def test_a_java_redirect_finding_names_the_parameter_it_came_from(tmp_path: Path) -> None:
    source = (
        "class Login {\n"
        "    void done(HttpServletRequest request, HttpServletResponse response) throws Exception {\n"
        '        String target = request.getParameter("next");\n'
        "        response.sendRedirect(target);\n"
        "    }\n"
        "}\n"
    )
    [finding] = _of(review_change(tmp_path, {"README.md": "x\n"}, {"src/Login.java": source}), RULE_OPEN_REDIRECT)
    assert finding.line == 4
    assert 'the redirect goes to `target`, from `request.getParameter("next")` at line 3' in finding.body


def test_an_aspnet_action_parameter_is_request_input(tmp_path: Path) -> None:
    source = (
        "public class AccountController : Controller\n{\n"
        "    public IActionResult Done(string returnUrl)\n    {\n"
        "        return Redirect(returnUrl);\n    }\n}\n"
    )
    [finding] = _of(review_change(tmp_path, {"README.md": "x\n"}, {"Controllers/Account.cs": source}),
                    RULE_OPEN_REDIRECT)
    assert finding.line == 5 and "the action parameter `string returnUrl`" in finding.body
    guarded = source.replace("        return Redirect(returnUrl);\n",
                             "        if (!Url.IsLocalUrl(returnUrl)) return LocalRedirect(\"/\");\n"
                             "        return Redirect(returnUrl);\n")
    assert _of(review_change(tmp_path / "guarded", {"README.md": "x\n"}, {"Controllers/Account.cs": guarded}),
               RULE_OPEN_REDIRECT) == []


def test_the_idna_codec_raises_unicode_error_that_its_subclass_handler_misses(tmp_path: Path) -> None:
    source = (
        "def ascii_host(host):\n"
        "    try:\n"
        '        return host.encode("idna")\n'
        "    except UnicodeEncodeError:\n"
        "        return None\n"
    )
    [finding] = _of(review_change(tmp_path, {"README.md": "x\n"}, {"app/hosts.py": source}), RULE_WRONG_EXCEPTION)
    assert finding.line == 4
    assert '`encode("idna")` (line 3), which raises `UnicodeError`' in finding.body


def test_go_before_113_has_no_percent_w_so_a_percent_v_is_not_reported(tmp_path: Path) -> None:
    source = (
        "package store\n\nimport (\n\t\"fmt\"\n\t\"os\"\n)\n\n"
        "func Load(path string) ([]byte, error) {\n"
        "\tdata, err := os.ReadFile(path)\n"
        "\tif err != nil {\n"
        '\t\treturn nil, fmt.Errorf("load %s: %v", path, err)\n'
        "\t}\n\treturn data, nil\n}\n"
    )
    old = review_change(tmp_path / "old", {"go.mod": "module x\n\ngo 1.12\n"}, {"store/load.go": source})
    assert _of(old, RULE_ERROR_CAUSE_DROPPED) == []
    new = review_change(tmp_path / "new", {"go.mod": "module x\n\ngo 1.21\n"}, {"store/load.go": source})
    [finding] = _of(new, RULE_ERROR_CAUSE_DROPPED)
    assert finding.line == 11 and "`%w`" in finding.body and "`err`" in finding.body
