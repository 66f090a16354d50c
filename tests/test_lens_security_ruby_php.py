"""Ruby's and PHP's shell, SQL and eval sinks: a finding, major, only where request input reaches
the text they run, directly, by interpolation or concatenation, or through names assigned above in
the same method; bound parameters, escapes, number conversions and digit checks clear it."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.gate import blocks
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.languages.ruby_php_text import live_code
from testing.lenses import review_change

SECURITY = ("security/sql-injection", "security/shell-injection", "security/eval")

PHP = '''<?php
if (isset($_REQUEST['Submit'])) {
    $id = $_REQUEST['id'];
    $query = "SELECT first_name, last_name FROM users WHERE user_id = '$id';";
    $result = mysqli_query($db, $query);
    $rows = $pdo->query("SELECT * FROM t WHERE name = '{$_GET['name']}'");
    $target = $_REQUEST['ip'];
    $target = str_replace(array('&&', ';'), '', $target);
    $cmd = shell_exec('ping -c 4 ' . $target);
    $listing = `ls {$_GET['dir']}`;
    eval('$total = ' . $_POST['expression'] . ';');
}
'''
PHP_SAFE = '''<?php
$by_number = mysqli_query($db, "SELECT * FROM users WHERE id = " . intval($_GET['id']));
$name = mysqli_real_escape_string($db, $_POST['name']);
$by_name = mysqli_query($db, "SELECT * FROM users WHERE name = '$name'");
$statement = $pdo->prepare("SELECT * FROM users WHERE id = ?");
$statement->execute([$_GET['id']]);
if (preg_match('/^\\d+$/', $_GET['user_id'])) {
    $user = $_GET['user_id'];
    $checked = mysqli_query($db, "SELECT * FROM users WHERE user_id = '$user'");
}
$octet = explode('.', $_REQUEST['ip']);
if (is_numeric($octet[0]) && is_numeric($octet[1])) {
    $address = $octet[0] . '.' . $octet[1];
    $ping = shell_exec('ping -c 4 ' . $address);
}
$files = shell_exec('ls -l');
$quoted = shell_exec('ping ' . escapeshellarg($_GET['host']));
// $commented = shell_exec('ping ' . $_GET['host']);
$single = mysqli_query($db, 'SELECT * FROM t WHERE note = "$_GET"');
'''
RUBY = '''class UsersController < ApplicationController
  def update
    user = User.where("id = '#{params[:user][:id]}'")[0]
    host = params[:host]
    output = `ping -c1 #{host}`
    system("nslookup #{host}")
    name = "prefix #{host}"
    User.find_by_sql("SELECT * FROM users WHERE name = '#{name}'")
    User.where("name = '" + params[:name] + "'")
    eval(params[:code])
    system params[:cmd]
    User.update_all "name = '#{params[:name]}'"
    User.where(params[:filter])
    User.find_by(*params[:user])
    system("bash", "-c", params[:script])
    IO.popen(["/bin/sh", "-c", "ls #{params[:dir]}"])
    User.where("id = #{params[:id].to_i} AND name = '#{params[:name]}'")
    User.where(["name = '#{params[:name]}' AND age > ?", params[:age]])
    open(params[:url]).read
    Kernel.open("#{params[:dir]}/index.html")
  end
end
'''
RUBY_SAFE = '''class UsersController < ApplicationController
  def update
    bound = User.where("id = ?", params[:id])
    conditions = User.where(id: params[:id])
    hash = User.where(user: params[:user])
    named = User.where(conditions)
    sorted = User.order(params[:sort])
    system("ping", "-c1", params[:host])
    age = params[:age].to_i
    User.where("age > #{age}")
    # User.where("id = #{params[:id]}")
    literal = User.where('id = #{params[:id]}')
    escaped = `ping #{Shellwords.escape(params[:host])}`
    User.where("id = #{current_user.id}")
    system("ls", params[:dir])
    system "ls" if params[:list]
    User.where("id = #{Integer(params[:id])}")
    direction = %w[asc desc].include?(params[:dir]) ? params[:dir] : "asc"
    User.where("x = 1 ORDER BY name #{direction}") if %w[asc desc].include?(params[:dir])
    by_path = User.find_by(path: "/" + params[:id])
    liked = User.where(["email LIKE ?", "%" + params[:query] + "%"])
    page = open("/srv/pages/#{params[:page]}.html").read
    file = File.open(params[:path])
    searched = User.where("$text" => {"$search" => params[:q]})
    tagged = User.tagged(params[:tag]) if params[:tag]
    User.where("id IN (#{tagged})")
  end
end
'''


@pytest.mark.parametrize(
    ("path", "text", "expected"),
    [
        ("source/low.php", PHP, {
            5: ("security/sql-injection", "`$query`, from `$_REQUEST['id']` at line 3"),
            6: ("security/sql-injection", "`\"SELECT * FROM t WHERE name = '{$_GET['name']}'\"` (line 6)"),
            9: ("security/shell-injection", "`$target`, from `$_REQUEST['ip']` at line 7"),
            10: ("security/shell-injection", "`ls {$_GET['dir']}` (line 10)"),
            11: ("security/eval", "`'$total = ' . $_POST['expression'] . ';'` (line 11)"),
        }),
        ("app/controllers/users_controller.rb", RUBY, {
            3: ("security/sql-injection", "`\"id = '#{params[:user][:id]}'\"` (line 3)"),
            5: ("security/shell-injection", "`host`, from `params[:host]` at line 4"),
            6: ("security/shell-injection", "`host`, from `params[:host]` at line 4"),
            8: ("security/sql-injection", "`name`, from `params[:host]` at line 4"),
            9: ("security/sql-injection", "`\"name = '\" + params[:name] + \"'\"` (line 9)"),
            10: ("security/eval", "`params[:code]` (line 10)"),
            11: ("security/shell-injection", "`params[:cmd]` (line 11)"),
            12: ("security/sql-injection", "`\"name = '#{params[:name]}'\"` (line 12)"),
            13: ("security/sql-injection", "`params[:filter]` (line 13)"),
            14: ("security/sql-injection", "`*params[:user]` (line 14)"),
            15: ("security/shell-injection", "`params[:script]` (line 15)"),
            16: ("security/shell-injection", "`\"ls #{params[:dir]}\"` (line 16)"),
            17: ("security/sql-injection", "`\"id = #{params[:id].to_i} AND name = '#{params[:name]}'\"` (line 17)"),
            18: ("security/sql-injection", "`\"name = '#{params[:name]}' AND age > ?\"` (line 18)"),
            19: ("security/shell-injection", "`params[:url]` (line 19)"),
            20: ("security/shell-injection", "`params[:dir]` (line 20)"),
        }),
    ],
    ids=["php", "ruby"],
)
def test_request_input_reaching_a_sink_blocks_and_names_its_source(
    tmp_path: Path, path: str, text: str, expected: dict[int, tuple[str, str]]
) -> None:
    findings = [item for item in review_change(tmp_path, {"README.md": "x\n"}, {path: text}) if item.rule in SECURITY]
    assert {item.line: item.rule for item in findings} == {line: rule for line, (rule, _) in expected.items()}
    for item in findings:
        assert item.severity.value == "major" and blocks(item)
        assert item.body.endswith(f"Request input reaches it: {expected[item.line][1]}."), item.body


@pytest.mark.parametrize(("path", "text"), [("source/safe.php", PHP_SAFE), ("app/controllers/safe_controller.rb", RUBY_SAFE)],
                         ids=["php", "ruby"])
def test_bound_escaped_checked_literal_and_commented_sinks_are_no_finding(tmp_path: Path, path: str, text: str) -> None:
    findings = review_change(tmp_path, {"README.md": "x\n"}, {path: text})
    assert [(item.line, item.rule) for item in findings if item.rule in SECURITY] == []


def test_a_handler_in_a_test_file_is_a_fixture(tmp_path: Path) -> None:
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"spec/controllers/users_controller_spec.rb": RUBY})
    assert [item for item in findings if item.rule in SECURITY] == []


@pytest.mark.parametrize(
    ("line", "language", "live"),
    [
        ('x = "id = #{params[:id]}" # note', Language.RUBY, 'x = "' + " " * 5 + '#{params[:id]}"' + " " * 7),
        ("x = 'id = #{params[:id]}'", Language.RUBY, "x = '" + " " * 19 + "'"),
        ('$q = "a \\"$id\\" b";', Language.PHP, '$q = "' + " " * 4 + "$id" + " " * 4 + '";'),
        ("$q = 'a $id' . $_GET['x']; // c", Language.PHP, "$q = '" + " " * 5 + "' . $_GET[' ']; " + " " * 4),
    ],
)
def test_live_code_keeps_interpolations_and_blanks_literal_text(line: str, language: Language, live: str) -> None:
    assert live_code(line, language) == live
    assert len(live_code(line, language)) == len(line)


def test_values_a_nested_prepare_binds_are_not_the_statement(tmp_path: Path) -> None:
    bound = '<?php\n$rows = $wpdb->query($wpdb->prepare("SELECT * FROM t WHERE name = %s", $_GET["name"]));\n'
    written = '<?php\n$rows = $wpdb->query($wpdb->prepare("SELECT * FROM t WHERE name = \'{$_GET["name"]}\'"));\n'
    assert [item for item in review_change(tmp_path / "bound", {"README.md": "x\n"}, {"wp/list.php": bound})
            if item.rule in SECURITY] == []
    assert [item.line for item in review_change(tmp_path / "written", {"README.md": "x\n"}, {"wp/list.php": written})
            if item.rule in SECURITY] == [2]


def test_a_statement_written_over_several_lines_keeps_its_interpolations(tmp_path: Path) -> None:
    logged = (
        "<?php\n"
        "$ip = isset($_SERVER['HTTP_X_FORWARDED_FOR']) ? $_SERVER['HTTP_X_FORWARDED_FOR'] : $_SERVER['REMOTE_ADDR'];\n"
        '$log_query = "INSERT INTO access_log (user_id, ip_address) VALUES\n'
        "    ({$user_id}, '{$ip}')\";\n"
        "mysqli_query($db, $log_query);\n"
    )
    findings = [item for item in review_change(tmp_path, {"README.md": "x\n"}, {"log.php": logged}) if item.rule in SECURITY]
    assert [(item.line, item.rule) for item in findings] == [(5, "security/sql-injection")]
    assert "from `isset($_SERVER['HTTP_X_FORWARDED_FOR'])" in findings[0].body


def test_a_quote_escape_protects_only_a_quoted_value(tmp_path: Path) -> None:
    escaped = (
        "<?php\n"
        "$id = mysqli_real_escape_string($db, $_POST['id']);\n"
        '$unquoted = mysqli_query($db, "SELECT * FROM users WHERE user_id = $id;");\n'
        "$quoted = mysqli_query($db, \"SELECT * FROM users WHERE user_id = '$id';\");\n"
        "$joined = mysqli_query($db, \"SELECT * FROM users WHERE user_id = '\" . $id . \"'\");\n"
        "$ping = shell_exec('ping ' . $id);\n"
    )
    findings = [item for item in review_change(tmp_path, {"README.md": "x\n"}, {"users.php": escaped}) if item.rule in SECURITY]
    assert [(item.line, item.rule) for item in findings] == [(3, "security/sql-injection"), (6, "security/shell-injection")]
    assert findings[0].body.endswith("Request input reaches it: `$id`, from `mysqli_real_escape_string($db, $_POST['id'])` "
                                     "at line 2 (written unquoted).")


def test_a_value_a_call_turns_into_something_else_or_a_params_argument_is_no_chain(tmp_path: Path) -> None:
    # `time_interval` parses the period into a number and a unit from a fixed table; outside a
    # controller, `params` is a method's own argument, not the request.
    controller = '''class ModController < ApplicationController
  def period(query)
    length = time_interval(params[:period] || "1d")
    query.where("created_at >= datetime('now', '-#{length[:dur]} #{length[:intv]}')")
    name = params[:name].strip
    query.where("name = '#{name}'")
  end
end
'''
    cache = '''class StatementCache
  def execute(params, connection)
    sql = "SELECT * FROM t WHERE #{params.first}"
    connection.execute(sql)
  end
end
'''
    findings = review_change(tmp_path, {"README.md": "x\n"},
                             {"app/controllers/mod_controller.rb": controller, "lib/statement_cache.rb": cache})
    assert [(item.path, item.line) for item in findings if item.rule in SECURITY] == [("app/controllers/mod_controller.rb", 6)]


def test_a_doc_comment_that_names_the_superglobals_runs_nothing(tmp_path: Path) -> None:
    documented = (
        "<?php\n"
        "/**\n"
        " * The current query parameters (everything in `$_GET` and `$_POST`) are read.\n"
        " * Defaults to `$_GET + $_POST`.\n"
        " */\n"
        "function request() { return 1; }\n"
    )
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"core/Request.php": documented})
    assert [item for item in findings if item.rule in SECURITY] == []
