"""security/ look-alikes that whole-tree scans of released projects found, each beside the
exposure it resembles, which must still be reported."""

from __future__ import annotations

from pathlib import Path

from testing.lenses import found_at, review_change


def test_eval_inside_a_string_or_template_literal_is_text_not_a_call(tmp_path: Path) -> None:
    emitter = (
        "export function emit(source, RawSource) {\n"
        "  const wrapped = new RawSource(`eval(${JSON.stringify(source)})`);\n"
        "  const global = \"return this || new Function('return this')();\";\n"
        "  return [wrapped, global];\n"
        "}\n"
    )
    runner = "export function run(userInput) {\n  return eval(userInput);\n}\n"
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/emit.js": emitter, "src/run.js": runner})
    assert found_at(findings, "security/eval") == [("src/run.js", 2)]


def test_exec_of_a_compiled_literal_and_a_shell_running_its_user_code_are_not_reported(tmp_path: Path) -> None:
    literal = 'def fail():\n    exec(compile("1/0", "<string>", "exec"))\n'
    shell = (
        "import code\nimport os\n\n\ndef shell(namespace):\n"
        '    startup = os.environ.get("PYTHONSTARTUP")\n'
        "    with open(startup) as f:\n"
        '        eval(compile(f.read(), startup, "exec"), namespace)\n'
        "    code.interact(local=namespace)\n"
    )
    handler = (
        "def calculate(request):\n"
        '    user_input = request.args["expression"]\n'
        "    exec(compile(user_input, \"<input>\", \"exec\"))\n"
        "    return eval(user_input)\n"
    )
    findings = review_change(
        tmp_path,
        {"README.md": "x\n"},
        {"app/fail.py": literal, "app/shell.py": shell, "app/handler.py": handler},
    )
    assert found_at(findings, "security/eval") == [("app/handler.py", 3), ("app/handler.py", 4)]


def test_importing_the_interpreter_exempts_only_the_shell_not_the_rest_of_the_module(tmp_path: Path) -> None:
    console = (
        "import code\n\n\n"
        "class Console(code.InteractiveInterpreter):\n"
        "    def run(self, line):\n"
        "        exec(line, self.locals)\n\n\n"
        "def shell(namespace, command):\n"
        "    if command:\n"
        "        exec(command, namespace)\n"
        "    code.interact(local=namespace)\n\n\n"
        "def calculate(request):\n"
        '    return eval(request.args["expression"])\n'
    )
    local = "def handler(request):\n    from code import interact\n    return eval(request.body)\n"
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"app/console.py": console, "app/local.py": local})
    # The shell (a class built on the interpreter, a function calling it) is exempt; a request
    # handler beside it is not, nor one that imports the interpreter and never uses it.
    assert found_at(findings, "security/eval") == [("app/console.py", 16), ("app/local.py", 3)]


def test_sql_with_parameters_apart_or_quoted_identifiers_is_not_reported(tmp_path: Path) -> None:
    source = '''def drop(cursor, connection, table):
    query = "DROP TABLE %s" % table
    cursor.execute(query)


def find(cursor, name):
    query = "SELECT * FROM author WHERE first_name = %s"
    return cursor.execute(query, [name])


def drop_quoted(cursor, connection, table):
    cursor.execute("DROP TABLE %s" % connection.ops.quote_name(table))
    quoted = connection.ops.quote_name(table)
    cursor.execute(f"DROP TABLE IF EXISTS {quoted}")
    master = f"{quoted}.sqlite_master"
    query = "SELECT sql FROM %s WHERE name = ? AND type='view'" % (master,)
    cursor.execute(query, [table])


def search(cursor, request):
    cursor.execute(f"SELECT * FROM users WHERE name = '{request.args['name']}'")
    cursor.execute("SELECT * FROM %s WHERE id = %s" % (quote_name(request.args["t"]), request.args["id"]))
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"app/queries.py": source})
    assert found_at(findings, "security/sql-injection") == [
        ("app/queries.py", 3),
        ("app/queries.py", 21),
        ("app/queries.py", 22),
    ]


def test_a_method_named_eval_and_new_function_of_literals_are_not_the_global_eval(tmp_path: Path) -> None:
    # less 4.9.1 `lib/less/tree/variable.js:28` (one of 32 tree nodes defining `eval(context)`),
    # bullmq 6.7.6 `lib/classes/node-redis-client.d.ts:34`, ejs 7.0.2 `lib/cjs/ejs.js:91`,
    # pino 10.4.0 `test/esm/index.test.js:7`.
    node = (
        "class Variable extends Node {\n"
        "    eval(context) {\n"
        "        return context.frames[0].variable(this.name);\n"
        "    }\n"
        "    static async eval(context): Promise<Node> {\n"
        "        return context;\n"
        "    }\n"
        "}\n"
    )
    declaration = (
        "export declare class NodeRedisClient {\n"
        "    eval(lua: string, options: {\n"
        "        keys: string[];\n"
        "    }): Promise<unknown>;\n"
        "}\n"
    )
    literal = (
        "ejs.promiseImpl = (new Function('return this;'))().Promise;\n"
        "new Function('module', 'return import(module)')('./esm.mjs');\n"
    )
    # The look-alikes: the global `eval` at a statement's start, `new Function` of a value or of a
    # template that interpolates one.
    runner = (
        "export function run(request, body) {\n"
        "  eval(request.query.code);\n"
        "  const made = new Function('a', body);\n"
        "  return new Function(`return (${request.query.expression})`);\n"
        "}\n"
    )
    branch = {"src/variable.js": node, "lib/redis.d.ts": declaration, "lib/ejs.js": literal, "src/run.js": runner}
    findings = review_change(tmp_path, {"README.md": "x\n"}, branch)
    assert found_at(findings, "security/eval") == [("src/run.js", 2), ("src/run.js", 3), ("src/run.js", 4)]


def test_schema_statements_over_escaped_names_are_not_reported(tmp_path: Path) -> None:
    # typeorm 1.1.3's query runners (266 of 499 hits): `driver/postgres/PostgresQueryRunner.js:912`,
    # `driver/aurora-mysql/AuroraMysqlQueryRunner.js:738`, `driver/cockroachdb/CockroachQueryRunner.js:1282`.
    runner = (
        "export class QueryRunner {\n"
        "  renamePrimaryKey(table, upQueries, oldPkName, newPkName) {\n"
        "    upQueries.push(new Query_1.Query(`ALTER TABLE ${this.escapePath(table)} RENAME CONSTRAINT "
        '"${oldPkName}" TO "${newPkName}"`));\n'
        "  }\n"
        "  addUnique(table, upQueries, uniqueIndex, newColumn) {\n"
        "    upQueries.push(new Query_1.Query(`ALTER TABLE ${this.escapePath(table)} ADD UNIQUE INDEX "
        "\\`${uniqueIndex.name}\\` (\\`${newColumn.name}\\`)`));\n"
        "  }\n"
        "  dropColumn(table, upQueries, column, ifExists) {\n"
        "    upQueries.push(new Query_1.Query(`ALTER TABLE ${this.escapePath(table)} DROP COLUMN "
        '${ifExists ? "IF EXISTS " : ""}"${column.name}"`));\n'
        "  }\n"
        "}\n"
    )
    # The look-alikes: a request's value as a table's name, a value in double quotes outside a
    # schema statement (a string in MySQL), a default written in unquoted, an escaped value beside
    # one that is not.
    handler = (
        "export async function handle(db, request) {\n"
        "  await db.query(`ALTER TABLE ${request.body.table} DROP COLUMN legacy`);\n"
        '  await db.query(`SELECT * FROM users WHERE name = "${request.query.name}"`);\n'
        '  await db.query(`ALTER TABLE "${request.body.table}" ALTER COLUMN "c" SET DEFAULT ${request.body.value}`);\n'
        "  await db.query(`SELECT * FROM users WHERE id = ${db.escape(request.query.id)} OR ${request.query.id}`);\n"
        '  return db.query(`CREATE TABLE "${req.body.name}" (id integer)`);\n'
        "}\n"
    )
    branch = {"src/query-runner.js": runner, "src/handler.js": handler}
    findings = review_change(tmp_path, {"README.md": "x\n"}, branch)
    assert found_at(findings, "security/sql-injection") == [("src/handler.js", line) for line in (2, 3, 4, 5, 6)]


def test_tls_verification_off_under_a_named_mode_that_does_not_verify_is_not_reported(tmp_path: Path) -> None:
    # pg 8.23.1 `lib/connection-parameters.js:35, 94`, postgres 4.2.0 `src/socket.js:22`: libpq's
    # modes, chosen by the user by name.
    driver = (
        "const readSSLConfigFromEnvironment = function () {\n"
        "  switch (process.env.PGSSLMODE) {\n"
        "    case 'disable':\n"
        "      return false\n"
        "    case 'no-verify':\n"
        "      return { rejectUnauthorized: false }\n"
        "  }\n"
        "}\n"
        "export function secureOptions(ssl) {\n"
        "  return ssl === 'require' || ssl === 'allow' || ssl === 'prefer'\n"
        "    ? workers ? {} : { rejectUnauthorized: false }\n"
        "    : {}\n"
        "}\n"
    )
    # The look-alikes: the same setting under a mode that verifies, under another condition, alone.
    client = (
        "export function agentFor(mode) {\n"
        "  if (mode === 'verify-full') {\n"
        "    return { rejectUnauthorized: false }\n"
        "  }\n"
        "  if (process.env.NODE_ENV === 'development') {\n"
        "    return { rejectUnauthorized: false }\n"
        "  }\n"
        "  return { rejectUnauthorized: false }\n"
        "}\n"
    )
    branch = {"lib/connection-parameters.js": driver, "src/agent.js": client}
    findings = review_change(tmp_path, {"README.md": "x\n"}, branch)
    assert found_at(findings, "security/tls-verification-off") == [("src/agent.js", line) for line in (3, 6, 8)]


def test_eval_in_a_test_file_is_not_reported_and_in_code_beside_it_is(tmp_path: Path) -> None:
    # simplejson 4.3.0 `simplejson/tests/test_decode.py:104`: a test evaluates its own fixture.
    test = (
        "import json\n\n\n"
        "def test_empty_objects():\n"
        "    s = '{}'\n"
        "    assert json.loads(s) == eval(s)\n"
    )
    # docutils 0.23.1 `test/functional/expected/ui/default/slides.js:353`, an expected output.
    expected = 'element.addEventListener("click", new Function("e",\n    "return go(e);"), true);\n'
    # The look-alikes: the same calls in the code the tests exercise.
    code = "def parse(text):\n    return eval(text)\n"
    script = 'element.addEventListener("click", new Function("e",\n    handlerSource), true);\n'
    branch = {
        "simplejson/tests/test_decode.py": test,
        "test/functional/expected/slides.js": expected,
        "simplejson/decoder.py": code,
        "ui/slides.js": script,
    }
    findings = review_change(tmp_path, {"README.md": "x\n"}, branch)
    assert found_at(findings, "security/eval") == [("simplejson/decoder.py", 2), ("ui/slides.js", 1)]


def test_schema_statements_over_names_joined_in_identifier_quotes_just_above_are_not_reported(tmp_path: Path) -> None:
    # typeorm 1.1.3 `driver/postgres/PostgresQueryRunner.js:743-746` and `:1338-1339`,
    # `driver/mysql/MysqlQueryRunner.js:1231-1234`: the names are quoted where the list is built.
    runner = (
        "export class QueryRunner {\n"
        "  addPrimaryKey(table, upQueries, primaryColumns, pkName) {\n"
        "    const columnNames = primaryColumns\n"
        '      .map((column) => `"${column.name}"`)\n'
        '      .join(", ");\n'
        "    upQueries.push(new Query_1.Query(`ALTER TABLE ${this.escapePath(table)} ADD CONSTRAINT "
        '"${pkName}" PRIMARY KEY (${columnNames})`));\n'
        "  }\n"
        "  addMysqlPrimaryKey(table, upQueries, columnNames) {\n"
        "    const columnNamesString = columnNames\n"
        "      .map((columnName) => `\\`${columnName}\\``)\n"
        '      .join(", ");\n'
        "    upQueries.push(new Query_1.Query(`ALTER TABLE ${this.escapePath(table)} ADD PRIMARY KEY "
        "(${columnNamesString})`));\n"
        "  }\n"
        "  dropColumn(table, upQueries, column, ifExists) {\n"
        '    const ifExistsClause = ifExists ? "IF EXISTS " : "";\n'
        "    upQueries.push(new Query_1.Query(`ALTER TABLE ${this.escapePath(table)} DROP COLUMN "
        '${ifExistsClause}"${column.name}"`));\n'
        "  }\n"
        "}\n"
    )
    # The look-alikes: a list of a request's names joined unquoted, a quoted list in a statement
    # that reads data (double quotes are a string there in MySQL).
    handler = (
        "export async function handle(db, request) {\n"
        '  const columns = request.body.columns.join(", ");\n'
        "  await db.query(`ALTER TABLE accounts ADD PRIMARY KEY (${columns})`);\n"
        '  const names = request.body.names.map((name) => `"${name}"`).join(", ");\n'
        "  return db.query(`SELECT * FROM users WHERE name IN (${names})`);\n"
        "}\n"
    )
    branch = {"src/query-runner.js": runner, "src/handler.js": handler}
    findings = review_change(tmp_path, {"README.md": "x\n"}, branch)
    assert found_at(findings, "security/sql-injection") == [("src/handler.js", 3), ("src/handler.js", 5)]
