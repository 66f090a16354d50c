"""Security exposures the diff creates: shell or SQL built from
formatted strings, eval of non-literals, unsafe YAML/pickle loading, TLS verification turned off.

Python is read with `ast` (a call's arguments are known exactly); the C-like languages by
patterns over added lines that skip comments. TLS-off in a test file is a test of that path and
does not fire.
"""

from __future__ import annotations

import ast
import functools
import re
from collections.abc import Callable, Iterator
from typing import Any

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.freeze.diff import FileChange
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.changed_lines import AddedSpans, reviewable_changes
from reviewgate.reviewers.builtin.comments import comment_on
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import C_LIKE, Language, language_of
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.lenses.security.fixes import line_fix, python_fix
from reviewgate.reviewers.builtin.python_parsing import parse_python, parse_python_touched
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Rule

SHELL_INJECTION = Rule(
    id="security/shell-injection",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Shell command built from values",
    full=(
        "A command run through a shell is built by formatting or concatenation: a value with shell "
        "syntax runs its own commands. Pass an argument list without a shell."
    ),
    tags=("security", "correctness", "external/cwe/cwe-078"),
    precision="high",
    fires_on=(
        "Python (by `ast`): `subprocess.*(…, shell=True)` or `os.system`/`os.popen` of an f-string, "
        "`%`, `+` or `.format` string (also through a variable assigned one); JS `exec`/`execSync` of "
        "a template with `${…}` or `\"…\" +`; Go `exec.Command(\"sh\", \"-c\", fmt.Sprintf(…))`; Java "
        "`Runtime.getRuntime().exec(\"…\" + x)`"
    ),
    not_on="argument lists (`subprocess.run([...])`, `execFileSync`), literal commands",
    fires=(
        Example(
            file=File("app/archive.py", "python", """\
import subprocess


def archive(name, folder):
    subprocess.run(f"tar czf {name}.tgz {folder}", shell=True, check=True)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/archive.py", "python", """\
import subprocess


def archive(name, folder):
    subprocess.run(["tar", "czf", f"{name}.tgz", folder], check=True)
"""),
        ),
    ),
)

SQL_INJECTION = Rule(
    id="security/sql-injection",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="SQL statement built from values",
    full=(
        "An SQL statement is built by formatting and executed: a value with SQL syntax changes the "
        "query. Use placeholders and parameters."
    ),
    tags=("security", "correctness", "external/cwe/cwe-089"),
    precision="high",
    fires_on=(
        "SQL built by formatting and passed to `execute`/`executemany`/`raw`/… (Python, also through "
        "a variable), JS `.query(\\`…${…}\\`)` (a template may span lines), Go `Query(fmt.Sprintf(…))`, "
        "Java `executeQuery(\"…\" + x)` — only when the formatted text is a statement: SELECT … FROM, "
        "INSERT INTO, UPDATE … SET, DELETE FROM, SELECT/UPDATE/DELETE … WHERE, "
        "CREATE/DROP/ALTER/TRUNCATE TABLE/INDEX/VIEW/… (`db.query(\\`SELECT * FROM users WHERE id = "
        "${id}\\`)`)"
    ),
    not_on=(
        "placeholders and parameters; a method or variable named `query` with a URL or search string "
        "(`http.query(\\`${base}/search?q=${term}\\`)`); text with SQL-ish words but no statement "
        "(`select the best ${term}`); a literal query held in a variable and run with its parameters "
        "apart (`query = \"… = %s\"; cursor.execute(query, [name])`: the variable's nearest assignment "
        "above the call is read, not another function's of the same name); Python SQL whose every "
        "formatted value is a literal or an identifier quoted by a quoting helper (`quote_name(table)`, "
        "`quote_ident(column)`, directly, through a variable assigned one, or through text formatted "
        "of them, `master = f\"{quoted}.sqlite_master\"`)"
    ),
    fires=(
        Example(
            file=File("app/users.py", "python", """\
def find_user(cursor, name):
    cursor.execute(f"SELECT * FROM users WHERE name = '{name}'")
    return cursor.fetchone()
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/users.py", "python", """\
def find_user(cursor, name):
    cursor.execute("SELECT * FROM users WHERE name = %s", (name,))
    return cursor.fetchone()
"""),
        ),
    ),
)

EVAL = Rule(
    id="security/eval",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Code evaluated from a value",
    full="`eval`, `exec` or `new Function` of a non-literal runs whatever the value holds.",
    tags=("security", "correctness", "external/cwe/cwe-095"),
    precision="medium",
    fires_on="`eval`/`exec` of a non-literal (Python), `eval(x)` / `new Function(` (JS/TS)",
    not_on=(
        "literal arguments, a literal compiled first (`exec(compile(\"1/0\", \"<string>\", \"exec\"))`); "
        "`eval(`/`new Function(` inside a string or template literal opened on the line (code a tool "
        "emits as text); a top-level function or class that uses Python's interactive interpreter "
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

UNSAFE_YAML = Rule(
    id="security/unsafe-yaml",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="YAML loaded with an unsafe loader",
    full=(
        "`yaml.load` without a safe loader can construct arbitrary objects from the document. Use "
        "`yaml.safe_load` or `Loader=yaml.SafeLoader`."
    ),
    tags=("security", "correctness", "external/cwe/cwe-502"),
    precision="high",
    fires_on="`yaml.load`/`load_all` without `SafeLoader`/`CSafeLoader`/`BaseLoader`; `yaml.unsafe_load`",
    not_on="`yaml.safe_load`, `Loader=yaml.SafeLoader`",
    fires=(
        Example(
            file=File("app/config.py", "python", """\
import yaml


def read_config(text):
    return yaml.load(text)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/config.py", "python", """\
import yaml


def read_config(text):
    return yaml.safe_load(text)
"""),
        ),
    ),
)

UNSAFE_DESERIALIZATION = Rule(
    id="security/unsafe-deserialization",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="Request data deserialized with pickle",
    full=(
        "`pickle`, `dill` or `marshal` loads data taken from a request: unpickling runs code the "
        "sender chooses."
    ),
    tags=("security", "correctness", "external/cwe/cwe-502"),
    precision="medium",
    fires_on="`pickle`/`dill`/`marshal` `.loads`/`.load` of an expression mentioning `request`",
    not_on="",
    fires=(
        Example(
            file=File("app/views.py", "python", """\
import pickle


def restore(request):
    return pickle.loads(request.body)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("app/views.py", "python", """\
import json


def restore(request):
    return json.loads(request.body)
"""),
        ),
    ),
)

TLS_VERIFICATION_OFF = Rule(
    id="security/tls-verification-off",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="TLS certificate verification turned off",
    full=(
        "Certificate or host-name verification is disabled (`verify=False`, `rejectUnauthorized: "
        "false`, `InsecureSkipVerify: true`): anyone on the network path can read and change the "
        "traffic."
    ),
    tags=("security", "correctness", "external/cwe/cwe-295"),
    precision="high",
    fires_on=(
        "`verify=False`, `ssl._create_unverified_context()`, `rejectUnauthorized: false`, "
        "`NODE_TLS_REJECT_UNAUTHORIZED=0`, `InsecureSkipVerify: true`, `NoopHostnameVerifier`"
    ),
    not_on="test files (a test of the TLS-off path)",
    fires=(
        Example(
            file=File("app/client.py", "python", """\
import requests


def fetch(url):
    return requests.get(url, verify=False, timeout=10)
"""),
        ),
    ),
    does_not_fire=(
        Example(
            file=File("tests/test_client.py", "python", """\
import requests


def test_fetch_without_verification(server):
    assert requests.get(server.url, verify=False, timeout=10).ok
"""),
            caption="In a test file (a test of the TLS-off path).",
        ),
    ),
)

RULES = (SHELL_INJECTION, SQL_INJECTION, EVAL, UNSAFE_YAML, UNSAFE_DESERIALIZATION, TLS_VERIFICATION_OFF)


RULE_SHELL = SHELL_INJECTION.id
RULE_SQL = SQL_INJECTION.id
RULE_EVAL = EVAL.id
RULE_YAML = UNSAFE_YAML.id
RULE_PICKLE = UNSAFE_DESERIALIZATION.id
RULE_TLS = TLS_VERIFICATION_OFF.id

_SUBPROCESS_CALLS = frozenset(
    {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"}
)
_SQL_METHODS = frozenset({"execute", "executemany", "executescript", "raw", "exec_driver_sql", "mogrify"})
# The evidence that formatted text is SQL: a statement's verb with its clause (a method or a
# variable named `query` is not evidence; URLs and search strings are called queries too).
_SQL_STATEMENT = LazyPattern(
    r"\bselect\b[\s\S]*?\bfrom\b|\binsert\s+(?:or\s+\w+\s+)?into\b|\bupdate\b[\s\S]*?\bset\b"
    r"|\bdelete\s+from\b|\b(?:select|update|delete)\b[\s\S]*?\bwhere\b"
    r"|\b(?:create|drop|alter|truncate)\s+(?:table|index|view|database|schema)\b",
    re.IGNORECASE,
)
_SHELL_FUNCTIONS = frozenset({"os.system", "os.popen"})
_EVALUATORS = frozenset({"eval", "exec"})
_YAML_LOADS = frozenset({"yaml.load", "yaml.load_all"})
_YAML_UNSAFE_LOADS = frozenset({"yaml.unsafe_load", "yaml.unsafe_load_all"})
_PICKLE_LOADS = frozenset({"loads", "load"})
_PICKLE_MODULES = frozenset({"pickle", "cPickle", "dill", "marshal"})
_UNVERIFIED_CONTEXT = "ssl._create_unverified_context"
# The last part of every name `_PythonChecker.check` looks for: a call named otherwise can only be
# the `verify=False` one (a keyword argument, outside a test file).
_CHECKED_LEAVES = _SUBPROCESS_CALLS | _SQL_METHODS | _PICKLE_LOADS | {
    name.rsplit(".", 1)[-1]
    for name in (*_SHELL_FUNCTIONS, *_EVALUATORS, *_YAML_LOADS, *_YAML_UNSAFE_LOADS, _UNVERIFIED_CONTEXT)
}
_SAFE_YAML_LOADERS = frozenset({"SafeLoader", "CSafeLoader", "BaseLoader", "CBaseLoader"})


def _literal_text(node: ast.expr) -> str:
    """The constant string parts of a formatted expression (to tell SQL from other text)."""
    return " ".join(
        item.value
        for item in ast.walk(node)
        if isinstance(item, ast.Constant) and isinstance(item.value, str)
    )


def _is_formatted(node: ast.expr) -> bool:
    """An f-string with a substitution, `"..." % x`, `"..." + x` or `"...".format(x)`."""
    if isinstance(node, ast.JoinedStr):
        return any(isinstance(value, ast.FormattedValue) for value in node.values)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return isinstance(node.left, (ast.Constant, ast.JoinedStr))
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        sides = (node.left, node.right)
        has_text = any(
            isinstance(side, (ast.Constant, ast.JoinedStr)) or _is_formatted(side) for side in sides
        )
        return has_text and not all(isinstance(side, ast.Constant) for side in sides)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "format":
        return isinstance(node.func.value, ast.Constant)
    return False


# A helper that quotes an SQL identifier (`connection.ops.quote_name`, psycopg's `quote_ident`,
# `quote_identifier`, `quote_table`).
_QUOTING_HELPER = LazyPattern(r"^_?quote_?(?:name|ident|identifier|table|column|schema)s?$|^qn$", re.IGNORECASE)


# How many names deep a quoted identifier is followed through formatted text (`a = quote(x)`,
# `b = f"{a}.t"`, `execute(f"... {b}")`): enough for a qualified name, bounded for cycles.
_MAX_QUOTED_DEPTH = 3


def _substituted_values(node: ast.expr) -> list[ast.expr]:
    """The values a formatted string takes in: an f-string's fields, the right of `%`, the
    arguments of `.format`, the non-literal sides of `+`."""
    if isinstance(node, ast.JoinedStr):
        return [value.value for value in node.values if isinstance(value, ast.FormattedValue)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod):
        return list(node.right.elts) if isinstance(node.right, ast.Tuple) else [node.right]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return [
            value
            for side in (node.left, node.right)
            if not isinstance(side, ast.Constant)
            for value in (_substituted_values(side) if isinstance(side, (ast.JoinedStr, ast.BinOp)) else [side])
        ]
    if isinstance(node, ast.Call):
        return [*node.args, *(keyword.value for keyword in node.keywords)]
    return []


def _is_literal_code(node: ast.expr) -> bool:
    """A string literal, or one compiled first: `exec(compile("1/0", "<string>", "exec"))`."""
    if isinstance(node, ast.Call) and _dotted(node.func) == "compile" and node.args:
        node = node.args[0]
    return isinstance(node, ast.Constant)


def _dotted(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return f"{_dotted(node.value)}.{node.attr}"
    return ""


def _keyword(call: ast.Call, name: str) -> ast.expr | None:
    return next((item.value for item in call.keywords if item.arg == name), None)


def _is_constant(node: ast.expr | None, value: object) -> bool:
    return isinstance(node, ast.Constant) and node.value is value


class _PythonChecker:
    def __init__(self, module: Callable[[], ast.Module | None], in_test: bool) -> None:
        self.in_test = in_test
        self._module = module  # the whole module's tree: the calls may come from the touched statements'

    @functools.cached_property
    def assigned_names(self) -> dict[str, list[tuple[int, ast.expr]]]:
        """Every plain assignment of each name in the module, by line: `sql = f"..."; cur.execute(sql)`.
        Found when a call first asks (a shell or SQL call with a name for its text): most files have none."""
        found: dict[str, list[tuple[int, ast.expr]]] = {}
        tree = self._module()
        for node in nodes_of(tree, ast.Assign) if tree is not None else ():
            for target in node.targets:
                if isinstance(target, ast.Name):
                    found.setdefault(target.id, []).append((node.lineno, node.value))
        for assignments in found.values():
            assignments.sort(key=lambda item: item[0])
        return found

    def value_of(self, name: ast.Name) -> ast.expr | None:
        """What `name` was last assigned above its use (the nearest assignment, not one of another
        function's that shares the name: `query = "... = %s"` here, `query = "..." % x` elsewhere)."""
        before = [value for line, value in self.assigned_names.get(name.id, ()) if line < name.lineno]
        return before[-1] if before else None

    @functools.cached_property
    def shell_spans(self) -> list[tuple[int, int]]:
        """The top-level functions and classes that use Python's interactive interpreter: a shell,
        whose eval of its user's input is its purpose (interpreter_shells.py)."""
        from reviewgate.reviewers.builtin.lenses.security.interpreter_shells import shell_spans

        tree = self._module()
        return shell_spans(tree) if tree is not None else []

    def in_a_shell(self, call: ast.Call) -> bool:
        return any(first <= call.lineno <= last for first, last in self.shell_spans)

    def _formatted(self, node: ast.expr) -> ast.expr | None:
        if _is_formatted(node):
            return node
        if isinstance(node, ast.Name):
            value = self.value_of(node)
            return value if value is not None and _is_formatted(value) else None
        return None

    def only_quoted_identifiers(self, formatted: ast.expr, depth: int = 0) -> bool:
        """Whether every value formatted into the text is a literal or an identifier quoted by a
        quoting helper (`quote_name(table)`, `quote_ident(column)`), directly or through a name
        assigned one or assigned text formatted of such values (`master = f"{quoted}.sqlite_master"`):
        a table or column name, which no driver parameter can carry, made safe to write in."""
        values = _substituted_values(formatted)
        return bool(values) and all(self._is_quoted_identifier(value, depth) for value in values)

    def _is_quoted_identifier(self, node: ast.expr, depth: int) -> bool:
        if isinstance(node, ast.Constant):
            return True
        if isinstance(node, ast.Name):
            assigned = self.value_of(node)
            if assigned is None:
                return False
            if _is_formatted(assigned):
                return depth < _MAX_QUOTED_DEPTH and self.only_quoted_identifiers(assigned, depth + 1)
            node = assigned
        return isinstance(node, ast.Call) and bool(_QUOTING_HELPER.search(_dotted(node.func).rsplit(".", 1)[-1]))

    def check(self, call: ast.Call) -> tuple[str, str, str] | None:
        """(rule, what, evidence): what the call does, and why it is not one of the exceptions."""
        func = call.func
        if (
            (func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else "")
            not in _CHECKED_LEAVES
            and (self.in_test or not call.keywords)
        ):
            return None  # the leaf `_dotted` would give names none of the calls below, nor is `verify=` possible
        name = _dotted(func)
        leaf = name.rsplit(".", 1)[-1]
        first = call.args[0] if call.args else None
        if leaf in _SUBPROCESS_CALLS and name.startswith(("subprocess.", "commands.")) or leaf in {"Popen"}:
            if (
                _is_constant(_keyword(call, "shell"), True)
                and first is not None
                and self._formatted(first) is not None
            ):
                return (
                    RULE_SHELL,
                    f"`{name}(..., shell=True)` runs a command built by string formatting",
                    "the command is one formatted string run by a shell, not an argument list",
                )
        if name in _SHELL_FUNCTIONS and first is not None and self._formatted(first) is not None:
            return (
                RULE_SHELL,
                f"`{name}` runs a command built by string formatting",
                "the command is a formatted string, not a literal",
            )
        if leaf in _SQL_METHODS and isinstance(call.func, ast.Attribute) and first is not None:
            formatted = self._formatted(first)
            statement = _SQL_STATEMENT.search(_literal_text(formatted)) if formatted is not None else None
            if statement is not None and formatted is not None and not self.only_quoted_identifiers(formatted):
                return (
                    RULE_SQL,
                    f"SQL built by string formatting is passed to `{leaf}`",
                    f"the formatted text is a statement (`{_excerpt(statement.group(0))}`) and the values "
                    "are formatted into it rather than passed as parameters",
                )
        if (
            name in _EVALUATORS
            and first is not None
            and not _is_literal_code(first)
            and not self.in_a_shell(call)
        ):
            return RULE_EVAL, f"`{name}` of a value that is not a literal", "the argument is not a literal"
        if name in _YAML_LOADS:
            loader = _keyword(call, "Loader") or (call.args[1] if len(call.args) > 1 else None)
            if loader is None or _dotted(loader).rsplit(".", 1)[-1] not in _SAFE_YAML_LOADERS:
                return (
                    RULE_YAML,
                    f"`{name}` without a safe loader can build arbitrary objects",
                    "no SafeLoader, CSafeLoader or BaseLoader is given",
                )
        if name in _YAML_UNSAFE_LOADS:
            return RULE_YAML, f"`{name}` can build arbitrary objects", "the unsafe loader is named explicitly"
        if leaf in _PICKLE_LOADS and name.split(".", 1)[0] in _PICKLE_MODULES:
            if first is not None and "request" in ast.unparse(first):
                return (
                    RULE_PICKLE,
                    f"`{name}` of request data runs code chosen by the sender",
                    "the argument mentions `request`",
                )
        if not self.in_test and _is_constant(_keyword(call, "verify"), False):
            return (
                RULE_TLS,
                f"`{name}(..., verify=False)` turns TLS certificate verification off",
                "`verify=False` is a literal, outside a test file",
            )
        if not self.in_test and name == _UNVERIFIED_CONTEXT:
            return (
                RULE_TLS,
                "`ssl._create_unverified_context()` turns TLS certificate verification off",
                "it is outside a test file",
            )
        return None


# C-like languages: (rule, pattern, what it is). Patterns look at one added line at a time.
_LINE_RULES: tuple[tuple[str, LazyPattern, str, bool], ...] = (
    (
        RULE_SHELL,
        LazyPattern(
            r"(?:\b(?:child_process|childProcess|cp)\.|(?<![\w$.]))exec(?:Sync)?\(\s*(?:`[^`]*\$\{"
            r"|[\"'][^\"']*[\"']\s*\+)"
        ),
        "a shell command is built from a formatted string",
        False,
    ),
    (
        RULE_SHELL,
        LazyPattern(
            r"exec\.Command(?:Context)?\((?:ctx,\s*)?\"(?:/bin/)?(?:ba)?sh\"\s*,\s*\"-c\"\s*,\s*"
            r"(?:fmt\.Sprintf\(|[^)]*\+)"
        ),
        "a shell command is built from a formatted string",
        False,
    ),
    (
        RULE_SHELL,
        LazyPattern(r"Runtime\.getRuntime\(\)\.exec\(\s*(?:\"[^\"]*\"\s*\+|String\.format\()"),
        "a shell command is built from a formatted string",
        False,
    ),
    (
        RULE_SQL,
        LazyPattern(
            r"\.(?:query|execute|raw|Query|QueryRow|Exec|QueryContext|ExecContext|executeQuery|"
            r"executeUpdate|prepareStatement)\(\s*(?:ctx,\s*)?(?:`[^`]*\$\{|fmt\.Sprintf\(\s*\"|"
            r"String\.format\(\s*\"|\"[^\"]*\"\s*\+|'[^']*'\s*\+)"
        ),
        "SQL built by string formatting is passed to the database",
        False,
    ),
    (
        RULE_EVAL,
        LazyPattern(r"(?<![\w$.])eval\(\s*(?![\"'`)])|\bnew Function\("),
        "code is evaluated from a value",
        False,
    ),
    (
        RULE_TLS,
        LazyPattern(
            r"rejectUnauthorized\s*:\s*false|NODE_TLS_REJECT_UNAUTHORIZED\s*=\s*[\"']?0"
            r"|InsecureSkipVerify\s*:\s*true|NoopHostnameVerifier|ALLOW_ALL_HOSTNAME_VERIFIER"
        ),
        "TLS certificate verification is turned off",
        True,
    ),
)


# What every pattern of _LINE_RULES holds as written (a literal each needs): the scan of a file
# over the size cap (oversized.py) reads only the added lines with one, and the
# MAX_TEMPLATE_LINES added lines after each (a query written over several lines). A rule added above adds its
# literal here; tests/test_oversized_files.py checks each rule's examples pass this filter.
LINE_RULES_NEED = re.compile(
    r"exec|eval\(|new Function\(|\.(?:query|execute|raw|Query|QueryRow|Exec|QueryContext|ExecContext|"
    r"executeQuery|executeUpdate|prepareStatement)\(|rejectUnauthorized|NODE_TLS_REJECT_UNAUTHORIZED"
    r"|InsecureSkipVerify|NoopHostnameVerifier|ALLOW_ALL_HOSTNAME_VERIFIER"
)


class SecurityLens:
    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in reviewable_changes(request):
            language = language_of(change.path)
            if language is Language.PYTHON:
                yield from self._python(request, change)
            elif language in C_LIKE:
                yield from self._c_like(change, language)

    def _python(self, request: ReviewRequest, change: FileChange) -> Iterator[Finding]:
        source = request.head.read_text(change.path)
        tree = None if source is None else parse_python_touched(change, source)  # reported where it spans an added line
        if source is None or tree is None:
            return
        added = change.added_lines()
        checker = _PythonChecker(lambda: parse_python(source, change.path), is_test_file(change.path))
        lines: list[str] = []  # the source's lines, split when a call is found
        spans = AddedSpans(added)
        for node in nodes_of(tree, ast.Call):
            if not spans.touched(node.lineno, node.end_lineno or node.lineno):
                continue
            found = checker.check(node)
            if found is not None:
                lines = lines or source.splitlines()
                rule, what, evidence = found
                line = lines[node.lineno - 1]
                finding = _finding(rule, what, f"{_matched(line)}; {evidence}", change.path, node.lineno, line)
                fix = python_fix(node, _dotted(node.func), lines, set(added)) if rule in (RULE_YAML, RULE_TLS) else None
                yield _with_fix(finding, fix)

    def _c_like(self, change: FileChange, language: Language) -> Iterator[Finding]:
        in_test = is_test_file(change.path)
        added = change.added_lines()
        for number, line in sorted(added.items()):
            comment = comment_on(number, line, language)
            code = line if comment is None else line[: len(line) - len(comment.text)]
            if comment is not None and comment.whole_line:
                continue
            for rule, pattern, what, skip_in_tests in _LINE_RULES:
                if skip_in_tests and in_test:
                    continue
                text = _statement_text(code, number, added) if rule == RULE_SQL else code
                match = pattern.search(text)
                if match is None:
                    continue
                evidence = _LINE_EVIDENCE.get(rule, "")
                if rule == RULE_EVAL and _inside_string(code, match.start()):
                    continue  # `\`eval(${source})\``: text of the code a tool emits, not a call
                if rule == RULE_SHELL and _only_constant_interpolations(text, match.start()):
                    continue  # `${ok ? 'true' : 'false'}`: the command is one of a few fixed texts
                if rule == RULE_SQL:
                    statement = _SQL_STATEMENT.search(text, match.start())
                    if statement is None:
                        continue  # a method named `query` with a formatted URL or search string
                    evidence = (
                        f"the formatted text is a statement (`{_excerpt(statement.group(0))}`) and the "
                        "values are formatted into it rather than passed as parameters"
                    )
                finding = _finding(rule, what, f"{_matched(line)}; {evidence}", change.path, number, line)
                yield _with_fix(finding, line_fix(number, line) if rule == RULE_TLS else None)
                break


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


# A template literal's `${…}` whose value is fixed text: a string literal, a number, or a choice
# between two of them (`${ok ? 'true' : 'false'}`).
_CONSTANT_LITERAL = r"""(?:'[^'\\`$]*'|"[^"\\`$]*"|\d+)"""
_CONSTANT_INTERPOLATION = LazyPattern(
    rf"\$\{{\s*(?:{_CONSTANT_LITERAL}|[\w$.!]+\s*\?\s*{_CONSTANT_LITERAL}\s*:\s*{_CONSTANT_LITERAL})\s*\}}"
)


def _only_constant_interpolations(text: str, start: int) -> bool:
    """Whether the template literal the match starts has interpolations, all of fixed text."""
    opening = text.find("`", start)
    closing = text.find("`", opening + 1)
    if opening < 0 or closing < 0:
        return False
    template = text[opening + 1 : closing]
    rest = _CONSTANT_INTERPOLATION.sub("", template)
    return "${" in template and "${" not in rest


# A template literal opened on a line and closed this many added lines later at most is read whole.
MAX_TEMPLATE_LINES = 30


def _statement_text(code: str, number: int, added: dict[int, str]) -> str:
    """The line, and when it opens a template literal it does not close, the added lines up to
    the closing backtick: a query written over several lines is one piece of evidence."""
    if code.count("`") % 2 == 0:
        return code
    parts = [code]
    for following in range(number + 1, number + 1 + MAX_TEMPLATE_LINES):
        line = added.get(following)
        if line is None:
            break
        parts.append(line)
        if "`" in line:
            break
    return "\n".join(parts)


_LINE_EVIDENCE = {
    RULE_SHELL: (
        "the command is one formatted string run by a shell, not an argument list "
        "(`execFile`, `exec.Command(name, args...)`)"
    ),
    RULE_EVAL: "the argument is not a string literal",
    RULE_TLS: "the setting is a literal, outside a test file",
}


_ADVICE = {
    RULE_SHELL: "Pass the arguments as a list without a shell, so untrusted text cannot add commands.",
    RULE_SQL: "Use the driver's parameters (placeholders) so untrusted text cannot change the query.",
    RULE_EVAL: "Parse the data you expect (json, ast.literal_eval, a lookup table) instead of running it.",
    RULE_YAML: "Use `yaml.safe_load` (or `Loader=yaml.SafeLoader`).",
    RULE_PICKLE: "Accept a data format (JSON) from callers; unpickling runs arbitrary code.",
    RULE_TLS: "Keep verification on; point it at the right CA bundle if the certificate is private.",
}


def _excerpt(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split()).replace("`", "'")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _matched(line: str) -> str:
    return f"Matched `{_excerpt(line.strip(), 100)}`"


def _with_fix(finding: Finding, suggestion: dict[str, Any] | None) -> Finding:
    """The finding with its mechanical fix as a suggested change, when there is one."""
    return finding if suggestion is None else finding.with_changes(extra={**finding.extra, "suggestion": suggestion})


def _finding(rule: str, what: str, evidence: str, path: str, line: int, code: str) -> Finding:
    title = what[0].upper() + what[1:]
    return lens_finding(
        rule=rule,
        category="security",
        finding_class=FindingClass.CORRECTNESS,
        severity=Severity.MAJOR,
        title=title,
        body=f"{title}. {evidence}. {_ADVICE[rule]}",
        path=path,
        line=line,
        code=code,
    )

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (SecurityLens(),)
