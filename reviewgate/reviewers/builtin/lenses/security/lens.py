"""Security exposures the diff creates: shell or SQL built from formatted strings, eval of
non-literals, unsafe YAML/pickle loading, TLS verification turned off. Each rule is declared
beside its checks, one module per family (shell_injection, sql_injection, code_evaluation,
unsafe_loading, tls_verification); this lens reads each changed file once and asks them in turn.

Python is read with `ast` (a call's arguments are known exactly, python_calls.py); the C-like
languages by patterns over added lines that skip comments (line_rules.py). TLS-off in a test file
is a test of that path and does not fire.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.freeze.diff import FileChange
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.bug_lens import matched
from reviewgate.reviewers.builtin.changed_lines import AddedSpans, reviewable_changes
from reviewgate.reviewers.builtin.comments import comment_on
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import C_LIKE, Language, language_of
from reviewgate.reviewers.builtin.lens_findings import lens_finding
from reviewgate.reviewers.builtin.lenses.security import (
    code_evaluation,
    shell_injection,
    sql_injection,
    tls_verification,
    unsafe_loading,
)
from reviewgate.reviewers.builtin.lenses.security.code_evaluation import EVAL, RULE_EVAL
from reviewgate.reviewers.builtin.lenses.security.fixes import line_fix, python_fix
from reviewgate.reviewers.builtin.lenses.security.line_rules import LineRule, lines_above, statement_text
from reviewgate.reviewers.builtin.lenses.security.python_calls import PythonModule, dotted
from reviewgate.reviewers.builtin.lenses.security.shell_injection import RULE_SHELL, SHELL_INJECTION
from reviewgate.reviewers.builtin.lenses.security.sql_injection import RULE_SQL, SQL_INJECTION
from reviewgate.reviewers.builtin.lenses.security.tls_verification import RULE_TLS, TLS_VERIFICATION_OFF
from reviewgate.reviewers.builtin.lenses.security.unsafe_loading import (
    RULE_PICKLE,
    RULE_YAML,
    UNSAFE_DESERIALIZATION,
    UNSAFE_YAML,
)
from reviewgate.reviewers.builtin.python_parsing import parse_python, parse_python_touched
from reviewgate.reviewers.builtin.python_walk import nodes_of

if TYPE_CHECKING:  # loaded only where a shell, SQL or eval sink is found
    from reviewgate.reviewers.builtin.lenses.security.request_chain import TextChains
    from reviewgate.reviewers.builtin.lenses.security.ruby_php_callers import Callers

RULES = (SHELL_INJECTION, SQL_INJECTION, EVAL, UNSAFE_YAML, UNSAFE_DESERIALIZATION, TLS_VERIFICATION_OFF)
# The sinks whose findings block only where request input reaches them (request_chain.py).
CHAINED_RULES = frozenset({RULE_SHELL, RULE_SQL, RULE_EVAL})

# Asked in this order; the first that finds something reports the call.
_CALL_CHECKS: tuple[Callable[[PythonModule, ast.Call, str, str, ast.expr | None], tuple[str, str, str] | None], ...] = (
    shell_injection.check_call,
    sql_injection.check_call,
    code_evaluation.check_call,
    unsafe_loading.check_call,
    tls_verification.check_call,
)
# The last part of every name the checks look for: a call named otherwise can only be the
# `verify=False` one (a keyword argument, outside a test file).
_CHECKED_LEAVES = (
    shell_injection.CALL_LEAVES
    | sql_injection.CALL_LEAVES
    | code_evaluation.CALL_LEAVES
    | unsafe_loading.CALL_LEAVES
    | tls_verification.CALL_LEAVES
)

# C-like languages, in this order: the first that matches a line reports it.
LINE_RULES: tuple[LineRule, ...] = (
    *shell_injection.LINE_RULES,
    *sql_injection.LINE_RULES,
    *code_evaluation.LINE_RULES,
    *tls_verification.LINE_RULES,
)

# What every pattern of LINE_RULES holds as written (a literal each needs): the scan of a file
# over the size cap (oversized.py) reads only the added lines with one, and the
# MAX_TEMPLATE_LINES added lines after each (a query written over several lines). A rule added to
# LINE_RULES adds its literal here; tests/test_oversized_files.py checks each rule's examples pass
# this filter. Compiled on first use: only a change with a file over the size cap reads it.
LINE_RULES_NEED = LazyPattern(
    r"exec|eval\(|new Function\(|\.(?:query|execute|raw|Query|QueryRow|Exec|QueryContext|QueryRowContext|"
    r"ExecContext|executeQuery|executeUpdate|prepareStatement|addBatch)\(|rejectUnauthorized|NODE_TLS_REJECT_UNAUTHORIZED"
    r"|InsecureSkipVerify|NoopHostnameVerifier|ALLOW_ALL_HOSTNAME_VERIFIER|[\"']-c[\"']|[\"']/[cC][\"']"
)


def _leaf(call: ast.Call) -> str:
    """The called name without its receiver (`run` of `subprocess.run`), "" for anything else."""
    func = call.func
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def _check_call(module: PythonModule, call: ast.Call) -> tuple[str, str, str] | None:
    """(rule, what, evidence): what the call does, and why it is not one of the exceptions."""
    func = call.func
    if _leaf(call) not in _CHECKED_LEAVES and (module.in_test or not call.keywords):
        return None  # the leaf `dotted` would give names none of the checks, nor is `verify=` possible
    name = dotted(func)
    leaf = name.rsplit(".", 1)[-1]
    first = call.args[0] if call.args else None
    for check in _CALL_CHECKS:
        found = check(module, call, name, leaf, first)
        if found is not None:
            return found
    return None


class SecurityLens:
    def check(self, request: ReviewRequest) -> Iterator[Finding]:
        for change in reviewable_changes(request):
            language = language_of(change.path)
            if language is Language.PYTHON:
                yield from self._python(request, change)
            elif language in C_LIKE:
                yield from self._c_like(request, change, language)
            elif language in (Language.RUBY, Language.PHP) and not is_test_file(change.path):
                yield from self._ruby_php(request, change, language, _callers_of(request))

    def _ruby_php(self, request: ReviewRequest, change: FileChange, language: Language, callers: Callers) -> Iterator[Finding]:
        """Ruby's and PHP's sinks, each a finding only where request input reaches it, within the
        method (ruby_php.py) or from a caller in the change (ruby_php_callers.py); a test's handler
        is a fixture, never deployed."""
        from reviewgate.reviewers.builtin.lenses.security import ruby_php

        text = request.head.read_text(change.path)
        if text is None:
            return
        sources = ruby_php.request_sources(text, language, change.path)
        chain = callers.chain_for(change.path, text, language)
        for found in ruby_php.findings(text, language, change.added_lines(), sources, chain):
            yield _finding(found.rule, found.what, f"{matched(found.code)}; {found.evidence}", change.path, found.line,
                           found.code, found.chain)

    def _python(self, request: ReviewRequest, change: FileChange) -> Iterator[Finding]:
        source = request.head.read_text(change.path)
        tree = None if source is None else parse_python_touched(change, source)  # reported where it spans an added line
        if source is None or tree is None:
            return
        added = change.added_lines()
        module = PythonModule(lambda: parse_python(source, change.path), is_test_file(change.path))
        lines: list[str] = []  # the source's lines, split when a call is found
        spans = AddedSpans(added)
        for node in nodes_of(tree, ast.Call):
            if not spans.touched(node.lineno, node.end_lineno or node.lineno):
                continue
            found = _check_call(module, node)
            if found is not None:
                chain = _python_chain(module, node, change.path, request) if found[0] in CHAINED_RULES else None
            else:
                found, chain = _run_as_it_came(module, node, change.path, request)
            if found is not None:
                lines = lines or source.splitlines()
                rule, what, evidence = found
                line = lines[node.lineno - 1]
                finding = _finding(rule, what, f"{matched(line)}; {evidence}", change.path, node.lineno, line, chain)
                fix = python_fix(node, dotted(node.func), lines, set(added)) if rule in (RULE_YAML, RULE_TLS) else None
                yield _with_fix(finding, fix)

    def _c_like(self, request: ReviewRequest, change: FileChange, language: Language) -> Iterator[Finding]:
        in_test = is_test_file(change.path)
        added = change.added_lines()
        chains: TextChains | None = None  # the file read whole only when a sink is found (request_chain.py)
        for number, line in sorted(added.items()):
            comment = comment_on(number, line, language)
            code = line if comment is None else line[: len(line) - len(comment.text)]
            # Every rule's match starts on its line with a literal LINE_RULES_NEED holds: a line
            # without one is read no further (the following lines a call may span included).
            if (comment is not None and comment.whole_line) or not LINE_RULES_NEED.compiled().search(code):
                continue
            for line_rule in LINE_RULES:
                if line_rule.skip_in_tests and in_test:
                    continue
                text = statement_text(code, number, added) if line_rule.spans_lines else code
                # Only a call that starts on this line is this line's (the lines after are their own).
                match = line_rule.pattern.search(text)
                if match is None or match.start() >= len(code):
                    continue
                above = lines_above(number, added, line_rule.lines_before)
                evidence = line_rule.evidence(above + text, len(above) + match.start())
                if evidence is None:
                    continue
                rule = line_rule.rule
                chain = None
                if rule in CHAINED_RULES:
                    from reviewgate.reviewers.builtin.lenses.security.request_chain import TextChains

                    chains = chains or TextChains(request.head.read_text(change.path), language, change.path,
                                                  _other_files(request, change.path, language))
                    group = line_rule.chained_group
                    start, end = match.span(group) if group else (0, len(text))
                    chain = chains.chain(number, end - start, start)
                if not evidence:  # passed as it came: a finding only where request input is what is passed
                    if chain is None:
                        continue
                    evidence = line_rule.chained_evidence
                finding = _finding(rule, line_rule.what, f"{matched(line)}; {evidence}", change.path, number, line,
                                   chain)
                yield _with_fix(finding, line_fix(number, line) if rule == RULE_TLS else None)
                break


_ADVICE = {
    RULE_SHELL: "Pass the arguments as a list without a shell, so untrusted text cannot add commands.",
    RULE_SQL: "Use the driver's parameters (placeholders) so untrusted text cannot change the query.",
    RULE_EVAL: "Parse the data you expect (json, ast.literal_eval, a lookup table) instead of running it.",
    RULE_YAML: "Use `yaml.safe_load` (or `Loader=yaml.SafeLoader`).",
    RULE_PICKLE: "Accept a data format (JSON) from callers; unpickling runs arbitrary code.",
    RULE_TLS: "Keep verification on; point it at the right CA bundle if the certificate is private.",
}


def _run_as_it_came(
    module: PythonModule, call: ast.Call, path: str, request: ReviewRequest
) -> tuple[tuple[str, str, str] | None, str | None]:
    """((rule, what, evidence), chain) where a shell runs a name that holds request input as it
    came, the chain followed from that name alone; (None, None) elsewhere."""
    if _leaf(call) not in shell_injection.CALL_LEAVES:
        return None, None
    name = dotted(call.func)
    first = call.args[0] if call.args else None
    passed = shell_injection.python_command_as_it_came(module, call, name, name.rsplit(".", 1)[-1], first)
    chain = None if passed is None else _python_chain(module, call, path, request, (passed,))
    return (None, None) if chain is None else ((RULE_SHELL, *shell_injection.AS_IT_CAME), chain)


def _python_chain(module: PythonModule, call: ast.Call, path: str, request: ReviewRequest,
                  arguments: tuple[ast.expr, ...] | None = None) -> str | None:
    from reviewgate.reviewers.builtin.lenses.security.request_chain import python_chain

    def others(name: str) -> Iterator[tuple[str, ast.Module]]:
        """The change's other Python files that name the sink's function and parse."""
        for other in request.all_changed_paths():
            if other != path and language_of(other) is Language.PYTHON:
                source = request.head.read_text(other)
                named = source is not None and re.search(rf"\b{re.escape(name)}\b", source) is not None
                tree = parse_python(source, other) if source is not None and named else None
                if tree is not None:
                    yield other, tree

    return python_chain(module.tree, call, path, others, arguments)


# The last review's Callers: this lens runs once per file (engine.review_file), and every file of
# one change shares the same head reader and list of changed paths, so the change's Ruby and PHP
# files are read once, not once per file.
_LAST_CALLERS: list[tuple[object, tuple[str, ...], Callers]] = []


def _callers_of(request: ReviewRequest) -> Callers:
    from reviewgate.reviewers.builtin.lenses.security.ruby_php_callers import Callers

    paths = request.all_changed_paths()
    if _LAST_CALLERS and _LAST_CALLERS[0][0] is request.head and _LAST_CALLERS[0][1] == paths:
        return _LAST_CALLERS[0][2]

    def files() -> Iterator[tuple[str, str | None]]:
        read = [path for path in paths if language_of(path) in (Language.RUBY, Language.PHP) and not is_test_file(path)]
        request.head.prefetch(read)  # one `git cat-file` for them all
        return ((path, request.head.read_text(path)) for path in read)

    callers = Callers(files)
    _LAST_CALLERS[:] = [(request.head, paths, callers)]
    return callers


# Languages whose files call each other's functions: one imports the other's (request_chain.py).
_FAMILIES = ({Language.JAVASCRIPT, Language.TYPESCRIPT}, {Language.GO}, {Language.JAVA, Language.KOTLIN}, {Language.CSHARP})


def _other_files(request: ReviewRequest, path: str, language: Language) -> Callable[[], Iterator[tuple[str, str | None]]] | None:
    """The change's other files of the language's family, read when a sink without a chain asks."""
    family = next((family for family in _FAMILIES if language in family), None)
    if family is None:
        return None

    def others() -> Iterator[tuple[str, str | None]]:
        for other in request.all_changed_paths():
            if other != path and language_of(other) in family:
                yield other, request.head.read_text(other)

    return others


def _with_fix(finding: Finding, suggestion: dict[str, Any] | None) -> Finding:
    """The finding with its mechanical fix as a suggested change, when there is one."""
    return finding if suggestion is None else finding.with_changes(extra={**finding.extra, "suggestion": suggestion})


def _finding(rule: str, what: str, evidence: str, path: str, line: int, code: str, chain: str | None = None) -> Finding:
    """The finding, major; a shell, SQL or eval sink's only where request input reaches it
    (request_chain.py), else minor."""
    title = what[0].upper() + what[1:]
    body = f"{title}. {evidence}. {_ADVICE[rule]}"
    severity = Severity.MAJOR
    if rule in CHAINED_RULES:
        if chain is not None:
            body += f" Request input reaches it: {chain}."
        else:
            from reviewgate.reviewers.builtin.lenses.security.request_chain import NO_CHAIN

            severity = Severity.MINOR
            body += NO_CHAIN
    return lens_finding(
        rule=rule,
        category="security",
        finding_class=FindingClass.CORRECTNESS,
        severity=severity,
        title=title,
        body=body,
        path=path,
        line=line,
        code=code,
    )

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (SecurityLens(),)
