"""`security/shell-injection`: a command run through a shell, built by formatting or
concatenation. In Python a `subprocess` call with `shell=True` or `os.system`/`os.popen` of a
formatted string (also through a variable assigned one); in JavaScript, Go and Java a shell
command of a template or a concatenation on an added line."""

from __future__ import annotations

import ast
import functools
import re

from reviewgate.findings import FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.lenses.security.line_rules import (
    FORMATTED,
    NAME_LINES_ABOVE,
    LineRule,
    assigned_texts,
    passed_as_it_came,
)
from reviewgate.reviewers.builtin.lenses.security.python_calls import PythonModule, is_constant, is_formatted, keyword
from reviewgate.reviewers.builtin.rule import Example, File, Rule

SHELL_INJECTION = Rule(
    id="security/shell-injection",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    severity_note="(minor unless request input reaches it)",
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
        "`Runtime.getRuntime().exec(\"…\" + x)`; an argument list that names a shell with `-c` (`/c` for "
        "`cmd.exe`), whose next element a shell parses again (`subprocess.run([\"sh\", \"-c\", f\"…\"])`, "
        "`new ProcessBuilder(\"sh\", \"-c\", \"ping \" + host)`, `spawn('sh', ['-c', command])`); in those, also a name the 40 added lines above assign such a "
        "string (``const command = `ping ${host}`; exec(command)``), or holding request input itself (also "
        "Python's `Popen(command, shell=True)`, `os.system(command)`). **Major** (it blocks) where request input reaches the "
        "command within the function (a request's query, form, body, headers or cookies, directly or "
        "through names assigned from it, or a route parameter the framework fills); **minor** otherwise. The chain also goes up to two calls up: a caller in the "
        "same module or file, or another file of the change that calls the function it imports (in Java, "
        "C# and Kotlin: a file that names the method's class), hands "
        "request input to the parameter the text is built from. Ruby and PHP: **major** and only where request input is in the "
        "command, within the method or from a caller in the change up to two calls up: `system`/`exec`/`spawn`/`IO.popen`/"
        "`Open3.*` given one string or a shell and `-c` (with or without parentheses), `Kernel#open` given a path that "
        "starts with it, backticks and `%x()`; `shell_exec`, `exec`, `system`, `passthru`, `popen`, `proc_open`, "
        "backticks; `Shellwords.escape`, `escapeshellarg` and digit checks clear it"
    ),
    not_on="argument lists that run no shell (`subprocess.run([...])`, `execFileSync`), literal commands",
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
RULE_SHELL = SHELL_INJECTION.id

_SUBPROCESS_CALLS = frozenset(
    {"run", "call", "check_call", "check_output", "Popen", "getoutput", "getstatusoutput"}
)
_SHELL_FUNCTIONS = frozenset({"os.system", "os.popen"})
# The last part of every name check_call looks for.
CALL_LEAVES = _SUBPROCESS_CALLS | {name.rsplit(".", 1)[-1] for name in _SHELL_FUNCTIONS}


_SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh"})


def shell_list_command(first: ast.expr | None) -> ast.expr | None:
    """The command line an argument list hands a shell to parse (`["sh", "-c", command]`,
    `["cmd", "/c", command]`): a shell again, whatever the list form promises. None elsewhere."""
    if not isinstance(first, (ast.List, ast.Tuple)) or len(first.elts) < 3:
        return None
    program, flag, command = first.elts[:3]
    if not (isinstance(program, ast.Constant) and isinstance(program.value, str)):
        return None
    base = program.value.rsplit("/", 1)[-1].lower()
    shell_flag = "-c" if base in _SHELLS else "/c" if base in {"cmd", "cmd.exe"} else None
    return command if shell_flag is not None and isinstance(flag, ast.Constant) and flag.value == shell_flag else None


def check_call(module: PythonModule, call: ast.Call, name: str, leaf: str, first: ast.expr | None) -> tuple[str, str, str] | None:
    """(rule, what, evidence) when the call runs a command built by formatting through a shell."""
    if leaf in _SUBPROCESS_CALLS and name.startswith(("subprocess.", "commands.")) or leaf in {"Popen"}:
        if (
            is_constant(keyword(call, "shell"), True)
            and first is not None
            and module.formatted(first) is not None
        ):
            return (
                RULE_SHELL,
                f"`{name}(..., shell=True)` runs a command built by string formatting",
                "the command is one formatted string run by a shell, not an argument list",
            )
        command = shell_list_command(first)
        if command is not None and module.formatted(command) is not None:
            return (
                RULE_SHELL,
                f"`{name}` hands a shell a command built by string formatting",
                "the argument list runs a shell with `-c` and a formatted command line: a shell parses it",
            )
    if name in _SHELL_FUNCTIONS and first is not None and module.formatted(first) is not None:
        return (
            RULE_SHELL,
            f"`{name}` runs a command built by string formatting",
            "the command is a formatted string, not a literal",
        )
    return None


def python_command_as_it_came(module: PythonModule, call: ast.Call, name: str, leaf: str, first: ast.expr | None) -> ast.Name | None:
    """The name a shell runs as it came (`subprocess.Popen(command, shell=True)`, `os.system(command)`
    with `command` a parameter or assigned no text here): a finding only where request input is
    that name (lens.py follows its chain)."""
    runs_a_shell = (leaf in _SUBPROCESS_CALLS and is_constant(keyword(call, "shell"), True)) or name in _SHELL_FUNCTIONS
    if not runs_a_shell and leaf in _SUBPROCESS_CALLS:
        first = shell_list_command(first)  # `subprocess.run(["sh", "-c", command])`
        runs_a_shell = first is not None
    if not runs_a_shell or not isinstance(first, ast.Name):
        return None
    value = module.value_of(first)
    written = value is not None and (is_formatted(value) or isinstance(value, (ast.Constant, ast.IfExp, ast.List)))
    return None if written else first


AS_IT_CAME = (
    "The request's text is run as a shell command",
    "the command run is request input itself: whoever sends the request writes it",
)


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


_ONE_STRING = (
    "the command is one formatted string run by a shell, not an argument list "
    "(`execFile`, `exec.Command(name, args...)`)"
)


def _line_evidence(text: str, start: int) -> str | None:
    if _only_constant_interpolations(text, start):
        return None  # `${ok ? 'true' : 'false'}`: the command is one of a few fixed texts
    return _ONE_STRING


# A command given as a bare name to what runs it (`exec(command)`, `exec.Command("sh", "-c", command)`,
# `Runtime.getRuntime().exec(command)`).
# What runs a command through a shell, up to the command: Node's `exec`/`execSync`, Go's
# `exec.Command("sh", "-c", …)`, Java's `Runtime.getRuntime().exec(…)`.
_JS_EXEC = r"(?:\b(?:child_process|childProcess|cp)\.|(?<![\w$.]))exec(?:Sync)?\(\s*"
_GO_SHELL = r"exec\.Command(?:Context)?\((?:ctx,\s*)?\"(?:/bin/)?(?:ba)?sh\"\s*,\s*\"-c\"\s*,\s*"
_JAVA_RUNTIME = r"Runtime\.getRuntime\(\)\.exec\(\s*"
_PASSED_NAME = LazyPattern(rf"(?:{_JS_EXEC}|{_GO_SHELL}|{_JAVA_RUNTIME})(?P<name>[A-Za-z_$][\w$]*)\s*[,)]")
# A shell named in an argument list with `-c` (`/c` for cmd.exe), up to the element after it, which
# a shell parses as a command line: `new ProcessBuilder("sh", "-c", …)`, `new String[] {"/bin/bash",
# "-c", …}`, `spawn('sh', ['-c', …])`, `Arrays.asList("cmd.exe", "/c", …)`.
SHELL_LIST = (
    r"(?:[\"'](?:/usr)?(?:/bin/)?(?:ba|z|da|k)?sh[\"']\s*,\s*\[?\s*[\"']-c[\"']"
    r"|[\"']cmd(?:\.exe)?[\"']\s*,\s*\[?\s*[\"']/[cC][\"'])\s*,\s*"
)
_SHELL_LIST_NAME = LazyPattern(rf"{SHELL_LIST}(?P<name>[A-Za-z_$][\w$]*)\s*[,)\]}}]")


def _name_evidence(text: str, start: int, pattern: LazyPattern = _PASSED_NAME) -> str | None:
    r"""The command is a name the added lines above assign a formatted string (`const command =
    \`git log ${ref}\`; exec(command)`)."""
    passed = pattern.compiled().match(text, start)
    if passed is None:
        return None
    name = passed.group("name")
    values = [value for value in assigned_texts(text[:start], name) if FORMATTED.search(value)]
    if not values or all(_only_constant_interpolations(value, 0) for value in values):
        return None
    return f"`{name}` holds a command built above: {_ONE_STRING}"


# Java's runtime held in a name (`Runtime r = Runtime.getRuntime(); … r.exec(cmd + input)`), given a
# command joined from a literal or a name and more.
_RUNTIME_NAMED = LazyPattern(
    r"(?<![\w$.])(?P<runtime>[A-Za-z_]\w*)\s*\.\s*exec\(\s*(?:\"[^\"]*\"|[A-Za-z_]\w*)\s*\+"
)


def _runtime_evidence(text: str, start: int) -> str | None:
    """The name the command is run by holds `Runtime.getRuntime()` (the lines above assign it)."""
    called = _RUNTIME_NAMED.compiled().match(text, start)
    if called is None:
        return None
    runtime = re.escape(called.group("runtime"))
    assigned = re.search(rf"(?<![\w$.]){runtime}\s*=\s*Runtime\s*\.\s*getRuntime\s*\(\s*\)", text[:start])
    return None if assigned is None else _ONE_STRING


_WHAT = "a shell command is built from a formatted string"


def _passed_name_rules(pattern: LazyPattern, as_it_came: str) -> tuple[LineRule, LineRule]:
    """The two readings of a command passed as a name (`pattern`'s `name` group): built into it by
    the lines above, or request input as it came (`as_it_came` its evidence), the request chain
    followed from the name in both."""
    return (
        LineRule(RULE_SHELL, pattern, _WHAT, functools.partial(_name_evidence, pattern=pattern),
                 lines_before=NAME_LINES_ABOVE, chained_group="name"),
        LineRule(RULE_SHELL, pattern, AS_IT_CAME[0], functools.partial(passed_as_it_came, pattern=pattern),
                 lines_before=NAME_LINES_ABOVE, chained_group="name", chained_evidence=as_it_came),
    )


LINE_RULES = (
    LineRule(
        RULE_SHELL,
        LazyPattern(_JS_EXEC + r"(?:`[^`]*\$\{|[\"'][^\"']*[\"']\s*\+)"),
        _WHAT,
        _line_evidence,
    ),
    LineRule(
        RULE_SHELL,
        LazyPattern(_GO_SHELL + r"(?:fmt\.Sprintf\(|[^)]*\+)"),
        _WHAT,
        _line_evidence,
    ),
    LineRule(
        RULE_SHELL,
        LazyPattern(_JAVA_RUNTIME + r"(?:\"[^\"]*\"\s*\+|String\.format\()"),
        _WHAT,
        _line_evidence,
    ),
    LineRule(RULE_SHELL, _RUNTIME_NAMED, _WHAT, _runtime_evidence, lines_before=NAME_LINES_ABOVE),
    LineRule(
        RULE_SHELL,
        LazyPattern(SHELL_LIST + r"(?:\"[^\"]*\"\s*\+|'[^']*'\s*\+|`[^`]*\$\{|\$\"|String\.format\(|fmt\.Sprintf\("
                    r"|[A-Za-z_$][\w$.]*\s*\+)"),
        _WHAT,
        _line_evidence,
    ),
    *_passed_name_rules(_PASSED_NAME, AS_IT_CAME[1]),
    *_passed_name_rules(
        _SHELL_LIST_NAME,
        "the command line a shell is handed is request input itself: whoever sends the request writes it",
    ),
)
