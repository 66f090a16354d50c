"""The bug rules that read code for a bug kind (open redirect, regex injection, prototype pollution, a discarded Go
error, the wrong exception, a literal typo, modulo bias, a listener leak): each finding names the
source, the sink and the missing guard, and a rule blocks only once its measured record earns it
(4 in 5 holding on at least 5 findings). The must-find cases and safe look-alikes of every rule
are in tests/corpus/bug-rules.toml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from reviewgate.findings import Finding, Severity
from reviewgate.gate import blocks
from reviewgate.reviewers.builtin import rules as registry
from reviewgate.reviewers.builtin.lenses.discarded_go_error import RULE_DISCARDED_GO_ERROR
from reviewgate.reviewers.builtin.lenses.literal_typo import slip
from reviewgate.reviewers.builtin.lenses.open_redirect.lens import OPEN_REDIRECT, RULE_OPEN_REDIRECT
from reviewgate.reviewers.builtin.lenses.wrong_exception import RULE_WRONG_EXCEPTION
from reviewgate.reviewers.builtin.rule import Record
from reviewgate.reviewers.builtin.rules import RULES, RULES_BY_ID
from testing.lenses import review_change

DOCS = Path(__file__).resolve().parents[1] / "docs" / "lenses.md"
BASE = {"README.md": "project\n"}
FLASK_REDIRECT = {
    "app/views.py": (
        "from flask import redirect, request\n\n\n"
        "def login():\n"
        '    target = request.args.get("next", "/")\n'
        '    if not target.startswith("/"):\n'
        '        target = "/"\n'
        "    return redirect(target)\n"
    )
}


@pytest.mark.parametrize(
    ("record", "earned"),
    [
        (None, False),
        (Record(findings=5, holding=4, where="dev set"), True),
        (Record(findings=10, holding=7, where="dev set"), False),
        (Record(findings=4, holding=4, where="dev set"), False),
        (Record(findings=0, holding=0, where="dev set"), False),
    ],
)
def test_a_rule_earns_blocking_with_four_in_five_on_five_findings(record: Record | None, earned: bool) -> None:
    rule = OPEN_REDIRECT._replace(record=record)
    assert rule.earned is earned
    assert rule.reported_severity is (Severity.MAJOR if earned else Severity.MINOR)
    # A rule that reports by its record from the start needs none.
    assert rule._replace(by_record=False).reported_severity is Severity.MAJOR


def test_every_bug_rule_is_minor_until_its_record_earns_more() -> None:
    bug_rules = [rule for rule in RULES if rule.by_record]
    assert len(bug_rules) == 17
    for rule in bug_rules:
        earned = rule.record is not None and rule.record.earned
        assert rule.reported_severity is (Severity.MAJOR if earned else Severity.MINOR)


def test_the_finding_names_source_sink_and_the_weak_guard_and_blocks_on_a_parameter(tmp_path: Path) -> None:
    findings = [item for item in review_change(tmp_path, BASE, FLASK_REDIRECT) if item.rule == RULE_OPEN_REDIRECT]
    assert [(item.line, item.severity) for item in findings] == [(8, Severity.MAJOR)]
    body = findings[0].body
    assert "return redirect(target)" in body  # the sink
    assert "`target`, from `request.args.get('next', '/')` at line 5" in body  # the source
    assert "the only check is that it starts with `/`, which is not a guard: `//evil.example`" in body
    assert "a parameter a link sets by name, so this blocks" in body and "Reported as minor" not in body
    assert blocks(findings[0])


# A parameter a link sets by name reaching a redirect, in each language's frameworks: blocks.
BY_NAME = [
    ("app/go.js", "app.get('/go', (req, res) => {\n  res.redirect(req.query.url);\n});\n", 2),
    ("app/go.ts", "export function go(req: Request, res: Response) {\n  const next = req.body.next;\n"
     "  return res.redirect(next);\n}\n", 3),
    ("app/go.go", "package app\n\nimport \"net/http\"\n\nfunc Go(w http.ResponseWriter, r *http.Request) {\n"
     "\ttarget := r.URL.Query().Get(\"next\")\n\thttp.Redirect(w, r, target, http.StatusFound)\n}\n", 7),
    ("src/main/java/app/Go.java", "package app;\n\npublic class Go extends HttpServlet {\n"
     "    protected void doGet(HttpServletRequest request, HttpServletResponse response) throws IOException {\n"
     "        response.sendRedirect(request.getParameter(\"url\"));\n    }\n}\n", 5),
    ("app/controllers/go_controller.rb", "class GoController < ApplicationController\n  def show\n"
     "    redirect_to params[:next], allow_other_host: true\n  end\nend\n", 3),
    ("public/go.php", "<?php\nheader('Location: ' . $_GET['url']);\n", 2),
]
# The request's own path, a header or the page's hash: reported, at minor until the record earns more.
NOT_BY_NAME = [
    ("app/move.js", JS_HEADER_REDIRECT := (
        "export function move(req, reply) {\n"
        "  const destination = req.headers.destination;\n"
        "  reply.code(201).header('location', destination).send();\n"
        "}\n"), 3),
    ("app/slash.go", "package app\n\nimport \"net/http\"\n\nfunc Slash(w http.ResponseWriter, r *http.Request) {\n"
     "\thttp.Redirect(w, r, r.URL.Path+\"/\", http.StatusMovedPermanently)\n}\n", 6),
    ("web/hash.js", "const target = window.location.hash.substring(1);\nwindow.location.assign(target);\n", 2),
]


@pytest.mark.parametrize(("path", "code", "line"), BY_NAME, ids=[item[0].rsplit(".", 1)[1] for item in BY_NAME])
def test_a_parameter_a_link_sets_by_name_blocks_in_every_language(tmp_path: Path, path: str, code: str, line: int) -> None:
    findings = _rule(review_change(tmp_path, BASE, {path: code}), RULE_OPEN_REDIRECT)
    assert [(item.line, item.severity) for item in findings] == [(line, Severity.MAJOR)]
    assert blocks(findings[0]) and "sets by name" in findings[0].body


@pytest.mark.parametrize(("path", "code", "line"), NOT_BY_NAME, ids=["header", "path", "hash"])
def test_a_path_header_or_hash_target_is_reported_at_minor(tmp_path: Path, path: str, code: str, line: int) -> None:
    findings = _rule(review_change(tmp_path, BASE, {path: code}), RULE_OPEN_REDIRECT)
    assert [(item.line, item.severity) for item in findings] == [(line, Severity.MINOR)]
    assert not blocks(findings[0]) and "Reported as minor" in findings[0].body


RAILS_REDIRECTS = """class SessionsController < ApplicationController
  def create
    path = params[:url].present? ? params[:url] : home_dashboard_index_path
    redirect_to path
  end

  def show
    scenario = current_user.scenarios.find(params[:id])
    redirect_to scenario
  end

  def back
    redirect_to(params[:continue] ? new_group_path : groups_path)
    # redirect_to params[:redirect_url]
    redirect_to params[:return], allow_other_host: false
  end
end
"""
LARAVEL_REDIRECT = """<?php
class Controller
{
    protected function redirectToRequest(Request $request): RedirectResponse
    {
        $basePath = url('/');
        $returnUrl = $request->input('_return') ?? $basePath;
        if (!str_starts_with($returnUrl, $basePath)) {
            return redirect($basePath);
        }
        return redirect($returnUrl);
    }
}
"""
SYMFONY_ROUTE = """<?php
class ProfilerController
{
    public function search(Request $request): RedirectResponse
    {
        $token = $request->query->get('token');
        return new RedirectResponse($this->generator->generate('_profiler', ['token' => $token]));
    }
}
"""


RAILS_BACK = """class ReturnsController < ApplicationController
  def show
    redirect_back fallback_location: params[:return_to]
  end

  def index
    redirect_back_or_to params[:next]
  end

  def away
    redirect_to params[:next], allow_other_host: true
  end
end
"""


@pytest.mark.parametrize(
    ("config", "lines"),
    [
        ("", [3, 7, 11]),  # no Rails configuration in the tree: read as any Ruby
        ("config.load_defaults 6.1\n", [3, 7, 11]),
        ("config.load_defaults 7.0\n", [11]),  # another host raises UnsafeRedirectError, unless the call allows it
        ("config.load_defaults 7.1\n    config.action_controller.raise_on_open_redirects = false\n", [3, 7, 11]),
        ("config.load_defaults 6.1\n    config.action_controller.raise_on_open_redirects = true\n", [11]),
        ("config.load_defaults 8.1\n    config.action_controller.action_on_open_redirect = :log\n", [3, 7, 11]),
    ],
    ids=["no-config", "rails-6.1", "rails-7.0", "7.1-turned-off", "6.1-turned-on", "8.1-log"],
)
def test_rails_redirect_helpers_and_the_applications_own_refusal_of_other_hosts(
    tmp_path: Path, config: str, lines: list[int]
) -> None:
    files = {"app/controllers/returns_controller.rb": RAILS_BACK}
    if config:
        files["config/application.rb"] = f"module Shop\n  class Application < Rails::Application\n    {config}  end\nend\n"
    findings = _rule(review_change(tmp_path, BASE, files), RULE_OPEN_REDIRECT)
    assert [(item.line, item.severity) for item in findings] == [(line, Severity.MAJOR) for line in lines]


def test_a_parameter_blocks_only_as_the_target_itself(tmp_path: Path) -> None:
    # Either branch of a choice is the target; a record a parameter looks up (reported nowhere), or a
    # choice between routes a parameter makes, is not the parameter; a commented redirect runs nothing; Rails's
    # `allow_other_host: false` and a prefix check against the site's own URL refuse other hosts;
    # Symfony's router generates a URL of this site, whatever parameter it is given.
    rails = _rule(review_change(tmp_path / "rails", BASE, {"app/controllers/sessions_controller.rb": RAILS_REDIRECTS}),
                  RULE_OPEN_REDIRECT)
    assert [(item.line, item.severity) for item in rails] == [(4, Severity.MAJOR)]
    laravel = review_change(tmp_path / "laravel", BASE, {"app/Http/Controller.php": LARAVEL_REDIRECT})
    assert _rule(laravel, RULE_OPEN_REDIRECT) == []
    # A record looked up by the parameter: the redirect goes to the URL it has on this site.
    record = ("<?php\nclass TokenController\n{\n    public function show(Request $request)\n    {\n"
              "        $token = ApiToken::findOrFail($request->input('id'));\n"
              "        return redirect($token->getUrl());\n    }\n}\n")
    laravel_record = review_change(tmp_path / "laravel-record", BASE, {"app/Http/TokenController.php": record})
    assert _rule(laravel_record, RULE_OPEN_REDIRECT) == []
    # The same parameter read whole still is the target.
    direct = record.replace("ApiToken::findOrFail($request->input('id'))", "$request->input('next')").replace(
        "$token->getUrl()", "$token")
    laravel_direct = review_change(tmp_path / "laravel-direct", BASE, {"app/Http/TokenController.php": direct})
    assert [item.line for item in _rule(laravel_direct, RULE_OPEN_REDIRECT)] == [7]
    symfony = review_change(tmp_path / "symfony", BASE, {"src/Controller/ProfilerController.php": SYMFONY_ROUTE})
    assert _rule(symfony, RULE_OPEN_REDIRECT) == []


def test_a_url_the_site_builds_from_a_parameter_is_not_a_redirect_to_it(tmp_path: Path) -> None:
    # Pyramid's request methods build this site's URLs: the parameter names a page, not a host.
    views = (
        "from pyramid.httpexceptions import HTTPSeeOther\n\n\n"
        "def add_page(context, request):\n"
        "    page = Page(request.params['body'])\n"
        "    return HTTPSeeOther(location=request.resource_url(page))\n\n\n"
        "def to_route(request):\n"
        "    return HTTPSeeOther(location=request.route_url('view', name=request.params['name']))\n"
    )
    assert _rule(review_change(tmp_path, BASE, {"wiki/views.py": views}), RULE_OPEN_REDIRECT) == []




@pytest.mark.parametrize(
    ("path", "code"),
    [
        ("tests/test_client/views.py", FLASK_REDIRECT["app/views.py"]),
        ("test/http-methods/move.test.js", JS_HEADER_REDIRECT),
    ],
)
def test_a_redirect_in_a_test_file_is_a_fixture_not_an_open_redirect(tmp_path: Path, path: str, code: str) -> None:
    # A web framework's tests build the handlers they test: such a server is never deployed.
    in_test = review_change(tmp_path / "test", BASE, {path: code})
    assert [item for item in in_test if item.rule == RULE_OPEN_REDIRECT] == []
    # The same handler in product code is still reported.
    product = "app/views.py" if path.endswith(".py") else "app/move.js"
    in_product = review_change(tmp_path / "product", BASE, {product: code})
    assert [item.path for item in in_product if item.rule == RULE_OPEN_REDIRECT] == [product]


def test_json_loads_under_unicode_decode_error_is_the_decoding_it_does_not_a_wrong_exception(tmp_path: Path) -> None:
    # json.loads of bytes decodes them first: a UnicodeDecodeError is one of what it raises.
    decoding = (
        "import json\n\n\n"
        "def parse(body, text):\n"
        "    try:\n"
        "        return json.loads(body)\n"
        "    except UnicodeDecodeError:\n"
        "        return json.loads(text)\n"
    )
    findings = review_change(tmp_path / "decoding", BASE, {"app/response.py": decoding})
    assert [item for item in findings if item.rule == RULE_WRONG_EXCEPTION] == []
    # A handler of neither (a lookup error) still lets the bad JSON through.
    lookup = decoding.replace("except UnicodeDecodeError", "except KeyError")
    findings = review_change(tmp_path / "lookup", BASE, {"app/response.py": lookup})
    assert [item.line for item in findings if item.rule == RULE_WRONG_EXCEPTION] == [7]


def test_attribute_error_around_a_method_call_is_duck_typing_not_a_wrong_exception(tmp_path: Path) -> None:
    # The handler is for a receiver without the method (bytes have no `.encode()`), not for what it raises.
    duck = (
        "def body_bytes(text):\n"
        "    try:\n"
        "        data = text.encode()\n"
        "    except AttributeError:\n"
        "        data = text\n"
        "    return data\n"
    )
    findings = review_change(tmp_path / "duck", BASE, {"app/response.py": duck})
    assert [item for item in findings if item.rule == RULE_WRONG_EXCEPTION] == []
    # Around a function of the table, AttributeError explains nothing: the bad value still escapes.
    parse = duck.replace("text.encode()", "int(text)")
    findings = review_change(tmp_path / "parse", BASE, {"app/response.py": parse})
    assert [item.line for item in findings if item.rule == RULE_WRONG_EXCEPTION] == [4]


def test_an_unmeasured_rule_says_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.RULES_BY_ID, RULE_OPEN_REDIRECT, OPEN_REDIRECT._replace(record=None))
    findings = _rule(review_change(tmp_path, BASE, {"app/move.js": JS_HEADER_REDIRECT}), RULE_OPEN_REDIRECT)
    assert [item.severity for item in findings] == [Severity.MINOR]
    assert findings[0].body.endswith("Reported as minor: this rule has no measured record yet.")


def test_the_docs_record_table_is_the_registry() -> None:
    text = DOCS.read_text(encoding="utf-8")
    section = text[text.index("## Record of the bug rules\n") :]
    rows = re.findall(r"^\| `(?P<rule>[a-z]+/[a-z0-9-]+)` \| (?P<findings>\w+) \| (?P<holding>\w+) \| (?P<severity>\w+)[^|]* \|",
                      section, re.MULTILINE)
    documented = {rule: (findings, holding, severity) for rule, findings, holding, severity in rows}
    expected = {
        rule.id: (
            "unmeasured" if rule.record is None else str(rule.record.findings),
            "unmeasured" if rule.record is None else str(rule.record.holding),
            rule.reported_severity.value,
        )
        for rule in RULES
        if rule.by_record
    }
    assert documented == expected


def test_a_rule_whose_record_earns_it_blocks(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(registry.RULES_BY_ID, RULE_OPEN_REDIRECT,
                        OPEN_REDIRECT._replace(record=Record(findings=6, holding=5, where="test")))
    findings = _rule(review_change(tmp_path, BASE, {"app/move.js": JS_HEADER_REDIRECT}), RULE_OPEN_REDIRECT)
    assert [item.severity for item in findings] == [Severity.MAJOR]
    assert "Reported as minor" not in findings[0].body
    assert blocks(findings[0])


@pytest.mark.parametrize(
    ("first", "second", "how"),
    [
        ("deflate", "defalte", "two letters swapped"),
        ("length", "lenght", "two letters swapped"),
        ("address", "adress", "one letter doubled or left out"),
        ("identity", "identiy", "one letter left out"),
        ("lower", "upper", None),  # a different word
        ("content", "context", None),
        ("item", "items", None),  # a plural
        ("request", "requests", None),
        ("utf-8", "utf8", None),  # punctuation only
        ("int32", "int64", None),  # digits only
        ("colour", "color", None),  # spelling variants
        ("cancelled", "canceled", None),
        ("GZIP", "gzip", None),  # case only
        ("gizp", "gzip", None),  # under five characters
    ],
)
def test_a_slip_is_a_swap_or_a_letter_left_out_inside_the_word(first: str, second: str, how: str | None) -> None:
    assert slip(first, second) == how
    assert slip(second, first) == how


@pytest.mark.parametrize(
    ("text", "go", "found"),
    [
        ("const next = req.query.next;", False, "req.query"),
        ("const next = myreq.query.next;", False, None),  # a name that only ends like the request's
        ("const q = new URLSearchParams(location.search);", False, "new URLSearchParams("),
        ('next := r.URL.Query().Get("next")', True, "URL.Query()"),
        ('next := r.FormValue("next")', True, ".FormValue("),
        ('next := values.Get("next")', True, None),
    ],
)
def test_a_request_source_starts_a_name(text: str, go: bool, found: str | None) -> None:
    from reviewgate.reviewers.builtin.languages.text_flow import find_source, request_sources

    match = find_source(request_sources(go), text)
    assert (match.group(0) if match else None) == found


@pytest.mark.parametrize(
    ("expression", "leading"),
    [
        ("target", "target"),
        ("target || '/'", "target || '/'"),
        ("'/items/' + id", None),  # fixed text before the input keeps the host
        ("`/items/${id}`", None),
        ("'/' + path", "path"),  # a lone slash does not: '/' + '/evil.example'
        ("`/${path}`", "path"),
        ("`${base}/x`", "base"),
        ("base + '/x'", "base "),
    ],
)
def test_the_leading_part_of_a_url_decides_its_host(expression: str, leading: str | None) -> None:
    from reviewgate.reviewers.builtin.languages.expression_spans import leading_span
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

    text = f"res.redirect({expression});\n"
    source = read_js(text)
    start = text.index("(") + 1
    span = leading_span(source, start, source.pairs[start - 1])
    assert (text[slice(*span)] if span else None) == leading


JAVA_LIMITS = (
    "package app;\n\n"
    "public final class Limits {\n"
    "    public static int pageSize(String value) {\n"
    "        try {\n"
    "            return Integer.parseInt(value);\n"
    "        } catch (NullPointerException e) {\n"
    "            return 20;\n"
    "        }\n"
    "    }\n"
    "}\n"
)
JS_CONFIG = (
    "const fs = require('fs');\n\n"
    "function loadConfig(path, done) {\n"
    "  fs.readFile(path, 'utf8', (err, data) => {\n"
    "    done(JSON.parse(data));\n"
    "  });\n"
    "}\n"
)


def _rule(findings: list[Finding], rule: str) -> list[Finding]:
    return [item for item in findings if item.rule == rule]


def test_the_java_finding_names_the_call_what_it_raises_and_what_is_caught(tmp_path: Path) -> None:
    changed = {"src/main/java/app/Limits.java": JAVA_LIMITS}
    findings = _rule(review_change(tmp_path, BASE, changed), RULE_WRONG_EXCEPTION)
    # At the severity its record allows (major since 4 of its 5 whole-tree findings held).
    assert [(item.line, item.severity) for item in findings] == [(7, RULES_BY_ID[RULE_WRONG_EXCEPTION].reported_severity)]
    assert findings[0].title == "The handler does not catch what `Integer.parseInt(...)` raises"
    body = findings[0].body
    assert "the `try` at line 5 guards `Integer.parseInt(...)` (line 6)" in body
    assert "raises `NumberFormatException` (an `IllegalArgumentException`) on bad input" in body
    assert "the handler names `NullPointerException`, none of which catches it" in body
    assert body.endswith(RULES_BY_ID[RULE_WRONG_EXCEPTION].record_note())


def test_the_callback_finding_names_the_call_the_unread_error_and_the_use(tmp_path: Path) -> None:
    findings = _rule(review_change(tmp_path, BASE, {"src/config.js": JS_CONFIG}), RULE_DISCARDED_GO_ERROR)
    assert [(item.line, item.severity) for item in findings] == [(4, Severity.MINOR)]
    assert findings[0].title == "Error of `fs.readFile` never read, and `data` used"
    assert "never reads its error `err`, and uses `data` at line 5" in findings[0].body
    assert "`if (err) return callback(err)`" in findings[0].body


@pytest.mark.parametrize(
    ("path", "text", "rule"),
    [("src/main/java/app/Limits.java", JAVA_LIMITS, RULE_WRONG_EXCEPTION), ("src/config.js", JS_CONFIG, RULE_DISCARDED_GO_ERROR)],
)
def test_code_the_change_does_not_touch_is_not_reported(tmp_path: Path, path: str, text: str, rule: str) -> None:
    # The same file at the merge base; the change adds a line at its end only.
    findings = review_change(tmp_path, {**BASE, path: text}, {path: text + "// unrelated\n"})
    assert _rule(findings, rule) == []


@pytest.mark.parametrize("path", ["test/config.test.js", "src/__tests__/config.ts"])
def test_a_callback_in_a_test_file_is_not_reported(tmp_path: Path, path: str) -> None:
    # A test's fixed files cannot fail to read: the unread error there is no bug (as in Go).
    assert _rule(review_change(tmp_path, BASE, {path: JS_CONFIG}), RULE_DISCARDED_GO_ERROR) == []


@pytest.mark.parametrize(
    ("path", "text", "line", "title", "raised"),
    [
        (
            "src/main/kotlin/app/Limits.kt",
            "fun pageSize(value: String): Int = try {\n    value.toInt()\n} catch (e: IllegalStateException) {\n    20\n}\n",
            3,
            "The handler does not catch what `toInt()` raises",
            "raises `NumberFormatException` (an `IllegalArgumentException`) on bad input",
        ),
        (
            "src/App/Limits.cs",
            "class Limits {\n  int Size(string v) {\n    try { return int.Parse(v); }\n"
            "    catch (ArgumentNullException) { return 20; }\n  }\n}\n",
            4,
            "The handler does not catch what `int.Parse(...)` raises",
            "raises `FormatException`, `OverflowException` on bad input",
        ),
    ],
)
def test_kotlin_and_csharp_findings_name_the_call_and_what_it_raises(
    tmp_path: Path, path: str, text: str, line: int, title: str, raised: str
) -> None:
    findings = _rule(review_change(tmp_path, BASE, {path: text}), RULE_WRONG_EXCEPTION)
    assert [(item.line, item.title) for item in findings] == [(line, title)]
    assert raised in findings[0].body


def test_a_location_header_is_read_in_any_case(tmp_path: Path) -> None:
    # DVWA's open redirect: `header ("location: " . $_GET['redirect'])`.
    page = "<?php\nif (array_key_exists(\"redirect\", $_GET) && $_GET['redirect'] != \"\") {\n" \
           "    header (\"location: \" . $_GET['redirect']);\n    exit;\n}\n"
    findings = _rule(review_change(tmp_path, BASE, {"vulnerabilities/open_redirect/source/low.php": page}),
                     RULE_OPEN_REDIRECT)
    assert [(item.line, item.severity) for item in findings] == [(3, Severity.MAJOR)]
