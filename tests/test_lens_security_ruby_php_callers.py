"""Ruby's and PHP's sinks reached through a caller: a method builds the text from a parameter, and a
call of it in the change hands it request input, up to two calls up, in the file or in another;
and what clears a value on the way (an escape around the value itself, a check against a list)."""

from __future__ import annotations

from pathlib import Path

from reviewgate.gate import blocks
from testing.lenses import review_change

SECURITY = ("security/sql-injection", "security/shell-injection", "security/eval")

MODEL = '''class Benefits < ApplicationRecord
  def self.save(file, backup = false)
    data_path = Rails.root.join("public", "data")
    make_backup(file, data_path) if backup == "true"
  end

  def self.make_backup(file, data_path)
    system("cp #{data_path}/#{file.original_filename} #{data_path}/bak#{Time.now.to_i}")
  end

  def self.by_name(name)
    where("name = '#{name}'")
  end

  def self.by_number(number)
    where("number = #{number}")
  end

  scope :tagged, ->(tag, column = "*") { select(column).where("tag = '#{tag}'") }
end
'''
CONTROLLER = '''class BenefitFormsController < ApplicationController
  def upload
    file = params[:benefits][:upload]
    Benefits.save(file, params[:benefits][:backup])
  end

  def search
    Benefits.by_name(params[:name])
    Benefits.by_number(params[:number].to_i)
    Benefits.tagged params[:tag]
  end
end
'''


def _security(tmp_path: Path, files: dict[str, str]) -> list[tuple[str, int, str, str]]:
    findings = review_change(tmp_path, {"README.md": "x\n"}, files)
    return sorted((item.path, item.line, item.rule, item.body) for item in findings if item.rule in SECURITY
                  and item.severity.value == "major" and blocks(item))


def test_a_model_method_a_controller_hands_request_input_to_blocks_with_the_calls_named(tmp_path: Path) -> None:
    found = _security(tmp_path, {"app/models/benefits.rb": MODEL, "app/controllers/benefit_forms_controller.rb": CONTROLLER})
    assert [(path, line, rule) for path, line, rule, _ in found] == [
        ("app/models/benefits.rb", 8, "security/shell-injection"),
        ("app/models/benefits.rb", 12, "security/sql-injection"),
        ("app/models/benefits.rb", 19, "security/sql-injection"),
    ]
    assert found[0][3].endswith(
        "Request input reaches it: `file`, from `params[:benefits][:upload]` at line 3, handed to `save` as `file` at "
        "app/controllers/benefit_forms_controller.rb:4, handed to `make_backup` as `file` at line 4."
    )
    assert found[1][3].endswith(
        "`params[:name]` (line 8), handed to `by_name` as `name` at app/controllers/benefit_forms_controller.rb:8."
    )


def test_a_method_no_caller_in_the_change_hands_request_input_is_no_finding(tmp_path: Path) -> None:
    assert _security(tmp_path, {"app/models/benefits.rb": MODEL}) == []


def test_a_class_method_called_on_another_class_is_not_this_one(tmp_path: Path) -> None:
    other = CONTROLLER.replace("Benefits.", "Claims.")
    assert _security(tmp_path, {"app/models/benefits.rb": MODEL, "app/controllers/benefit_forms_controller.rb": other}) == []


PHP_MODEL = '''<?php
class UserModel {
    public function byName($name) {
        return $this->db->query("SELECT * FROM users WHERE name = '" . $name . "'");
    }

    public function sorted($sort) {
        $sorts = array('name', 'email');
        if (in_array($sort, $sorts)) {
            return $this->db->query("SELECT * FROM users ORDER BY " . $sort);
        }
    }
}

function user_by_id($id) {
    return mysqli_query($GLOBALS['db'], "SELECT * FROM users WHERE id = $id");
}
'''
PHP_PAGE = '''<?php
require 'UserModel.php';
$model = new UserModel();
$rows = $model->byName($_GET['name']);
$sorted = $model->sorted($_GET['sort']);
$user = user_by_id((int) $_GET['id']);
'''


def test_a_php_method_and_function_reached_from_a_page(tmp_path: Path) -> None:
    found = _security(tmp_path, {"lib/UserModel.php": PHP_MODEL, "public/users.php": PHP_PAGE})
    assert [(path, line, rule) for path, line, rule, _ in found] == [("lib/UserModel.php", 4, "security/sql-injection")]
    assert found[0][3].endswith("`$_GET['name']` (line 4), handed to `byName` as `$name` at public/users.php:4.")
    unchecked = PHP_PAGE.replace("(int) $_GET['id']", "$_GET['id']")
    found = _security(tmp_path / "unchecked", {"lib/UserModel.php": PHP_MODEL, "public/users.php": unchecked})
    assert [(path, line) for path, line, _, _ in found] == [("lib/UserModel.php", 4), ("lib/UserModel.php", 16)]


def test_a_raw_json_body_and_a_silenced_assignment_hold_request_input(tmp_path: Path) -> None:
    page = (
        "<?php\n"
        "$data = json_decode(file_get_contents('php://input'));\n"
        '@$sql = "UPDATE users SET name = \'" . $data->name . "\' WHERE id = " . $data->id;\n'
        "mysqli_query($db, $sql);\n"
    )
    found = _security(tmp_path, {"api/change_user.php": page})
    assert [(line, rule) for _, line, rule, _ in found] == [(4, "security/sql-injection")]
    assert found[0][3].endswith("`$sql`, from `json_decode(file_get_contents('php://input'))` at line 2.")


def test_an_escape_clears_the_value_it_wraps_not_the_statement(tmp_path: Path) -> None:
    page = (
        "<?php\n"
        '$sql = "SELECT * FROM t WHERE id = " . intval($_GET[\'id\']);\n'
        '$sql .= " AND name = \'" . $_GET[\'name\'] . "\'";\n'
        "mysqli_query($db, $sql);\n"
        '$safe = "SELECT * FROM t WHERE id = " . intval($_GET[\'id\']) . " LIMIT " . (int) $_GET[\'limit\'];\n'
        "mysqli_query($db, $safe);\n"
    )
    found = _security(tmp_path, {"list.php": page})
    assert [(line, rule) for _, line, rule, _ in found] == [(4, "security/sql-injection")]


def test_a_function_of_the_file_that_returns_its_parameter_as_text_passes_input_on(tmp_path: Path) -> None:
    # `blacklist` strips words and returns the rest; `digits` converts, `quoted` escapes for quotes.
    page = (
        "<?php\n"
        "function blacklist($id) {\n"
        "    $id = preg_replace('/or/i', '', $id);\n"
        "    return $id;\n"
        "}\n"
        "function digits($id) {\n"
        "    return intval($id);\n"
        "}\n"
        "function quoted($value) {\n"
        "    return mysqli_real_escape_string($GLOBALS['db'], $value);\n"
        "}\n"
        "$id = blacklist($_GET['id']);\n"
        "$rows = mysqli_query($db, \"SELECT * FROM users WHERE id = $id\");\n"
        "$number = digits($_GET['id']);\n"
        "$more = mysqli_query($db, \"SELECT * FROM users WHERE id = $number\");\n"
        "$name = quoted($_GET['name']);\n"
        "$named = mysqli_query($db, \"SELECT * FROM users WHERE name = '$name'\");\n"
    )
    found = _security(tmp_path, {"lessons/filter.php": page})
    assert [(line, rule) for _, line, rule, _ in found] == [(13, "security/sql-injection")]
    assert found[0][3].endswith("`$id`, from `blacklist($_GET['id'])` at line 12.")
