"""`security/eval`: code evaluated from a value, outside a test file. Python's `eval`/`exec` of a non-literal (not in
a top-level function or class that uses the interactive interpreter: a shell runs its user's code
by design);
JavaScript's `eval(x)` and `new Function(` on an added line, not inside a string the line opens,
not a method named `eval` defined or declared there, not `new Function` of string literals alone."""

from __future__ import annotations

import ast

from reviewgate.findings import FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.lenses.security.line_rules import LineRule
from reviewgate.reviewers.builtin.lenses.security.python_calls import PythonModule, dotted
from reviewgate.reviewers.builtin.rule import Example, File, Rule

EVAL = Rule(
    id="security/eval",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    severity_note="(minor unless request input reaches it)",
    short="Code evaluated from a value",
    full="`eval`, `exec` or `new Function` of a non-literal runs whatever the value holds.",
    tags=("security", "correctness", "external/cwe/cwe-095"),
    precision="medium",
    fires_on=(
        "`eval`/`exec` of a non-literal (Python), `eval(x)` / `new Function(` (JS/TS). **Major** (it "
        "blocks) where request input reaches it within the function (a request's query, form, body, "
        "headers or cookies, directly or through names assigned from it, or a route parameter the "
        "framework fills); **minor** otherwise. The chain also goes up to two calls up: a caller in the "
        "same module or file, or another file of the change that calls the function it imports (in Java, "
        "C# and Kotlin: a file that names the method's class), hands "
        "request input to the parameter the text is built from. Ruby and PHP: **major** and only where request input is in the "
        "code, within the method or from a caller in the change up to two calls up: `eval`, `instance_eval`/`class_eval`/"
        "`module_eval` of a string; `eval`, `assert`, `create_function`"
    ),
    not_on=(
        "test files (a test evaluates its own fixtures, no one's input: simplejson 4.3.0 "
        "`simplejson/tests/test_decode.py:104` `eval(s)` beside `json.loads(s)`, 30 such hits in 11 "
        "packages); literal arguments, a literal compiled first (`exec(compile(\"1/0\", \"<string>\", \"exec\"))`); "
        "`eval(`/`new Function(` inside a string or template literal opened on the line (code a tool "
        "emits as text); a method named `eval` defined or declared at the line's start (`eval(context) {`, "
        "less 4.9.1's 32 tree nodes; `eval(lua: string, …`, bullmq 6.7.6's `node-redis-client.d.ts:34`): "
        "no global `eval` runs; `new Function` whose every argument is a string literal without "
        "interpolation (`new Function('return this;')`, ejs 7.0.2 `lib/cjs/ejs.js:91`; pino 10.4.0's "
        "`new Function('module', 'return import(module)')`): code the author wrote, no input; a top-level function or class that uses Python's interactive interpreter "
        "(`code.interact`, a subclass of `code.InteractiveInterpreter`, `from code import interact`): a "
        "shell, whose purpose is running its user's code (an `eval` elsewhere in the same module is reported)"
    ),
    fires=(
        Example(
            file=File("app/calc.py", "python", """\
def calculate(expression):
    return eval(expression)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/calc.py", "python", """\
import ast


def calculate(expression):
    return ast.literal_eval(expression)
"""),
        ),
    ),
)
RULE_EVAL = EVAL.id

_EVALUATORS = frozenset({"eval", "exec"})
# The last part of every name check_call looks for.
CALL_LEAVES = _EVALUATORS


def _is_literal_code(node: ast.expr) -> bool:
    """A string literal, or one compiled first: `exec(compile("1/0", "<string>", "exec"))`."""
    if isinstance(node, ast.Call) and dotted(node.func) == "compile" and node.args:
        node = node.args[0]
    return isinstance(node, ast.Constant)


def check_call(module: PythonModule, call: ast.Call, name: str, leaf: str, first: ast.expr | None) -> tuple[str, str, str] | None:
    """(rule, what, evidence) when the call evaluates code that is not a literal."""
    if (
        name in _EVALUATORS
        and first is not None
        and not module.in_test
        and not _is_literal_code(first)
        and not module.in_a_shell(call)
    ):
        return RULE_EVAL, f"`{name}` of a value that is not a literal", "the argument is not a literal"
    return None


def _inside_string(code: str, position: int) -> bool:
    """Whether `position` of the line lies inside a string or template literal opened on it
    (quotes and backslash escapes followed from the line's start)."""
    quote = ""
    index = 0
    while index < position:
        char = code[index]
        if quote and char == "\\":
            index += 2
            continue
        if quote == "`" and code.startswith("${", index):
            return False  # an interpolation is code again (`${eval(x)}`)
        if char in "'\"`" and (not quote or char == quote):
            quote = "" if quote else char
        index += 1
    return bool(quote)


# A method named `eval` where it is defined (`eval(context) {`, `eval(): Node {`) or declared
# with typed parameters (`eval(lua: string, …`): at the line's start a call cannot be followed by a
# body or take `name: type`, so no global `eval` runs.
_EVAL_METHOD = LazyPattern(
    r"\s*(?:(?:static|async|public|private|protected|override)\s+)*(?P<name>eval)\("
    r"(?:[^()]*\)\s*(?::[^={]+)?\{|\s*(?:\.\.\.)?[\w$]+\??\s*:)"
)
# `new Function(` whose arguments are string literals alone, none with an interpolation.
_LITERAL_FUNCTION = LazyPattern(
    r"new Function\(\s*(?:(?:'(?:[^'\\]|\\.)*'|\"(?:[^\"\\]|\\.)*\"|`(?:[^`\\$]|\\.|\$(?!\{))*`)"
    r"\s*(?:,\s*|(?=\))))*\)"
)


def _line_evidence(code: str, start: int) -> str | None:
    if _inside_string(code, start):
        return None  # `\`eval(${source})\``: text of the code a tool emits, not a call
    method = _EVAL_METHOD.match(code)
    if method is not None and method.start("name") == start:
        return None  # a method named `eval` defined or declared, not the global one called
    if _LITERAL_FUNCTION.match(code, start):
        return None  # `new Function('return this;')`: only the author's literal code runs
    return "the argument is not a string literal"


LINE_RULES = (
    LineRule(
        RULE_EVAL,
        LazyPattern(r"(?<![\w$.])eval\(\s*(?![\"'`)])|\bnew Function\("),
        "code is evaluated from a value",
        _line_evidence,
        skip_in_tests=True,
    ),
)
