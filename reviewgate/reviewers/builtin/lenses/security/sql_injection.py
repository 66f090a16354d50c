"""`security/sql-injection`: an SQL statement built by formatting and executed. Python's
`execute`/`executemany`/`raw`/… of a formatted statement (also through a variable), unless every
value formatted in is a literal or an identifier quoted by a quoting helper; in the C-like
languages a query method given a template or a concatenation, a template read to its end, unless
every value in the template is escaped (or, in a schema statement, a name in identifier quotes)."""

from __future__ import annotations

import ast
import functools
import re

from reviewgate.findings import FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.lenses.security.line_rules import (
    FORMATTED,
    LITERAL_CHOICE,
    NAME_LINES_ABOVE,
    LineRule,
    assigned_texts,
    passed_as_it_came,
)
from reviewgate.reviewers.builtin.lenses.security.python_calls import (
    PythonModule,
    dotted,
    is_formatted,
    literal_text,
    substituted_values,
)
from reviewgate.reviewers.builtin.rule import Example, File, Rule

SQL_INJECTION = Rule(
    id="security/sql-injection",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    severity_note="(minor unless request input reaches it)",
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
        "Java `executeQuery(\"…\" + x)`, and in those languages (C# and Kotlin too) a name the 40 added lines "
        "above assign such text (`String query = \"SELECT … '\" + name + \"'\"; … executeQuery(query)`, "
        "`query := fmt.Sprintf(…)`, `sql += \" AND …\" + x`, C#'s `$\"…{x}\"`, Kotlin's `\"…$x\"`); and a "
        "name holding request input itself given to a call that takes only SQL (JDBC's `executeQuery`, "
        "`executeUpdate`, `prepareStatement`, `addBatch`; Go's `db.Query`/`tx.Exec`…): the request's text is "
        "the statement "
        "— only when the formatted text is a statement: SELECT … FROM, "
        "INSERT INTO, UPDATE … SET, DELETE FROM, SELECT/UPDATE/DELETE … WHERE, "
        "CREATE/DROP/ALTER/TRUNCATE TABLE/INDEX/VIEW/… (`db.query(\\`SELECT * FROM users WHERE id = "
        "${id}\\`)`). **Major** (it blocks) where request input reaches the formatted text within the "
        "function: a request's query, form, body, headers or cookies (`request.args`, `req.query`, "
        "`r.URL.Query()`, `request.getParameter(…)`, `Request.Query`) directly or through names "
        "assigned from it, or a route parameter the framework fills (`@app.get(\"/u/{name}\")`, "
        "`@RequestParam`); **minor** otherwise. The chain also goes up to two calls up: a caller in the "
        "same module or file, or another file of the change that calls the function it imports (in Java, "
        "C# and Kotlin: a file that names the method's class), hands "
        "request input to the parameter the text is built from. Ruby and PHP: **major** and only where request input is in the "
        "text run, directly (`\"#{params[:id]}\"`, `\"… '{$_GET['id']}'\"`, `. $_GET['id']`), through names assigned "
        "above in the method, or from a caller in the change up to two calls up: Active Record's `where`/`having`/`joins`/"
        "`from`/`select`/`update_all`/`find_by`… given a string or a request value whole (with or without parentheses), "
        "`find_by_sql`, `execute`, `exec_query`, `select_all`…, `Arel.sql`; `mysqli_query`, `pg_query`, "
        "`mysql_query`, `->query`/`->prepare`/`->exec`, Laravel's `DB::select`/`DB::statement`/`DB::raw` and "
        "`whereRaw`-style methods; a number conversion or an escape around the value, or a check that it is digits or "
        "one of a list, clears it"
    ),
    not_on=(
        "placeholders and parameters; a method or variable named `query` with a URL or search string "
        "(`http.query(\\`${base}/search?q=${term}\\`)`); text with SQL-ish words but no statement "
        "(`select the best ${term}`); a literal query held in a variable and run with its parameters "
        "apart (`query = \"… = %s\"; cursor.execute(query, [name])`: the variable's nearest assignment "
        "above the call is read, not another function's of the same name); Python SQL whose every "
        "formatted value is a literal or an identifier quoted by a quoting helper (`quote_name(table)`, "
        "`quote_ident(column)`, directly, through a variable assigned one, or through text formatted "
        "of them, `master = f\"{quoted}.sqlite_master\"`); a JS template whose every value is an "
        "escaping helper's call (`${this.escapePath(table)}`, `${escapeId(name)}`) or a choice of two "
        "literals (`${ifExists ? \"IF EXISTS \" : \"\"}`), or, in a schema statement (CREATE, ALTER, "
        "DROP, TRUNCATE, RENAME, COMMENT ON: no placeholder can carry a name), a name inside identifier "
        "quotes that is not the request's own input (`\"${pkName}\"`, `` \\`${column.name}\\` ``, `[${name}]`): typeorm 1.1.3's query runners, "
        "266 of 499 hits (`driver/postgres/PostgresQueryRunner.js:912`); a name the six added lines "
        "above assign a choice of literals (`const ifExistsClause = ifExists ? \"IF EXISTS \" : \"\"`) "
        "or, in a schema statement, names joined each in identifier quotes (`const columnNames = "
        "columns.map((c) => \\`\"${c.name}\"\\`).join(\", \")`): 79 more of typeorm's; a list "
        "joined unquoted, or quoted in a statement that reads data, still fires"
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
RULE_SQL = SQL_INJECTION.id

_SQL_METHODS = frozenset({"execute", "executemany", "executescript", "raw", "exec_driver_sql", "mogrify"})
# The last part of every name check_call looks for.
CALL_LEAVES = _SQL_METHODS
# The evidence that formatted text is SQL: a statement's verb with its clause (a method or a
# variable named `query` is not evidence; URLs and search strings are called queries too).
_SQL_STATEMENT = LazyPattern(
    r"\bselect\b[\s\S]*?\bfrom\b|\binsert\s+(?:or\s+\w+\s+)?into\b|\bupdate\b[\s\S]*?\bset\b"
    r"|\bdelete\s+from\b|\b(?:select|update|delete)\b[\s\S]*?\bwhere\b"
    r"|\b(?:create|drop|alter|truncate)\s+(?:table|index|view|database|schema)\b",
    re.IGNORECASE,
)

# A helper that quotes an SQL identifier (`connection.ops.quote_name`, psycopg's `quote_ident`,
# `quote_identifier`, `quote_table`).
_QUOTING_HELPER = LazyPattern(r"^_?quote_?(?:name|ident|identifier|table|column|schema)s?$|^qn$", re.IGNORECASE)


# How many names deep a quoted identifier is followed through formatted text (`a = quote(x)`,
# `b = f"{a}.t"`, `execute(f"... {b}")`): enough for a qualified name, bounded for cycles.
_MAX_QUOTED_DEPTH = 3


def _only_quoted_identifiers(module: PythonModule, formatted: ast.expr, depth: int = 0) -> bool:
    """Whether every value formatted into the text is a literal or an identifier quoted by a
    quoting helper (`quote_name(table)`, `quote_ident(column)`), directly or through a name
    assigned one or assigned text formatted of such values (`master = f"{quoted}.sqlite_master"`):
    a table or column name, which no driver parameter can carry, made safe to write in."""
    values = substituted_values(formatted)
    return bool(values) and all(_is_quoted_identifier(module, value, depth) for value in values)


def _is_quoted_identifier(module: PythonModule, node: ast.expr, depth: int) -> bool:
    if isinstance(node, ast.Constant):
        return True
    if isinstance(node, ast.Name):
        assigned = module.value_of(node)
        if assigned is None:
            return False
        if is_formatted(assigned):
            return depth < _MAX_QUOTED_DEPTH and _only_quoted_identifiers(module, assigned, depth + 1)
        node = assigned
    return isinstance(node, ast.Call) and bool(_QUOTING_HELPER.search(dotted(node.func).rsplit(".", 1)[-1]))


def excerpt(text: str, limit: int = 60) -> str:
    flat = " ".join(text.split()).replace("`", "'")
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def _statement_evidence(statement: re.Match[str]) -> str:
    return (
        f"the formatted text is a statement (`{excerpt(statement.group(0))}`) and the values "
        "are formatted into it rather than passed as parameters"
    )


def check_call(module: PythonModule, call: ast.Call, name: str, leaf: str, first: ast.expr | None) -> tuple[str, str, str] | None:
    """(rule, what, evidence) when the call executes a statement built by formatting."""
    if leaf in _SQL_METHODS and isinstance(call.func, ast.Attribute) and first is not None:
        formatted = module.formatted(first)
        statement = _SQL_STATEMENT.search(literal_text(formatted)) if formatted is not None else None
        if statement is not None and formatted is not None and not _only_quoted_identifiers(module, formatted):
            return RULE_SQL, f"SQL built by string formatting is passed to `{leaf}`", _statement_evidence(statement)
    return None


# A JS helper that escapes a value or an identifier for SQL (typeorm's `this.escapePath(table)`,
# mysql's `escape`/`escapeId`, pg's `escapeIdentifier`/`escapeLiteral`), the whole interpolation.
_ESCAPING_CALL = LazyPattern(
    r"(?:[\w$]+\.)*(?:escape|quote)(?:Id|Identifier|Literal|Path|Name|Ident|Table|Column|Schema|String|Value)?s?"
    r"\((?:[^()]|\([^()]*\))*\)",
    re.IGNORECASE,
)
# A schema statement: no driver placeholder can carry the names it is built over, quoting is the fix.
_SCHEMA_STATEMENT = LazyPattern(r"\s*(?:create|drop|alter|truncate|comment\s+on|rename)\b", re.IGNORECASE)
# Identifier quotes around an interpolation in a schema statement: `"${name}"`, `\\`${name}\\``, `[${name}]`.
_IDENTIFIER_QUOTES = (('"', '"'), ("\\`", "\\`"), ("[", "]"))


def _template_body(text: str, start: int) -> str | None:
    """The template literal that the call at `start` is given, up to its closing backtick."""
    opening = text.find("`", start)
    if opening < 0:
        return None
    index = opening + 1
    while index < len(text) and text[index] != "`":
        index += 2 if text[index] == "\\" else 1
    return text[opening + 1 : index] if index < len(text) else None


def _interpolations(body: str) -> list[tuple[int, int]]:
    """(start, end) of each `${…}` of the template's body, braces balanced."""
    spans = []
    index = body.find("${")
    while index >= 0:
        depth, end = 0, index + 1
        while end < len(body):
            depth += {"{": 1, "}": -1}.get(body[end], 0)
            if depth == 0:
                break
            end += 1
        spans.append((index, end + 1))
        index = body.find("${", end + 1)
    return spans


# How many added lines above the statement are read for the assignment of a name it interpolates.
_ASSIGNMENT_LINES_ABOVE = 6
# A list of names joined into text: `primaryColumns.map((column) => \`"${column.name}"\`).join(", ")`.
_JOINED = LazyPattern(r"[\s\S]*\.join\(\s*(?:\"[^\"]*\"|'[^']*')\s*\)")


def _in_identifier_quotes(body: str, start: int, end: int) -> bool:
    """Whether the interpolation at `start:end` is a name inside identifier quotes that is not the
    request's own input: a name from the schema's metadata, where the request's text could close
    the quote itself."""
    from reviewgate.reviewers.builtin.languages.text_flow import find_source, request_sources

    if find_source(request_sources(False), body, start, end) is not None:
        return False
    return any(body[:start].endswith(left) and body[end:].startswith(right) for left, right in _IDENTIFIER_QUOTES)


def _assigned_value(above: str, name: str) -> str | None:
    """The value the nearest `const`/`let`/`var` of the lines above gives `name`, to its `;`."""
    found = list(re.finditer(rf"\b(?:const|let|var)\s+{re.escape(name)}\s*=\s*(?P<value>[^;]*)(?:;|$)", above))
    return found[-1].group("value").strip() if found else None


def _quoted_names_joined(value: str) -> bool:
    """Whether the value joins names each written inside identifier quotes by a template of its own."""
    if not _JOINED.fullmatch(value):
        return False
    bodies = []
    index = value.find("`")
    while index >= 0:
        body = _template_body(value, index)
        if body is None:
            return False
        bodies.append(body)
        index = value.find("`", index + len(body) + 2)
    return bool(bodies) and all(
        spans and all(_in_identifier_quotes(body, start, end) for start, end in spans)
        for body, spans in ((body, _interpolations(body)) for body in bodies)
    )


def _built_here(value: str, above: str, schema: bool) -> bool:
    """Whether the value interpolated is text the code builds: a choice of literals, or, in a
    schema statement, a name the lines above assign names joined in identifier quotes."""
    if LITERAL_CHOICE.fullmatch(value):
        return True
    if not re.fullmatch(r"[\w$]+", value):
        return False
    assigned = _assigned_value(above, value)
    if assigned is None:
        return False
    return bool(LITERAL_CHOICE.fullmatch(assigned)) or (schema and _quoted_names_joined(assigned))


def _only_escaped_values(body: str, above: str) -> bool:
    """Whether every value interpolated is escaped by a helper or text the code builds, or, in a
    schema statement, a name written inside identifier quotes: not input."""
    spans = _interpolations(body)
    schema = _SCHEMA_STATEMENT.match(body) is not None
    for start, end in spans:
        value = body[start + 2 : end - 1].strip()
        if _ESCAPING_CALL.fullmatch(value) or _built_here(value, above, schema):
            continue
        if schema and _in_identifier_quotes(body, start, end):
            continue
        return False
    return bool(spans)


# A string literal in the C-like languages (Java's, Go's and C#'s `"…"`, JavaScript's `'…'` too).
_STRING_LITERAL = LazyPattern(r"\"(?:[^\"\\\n]|\\.)*\"|'(?:[^'\\\n]|\\.)*'")


def _joins_only_literals(text: str, start: int) -> bool:
    """Whether the call's first argument joins string literals alone (`"… GRANTEE =" + " ?"`, a
    formatter's line break): text the code writes whole."""
    opener = text.find("(", start)
    if opener < 0 or text.find("`", opener) >= 0:
        return False
    argument = re.split(r"[,)]", _STRING_LITERAL.compiled().sub("", text[opener + 1 :]), maxsplit=1)[0]
    return "+" in argument and re.search(r"[A-Za-z_$]", argument) is None


def _from_values(value: str) -> bool:
    """Whether formatted text takes a value: a name outside its literals, or one interpolated in
    them (`${x}`, Kotlin's `$x`, C#'s `$"…{x}"`); literals joined alone (`"… = ?" + " AND …"`, a
    line broken in two) take none."""
    outside = _STRING_LITERAL.compiled().sub("", value)
    return re.search(r"[A-Za-z_$]", outside) is not None or re.search(r"\$\{|\$[A-Za-z_]|\$\"[^\"]*\{", value) is not None


def _line_evidence(text: str, start: int) -> str | None:
    statement = _SQL_STATEMENT.search(text, start)
    if statement is None:
        return None  # a method named `query` with a formatted URL or search string
    if _joins_only_literals(text, start):
        return None
    body = _template_body(text, start)
    if body is not None and _only_escaped_values(body, text[: text.rfind("\n", 0, start) + 1]):
        return None  # `ALTER TABLE ${this.escapePath(table)} DROP CONSTRAINT "${name}"`
    return _statement_evidence(statement)


# The database calls the C-like rules read, and one given a bare name (`statement.executeQuery(query)`).
_SQL_CALL = (
    r"\.(?:query|execute|raw|Query|QueryRow|Exec|QueryContext|ExecContext|executeQuery|"
    r"executeUpdate|prepareStatement)\(\s*(?:ctx,\s*)?"
)
_PASSED_NAME = LazyPattern(_SQL_CALL + r"(?P<name>[A-Za-z_$][\w$]*)\s*[,)]")
# The calls that take nothing but SQL (JDBC's, and Go's database/sql on a `db`, `tx` or `conn`): a
# name given them that holds the request's text is a statement its sender writes. `query` and
# `execute` alone are not among them: search and GraphQL clients call theirs that too.
_STATEMENT_PASSED = LazyPattern(
    r"(?:\.(?:executeQuery|executeUpdate|executeLargeUpdate|prepareStatement|addBatch)"
    r"|\b(?:db|DB|tx|conn)\.(?:Query|QueryRow|Exec|QueryContext|QueryRowContext|ExecContext))"
    r"\(\s*(?:ctx,\s*)?(?P<name>[A-Za-z_$][\w$]*)\s*[,)]"
)
def _name_evidence(text: str, start: int) -> str | None:
    """The call is given a name the added lines above assign SQL built by formatting
    (`String query = "SELECT … '" + name + "'"; … executeQuery(query)`)."""
    passed = _PASSED_NAME.compiled().match(text, start)
    if passed is None:
        return None
    name = passed.group("name")
    values = assigned_texts(text[:start], name)
    if not any(FORMATTED.search(value) and _from_values(value) for value in values):
        return None
    evidence = _line_evidence("\n".join(values), 0)
    return None if evidence is None else f"`{name}` holds text built above: {evidence}"


LINE_RULES = (
    LineRule(
        RULE_SQL,
        LazyPattern(
            _SQL_CALL + r"(?:`[^`]*\$\{|fmt\.Sprintf\(\s*\"|String\.format\(\s*\"|\"[^\"]*\"\s*\+|'[^']*'\s*\+)"
        ),
        "SQL built by string formatting is passed to the database",
        _line_evidence,
        spans_lines=True,
        lines_before=_ASSIGNMENT_LINES_ABOVE,
    ),
    LineRule(
        RULE_SQL,
        _PASSED_NAME,
        "SQL built by string formatting is passed to the database",
        _name_evidence,
        spans_lines=True,
        lines_before=NAME_LINES_ABOVE,
        chained_group="name",
    ),
    LineRule(
        RULE_SQL,
        _STATEMENT_PASSED,
        "The request's text is run as SQL",
        functools.partial(passed_as_it_came, pattern=_STATEMENT_PASSED),
        lines_before=NAME_LINES_ABOVE,
        spans_lines=True,
        chained_group="name",
        chained_evidence="the statement passed is request input itself: whoever sends the request writes the SQL",
    ),
)
