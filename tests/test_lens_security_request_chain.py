"""A shell, SQL or eval sink blocks only where request input reaches it within the function
(lenses/security/request_chain.py); built from other values it is reported at minor. Each language
the rules read, on real repositories made in a temporary directory."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.findings import Finding
from reviewgate.reviewers.builtin.lenses.security.request_chain import NO_CHAIN
from testing.lenses import review_change

# Each: a path, a file whose request value reaches the sink (the line), and the same sink fed by a
# parameter the caller passes (the line).
_REACHED = {
    "app/views.py": ('''from flask import request


def search(db):
    term = request.args.get("q")
    return db.execute(f"SELECT * FROM items WHERE name = '{term}'").fetchall()


def by_name(db, term):
    return db.execute(f"SELECT * FROM items WHERE name = '{term}'").fetchall()
''', 6, 10, "security/sql-injection", "`term`, from `request.args.get('q')` at line 5"),
    "app/route.py": ('''import subprocess

from fastapi import FastAPI

app = FastAPI()


@app.get("/ping/{host}")
def ping(host: str):
    return subprocess.run(f"ping -c1 {host}", shell=True)


def ping_later(host):
    return subprocess.run(f"ping -c1 {host}", shell=True)
''', 10, 14, "security/shell-injection", "`host`, from the path parameter `host` of the route `/ping/{host}` at line 9"),
    "src/server.js": ('''const db = require("./db");

app.get("/items", (req, res) => {
  const term = req.query.q;
  db.query(`SELECT * FROM items WHERE name = '${term}'`, (err, rows) => res.json(rows));
});

function byName(name) {
  return db.query(`SELECT * FROM items WHERE name = '${name}'`);
}
''', 5, 9, "security/sql-injection", "`term`, from `req.query.q` at line 4"),
    "server/items.go": ('''package server

import (
	"database/sql"
	"fmt"
	"net/http"
)

func Items(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	rows, _ := db.Query(fmt.Sprintf("SELECT * FROM items WHERE name = '%s'", name))
	defer rows.Close()
}

func ByName(db *sql.DB, name string) {
	rows, _ := db.Query(fmt.Sprintf("SELECT * FROM items WHERE name = '%s'", name))
	defer rows.Close()
}
''', 11, 16, "security/sql-injection", "`name`, from `r.URL.Query().Get(\"name\")` at line 10"),
    "src/main/java/app/Items.java": ('''package app;

import java.sql.Statement;
import javax.servlet.http.HttpServletRequest;

class Items {
  void find(Statement statement, HttpServletRequest request) throws Exception {
    String name = request.getParameter("name");
    statement.executeQuery("SELECT * FROM items WHERE name = '" + name + "'");
  }

  void byName(Statement statement, String name) throws Exception {
    statement.executeQuery("SELECT * FROM items WHERE name = '" + name + "'");
  }
}
''', 9, 13, "security/sql-injection", "`name`, from `request.getParameter(\"name\")` at line 8"),
    "Controllers/ItemsController.cs": ('''using Dapper;
using Microsoft.AspNetCore.Mvc;

public class ItemsController : Controller
{
    [HttpGet]
    public IActionResult Find(string name)
    {
        return Ok(connection.Query("SELECT * FROM items WHERE name = '" + name + "'"));
    }

    private object Rows(string name)
    {
        return connection.Query("SELECT * FROM items WHERE name = '" + name + "'");
    }
}
''', 9, 14, "security/sql-injection", "`name`, from the action parameter `string name` at line 7"),
    "src/main/kotlin/app/Items.kt": ('''package app

import io.ktor.server.application.call
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import java.sql.Statement

fun Route.items(statement: Statement) {
  get("/items") {
    val name = call.parameters["name"]
    statement.executeQuery("SELECT * FROM items WHERE name = '" + name + "'")
  }
}

fun byName(statement: Statement, name: String) {
  statement.executeQuery("SELECT * FROM items WHERE name = '" + name + "'")
}
''', 11, 16, "security/sql-injection", "`name`, from `call.parameters[\"name\"]` at line 10"),
}


@pytest.mark.parametrize("path", sorted(_REACHED))
def test_a_sink_request_input_reaches_blocks_and_one_fed_by_a_parameter_is_minor(tmp_path: Path, path: str) -> None:
    text, reached, parameter, rule, chain = _REACHED[path]
    findings = [item for item in review_change(tmp_path, {"README.md": "x\n"}, {path: text}) if item.rule == rule]
    by_line = {item.line: item for item in findings}
    assert set(by_line) == {reached, parameter}, findings
    assert by_line[reached].severity.value == "major"
    assert by_line[reached].body.endswith(f"Request input reaches it: {chain}.")
    assert by_line[parameter].severity.value == "minor"
    assert by_line[parameter].body.endswith(NO_CHAIN)


def test_a_sanitized_value_is_minor_and_a_kotlin_spring_parameter_blocks(tmp_path: Path) -> None:
    python = '''from flask import request


def item(db):
    number = int(request.args["id"])
    return db.execute(f"SELECT * FROM items WHERE id = {number}").fetchone()
'''
    kotlin = '''package app

import java.sql.Statement
import org.springframework.web.bind.annotation.GetMapping
import org.springframework.web.bind.annotation.RequestParam

class Items(private val statement: Statement) {
  @GetMapping("/items")
  fun find(@RequestParam name: String) {
    statement.executeQuery("SELECT * FROM items WHERE name = '" + name + "'")
  }
}
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"app/item.py": python, "src/main/kotlin/app/Find.kt": kotlin})
    assert sorted((item.path, item.line, item.severity.value) for item in findings if item.rule == "security/sql-injection") == [
        ("app/item.py", 6, "minor"), ("src/main/kotlin/app/Find.kt", 10, "major"),
    ]


def test_python_follows_request_input_one_call_up_within_the_module(tmp_path: Path) -> None:
    views = '''from flask import request


def find_user(cursor, name):
    query = f"SELECT id FROM users WHERE name = '{name}'"
    return cursor.execute(query).fetchone()


def number_of(cursor, name):
    return cursor.execute(f"SELECT count(*) FROM users WHERE name = '{name}'").fetchone()


class Store:
    def delete(self, cursor, name):
        cursor.execute(f"DELETE FROM users WHERE name = '{name}'")


def user(cursor):
    store = Store()
    store.delete(cursor, request.form["name"])
    return find_user(cursor, request.args["name"])


def count(cursor):
    return number_of(cursor, "admin")
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"app/views.py": views})
    found = {item.line: item for item in findings if item.rule == "security/sql-injection"}
    assert {line: item.severity.value for line, item in found.items()} == {6: "major", 10: "minor", 15: "major"}
    assert found[6].body.endswith(
        "Request input reaches it: `request.args['name']` (line 21), handed to `find_user` as `name` at line 21."
    )
    assert "handed to `delete` as `name` at line 20" in found[15].body


# Each: a path, a file whose function builds the sink from its parameter, with one caller handing it
# request input and one handing it a literal; the lines expected major (with how the chain reads)
# and minor.
_ONE_CALL_UP = {
    "src/server.js": ('''const db = require("./db");

app.get("/items", (req, res) => {
  res.json(byName(req.query.q));
});

function byName(name) {
  return db.query(`SELECT * FROM items WHERE name = '${name}'`);
}

const byLabel = async (label) => {
  return db.query("SELECT * FROM items WHERE label = '" + label + "'");
};

app.get("/admins", async (req, res) => {
  res.json(await byLabel("admin"));
});
''', {8: "`req.query.q` (line 4), handed to `byName` as `name` at line 4"}, {12}),
    "src/items.ts": ('''import { Request, Response } from "express";

export async function find(req: Request, res: Response): Promise<void> {
  const term = String(req.query.q);
  res.json(await byName(db, term));
}

async function byName(db: Db, name: string): Promise<Row[]> {
  return db.query(`SELECT * FROM items WHERE name = '${name}'`);
}
''', {9: "`term`, from `req.query.q` at line 4, handed to `byName` as `name` at line 5"}, set()),
    "server/items.go": ('''package server

import (
	"database/sql"
	"fmt"
	"net/http"
)

type Store struct{ db *sql.DB }

func (s *Store) Delete(name string) error {
	_, err := s.db.Exec("DELETE FROM items WHERE name = '" + name + "'")
	return err
}

func (s *Store) Handle(w http.ResponseWriter, r *http.Request) {
	name := r.FormValue("name")
	s.Delete(name)
}

func ByLabel(db *sql.DB, label string) error {
	rows, err := db.Query(fmt.Sprintf("SELECT * FROM items WHERE label = '%s'", label))
	defer rows.Close()
	return err
}

func Admins(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	ByLabel(db, "admin")
}
''', {12: "`name`, from `r.FormValue(\"name\")` at line 17, handed to `Delete` as `name` at line 18"}, {22}),
    "src/main/java/app/Items.java": ('''package app;

import java.sql.Statement;
import javax.servlet.http.HttpServletRequest;

class Items {
  void find(Statement statement, HttpServletRequest request) throws Exception {
    byName(statement, request.getParameter("name"));
  }

  void byName(Statement statement, String name) throws Exception {
    statement.executeQuery("SELECT * FROM items WHERE name = '" + name + "'");
  }

  void admins(Statement statement) throws Exception {
    byLabel(statement, "admin");
  }

  void byLabel(Statement statement, String label) throws Exception {
    statement.executeQuery("SELECT * FROM items WHERE label = '" + label + "'");
  }

  void kinds(Statement statement, HttpServletRequest request) throws Exception {
    byKind(statement, request.getParameter("kind"), "book");
  }

  void byKind(Statement statement, String kind, String label) throws Exception {
    statement.executeQuery("SELECT * FROM items WHERE label = '" + label + "'");
  }
}
''', {12: "`request.getParameter(\"name\")` (line 8), handed to `byName` as `name` at line 8"}, {20, 28}),
    "Controllers/ItemsController.cs": ('''using Dapper;
using Microsoft.AspNetCore.Mvc;

public class ItemsController : Controller
{
    [HttpGet]
    public IActionResult Find(string name)
    {
        return Ok(Rows(connection, name));
    }

    private object Rows(IDbConnection connection, string name)
    {
        return connection.Query("SELECT * FROM items WHERE name = '" + name + "'");
    }
}
''', {14: "`name`, from the action parameter `string name` at line 7, handed to `Rows` as `name` at line 9"}, set()),
    "src/main/kotlin/app/Items.kt": ('''package app

import io.ktor.server.application.call
import io.ktor.server.routing.Route
import io.ktor.server.routing.get
import java.sql.Statement

fun Route.items(statement: Statement) {
  get("/items") {
    byName(statement, call.parameters["name"] ?: "")
  }
}

fun byName(statement: Statement, name: String) {
  statement.executeQuery("SELECT * FROM items WHERE name = '" + name + "'")
}
''', {15: "`call.parameters[\"name\"] ?: \"\"` (line 10), handed to `byName` as `name` at line 10"}, set()),
}


@pytest.mark.parametrize("path", sorted(_ONE_CALL_UP))
def test_request_input_is_followed_one_call_up_within_the_file(tmp_path: Path, path: str) -> None:
    text, major, minor = _ONE_CALL_UP[path]
    findings = [item for item in review_change(tmp_path, {"README.md": "x\n"}, {path: text})
                if item.rule == "security/sql-injection"]
    assert {item.line: item.severity.value for item in findings} == {
        **{line: "major" for line in major}, **{line: "minor" for line in minor}}
    for item in findings:
        if item.line in major:
            assert item.body.endswith(f"Request input reaches it: {major[item.line]}."), item.body


def test_python_follows_request_input_to_a_function_another_file_of_the_change_imports(tmp_path: Path) -> None:
    queries = '''def find_user(cursor, name):
    return cursor.execute(f"SELECT id FROM users WHERE name = '{name}'").fetchone()


def count_users(cursor, name):
    return cursor.execute(f"SELECT count(*) FROM users WHERE name = '{name}'").fetchone()


def remove_user(cursor, name):
    cursor.execute(f"DELETE FROM users WHERE name = '{name}'")
'''
    views = '''from flask import request

from app import queries
from app.queries import count_users


def user(cursor):
    return queries.find_user(cursor, request.args["name"])


def admins(cursor):
    return count_users(cursor, "admin")
'''
    # A module with a function of the same name that does not import it from `queries`.
    other = '''from flask import request


def remove_user(cursor, name):
    return None


def remove(cursor):
    return remove_user(cursor, request.form["name"])
'''
    findings = review_change(tmp_path, {"README.md": "x\n"},
                             {"app/queries.py": queries, "app/views.py": views, "app/other.py": other})
    found = {item.line: item for item in findings if item.rule == "security/sql-injection"}
    assert {line: item.severity.value for line, item in found.items()} == {2: "major", 6: "minor", 10: "minor"}
    assert found[2].body.endswith(
        "Request input reaches it: `request.args['name']` (line 8), handed to `find_user` as `name` at app/views.py:8."
    )


# Each: the change's files, the sink's file and the lines expected major (with where the chain was
# handed on) and minor. A file that calls a function of the same name without importing the sink's
# module hands it nothing.
_ANOTHER_FILE = {
    "javascript": ({
        "src/queries.js": '''const db = require("./db");

function byName(name) {
  return db.query(`SELECT * FROM items WHERE name = '${name}'`);
}

function byLabel(label) {
  return db.query(`SELECT * FROM items WHERE label = '${label}'`);
}

module.exports = { byName, byLabel };
''',
        "src/routes.js": '''const queries = require("./queries");
const { byName: findByName } = require("./queries");

app.get("/items", (req, res) => res.json(findByName(req.query.q)));
app.get("/admins", (req, res) => res.json(queries.byLabel("admin")));
''',
        "src/other.js": '''function byLabel(label) {
  return label;
}

app.get("/labels", (req, res) => res.json(byLabel(req.query.label)));
''',
    }, "src/queries.js", {4: "`req.query.q` (line 4), handed to `byName` as `name` at src/routes.js:4"}, {8}),
    "typescript": ({
        "src/db/items.ts": '''export async function byName(db: Db, name: string): Promise<Row[]> {
  return db.query(`SELECT * FROM items WHERE name = '${name}'`);
}
''',
        "src/routes.ts": '''import * as items from "./db/items.js";

router.get("/items", async (req, res) => {
  const term = req.query.q as string;
  res.json(await items.byName(db, term));
});
''',
    }, "src/db/items.ts", {2: "`term`, from `req.query.q` at line 4, handed to `byName` as `name` at src/routes.ts:5"}, set()),
    "go": ({
        "store/items.go": '''package store

import (
	"database/sql"
	"fmt"
)

func ByName(db *sql.DB, name string) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM items WHERE name = '%s'", name))
}

func ByLabel(db *sql.DB, label string) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM items WHERE label = '%s'", label))
}

func ByKind(db *sql.DB, kind string) (*sql.Rows, error) {
	return db.Query(fmt.Sprintf("SELECT * FROM items WHERE kind = '%s'", kind))
}
''',
        "store/handlers.go": '''package store

import (
	"database/sql"
	"net/http"
)

func Labels(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	ByLabel(db, "admin")
}

func Kinds(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	ByKind(db, r.FormValue("kind"))
}
''',
        "web/routes.go": '''package web

import (
	"database/sql"
	"net/http"

	items "example.com/app/store"
)

func Items(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	items.ByName(db, r.URL.Query().Get("name"))
}
''',
    }, "store/items.go", {9: "`r.URL.Query().Get(\"name\")` (line 11), handed to `ByName` as `name` at web/routes.go:11",
                          17: "`r.FormValue(\"kind\")` (line 13), handed to `ByKind` as `kind` at store/handlers.go:13"}, {13}),
}


_ANOTHER_FILE["java"] = ({
    "src/main/java/app/ItemRepository.java": '''package app;

import java.sql.ResultSet;
import java.sql.Statement;

public class ItemRepository {
  private final Statement statement;

  public ItemRepository(Statement statement) {
    this.statement = statement;
  }

  public ResultSet findByName(String name) throws Exception {
    return statement.executeQuery("SELECT * FROM items WHERE name = '" + name + "'");
  }

  public ResultSet findByLabel(String label) throws Exception {
    return statement.executeQuery("SELECT * FROM items WHERE label = '" + label + "'");
  }
}
''',
    "src/main/java/app/ItemController.java": '''package app;

import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;

class ItemController {
  private final ItemRepository repository;

  ItemController(ItemRepository repository) {
    this.repository = repository;
  }

  @GetMapping("/items")
  Object find(@RequestParam String name) throws Exception {
    return repository.findByName(name);
  }
}
''',
    # Another class's method of the same name, in a file that never names ItemRepository.
    "src/main/java/app/LabelController.java": '''package app;

import javax.servlet.http.HttpServletRequest;

class LabelController {
  private final LabelStore store;

  Object find(HttpServletRequest request) throws Exception {
    return store.findByLabel(request.getParameter("label"));
  }
}
''',
}, "src/main/java/app/ItemRepository.java",
    {14: "`name`, from `@RequestParam String name` at line 14, handed to `findByName` as `name` at "
         "src/main/java/app/ItemController.java:15"}, {18})
_ANOTHER_FILE["csharp"] = ({
    "Data/ItemStore.cs": '''using Dapper;

public class ItemStore
{
    public object Rows(IDbConnection connection, string name)
    {
        return connection.Query("SELECT * FROM items WHERE name = '" + name + "'");
    }
}
''',
    "Controllers/ItemsController.cs": '''using Microsoft.AspNetCore.Mvc;

public class ItemsController : Controller
{
    private readonly ItemStore store = new ItemStore();

    [HttpGet]
    public IActionResult Find(string name)
    {
        return Ok(store.Rows(connection, name));
    }
}
''',
}, "Data/ItemStore.cs",
    {7: "`name`, from the action parameter `string name` at line 8, handed to `Rows` as `name` at "
        "Controllers/ItemsController.cs:10"}, set())


@pytest.mark.parametrize("language", sorted(_ANOTHER_FILE))
def test_request_input_is_followed_to_a_function_another_file_of_the_change_imports(tmp_path: Path, language: str) -> None:
    files, sink, major, minor = _ANOTHER_FILE[language]
    findings = [item for item in review_change(tmp_path, {"README.md": "x\n"}, files)
                if item.rule == "security/sql-injection" and item.path == sink]
    assert {item.line: item.severity.value for item in findings} == {
        **{line: "major" for line in major}, **{line: "minor" for line in minor}}
    for item in findings:
        if item.line in major:
            assert item.body.endswith(f"Request input reaches it: {major[item.line]}."), item.body


# SQL text built into a name, then passed to the database: each the same statement as a name, with
# the lines expected (major where request input reaches it) and look-alikes that must stay quiet (a
# statement with placeholders, a formatted URL passed to a method named `query`).
_THROUGH_A_NAME = {
    "src/main/java/app/Register.java": ('''package app;

import java.sql.Connection;
import java.sql.Statement;
import org.springframework.web.bind.annotation.PutMapping;
import org.springframework.web.bind.annotation.RequestParam;

class Register {
  @PutMapping("/register")
  Object register(@RequestParam("username_reg") String username) throws Exception {
    try (Connection connection = dataSource.getConnection()) {
      String checkUserQuery =
          "select userid from users where userid = '" + username + "'";
      Statement statement = connection.createStatement();
      return statement.executeQuery(checkUserQuery);
    }
  }

  Object byId(Connection connection, String id) throws Exception {
    String query = "SELECT * FROM users WHERE id = ?";
    var statement = connection.prepareStatement(query);
    statement.setString(1, id);
    return statement.executeQuery();
  }
}
''', {15: "`checkUserQuery`, from `@RequestParam(\"username_reg\") String username` at line 10"}, set()),
    "server/items.go": ('''package server

import (
	"database/sql"
	"fmt"
	"net/http"
)

func Items(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	name := r.URL.Query().Get("name")
	query := fmt.Sprintf("SELECT * FROM items WHERE name = '%s'", name)
	rows, _ := db.Query(query)
	defer rows.Close()
}

func Labels(db *sql.DB, label string) {
	query := "SELECT * FROM items WHERE label = '" +
		label + "'"
	rows, _ := db.Query(query)
	defer rows.Close()
}
''', {12: "`query`, from `r.URL.Query().Get(\"name\")` at line 10"}, {19}),
    "src/routes.js": ('''const db = require("./db");
const search = require("./search");

app.get("/items", (req, res) => {
  let sql = "SELECT * FROM items WHERE 1 = 1";
  sql += " AND name = '" + req.query.name + "'";
  db.query(sql, (err, rows) => res.json(rows));
});

app.get("/find", (req, res) => {
  const url = `https://search.example.com/?q=${req.query.q}`;
  search.query(url).then((found) => res.json(found));
});
''', {7: "`sql`, from `req.query.name` at line 6"}, set()),
    "src/main/kotlin/app/Items.kt": ('''package app

import java.sql.Statement

fun byName(statement: Statement, name: String) {
  val query = "SELECT * FROM items WHERE name = '$name'"
  statement.executeQuery(query)
}
''', {}, {7}),
}


@pytest.mark.parametrize("path", sorted(_THROUGH_A_NAME))
def test_sql_built_into_a_name_then_passed_to_the_database(tmp_path: Path, path: str) -> None:
    text, major, minor = _THROUGH_A_NAME[path]
    findings = [item for item in review_change(tmp_path, {"README.md": "x\n"}, {path: text})
                if item.rule == "security/sql-injection"]
    assert {item.line: item.severity.value for item in findings} == {
        **{line: "major" for line in major}, **{line: "minor" for line in minor}}
    for item in findings:
        if item.line in major:
            assert "holds text built above" in item.body
            assert item.body.endswith(f"Request input reaches it: {major[item.line]}."), item.body


_COMMAND_THROUGH_A_NAME = {
    "src/ping.js": ('''const { exec } = require("child_process");

app.get("/ping", (req, res) => {
  const command = `ping -c1 ${req.query.host}`;
  exec(command, (err, out) => res.send(out));
});

app.get("/list", (req, res) => {
  const listing = `ls ${req.query.all ? "-a" : "-l"}`;
  exec(listing, (err, out) => res.send(out));
  const status = "git status";
  exec(status, (err, out) => res.send(out));
});
''', {5: "`command`, from `req.query.host` at line 4"}),
    "server/ping.go": ('''package server

import (
	"fmt"
	"net/http"
	"os/exec"
)

func Ping(w http.ResponseWriter, r *http.Request) {
	host := r.FormValue("host")
	command := fmt.Sprintf("ping -c1 %s", host)
	out, _ := exec.Command("sh", "-c", command).Output()
	w.Write(out)
}
''', {12: "`command`, from `r.FormValue(\"host\")` at line 10"}),
    "src/main/java/app/Ping.java": ('''package app;

import javax.servlet.http.HttpServletRequest;

class Ping {
  Process ping(HttpServletRequest request) throws Exception {
    String command = "ping -c1 " + request.getParameter("host");
    return Runtime.getRuntime().exec(command);
  }
}
''', {8: "`command`, from `\"ping -c1 \" + request.getParameter(\"host\")` at line 7"}),
}


@pytest.mark.parametrize("path", sorted(_COMMAND_THROUGH_A_NAME))
def test_a_command_built_into_a_name_then_run_by_a_shell(tmp_path: Path, path: str) -> None:
    text, major = _COMMAND_THROUGH_A_NAME[path]
    for item in _major_shell_findings(tmp_path, path, text, major):
        assert "holds a command built above" in item.body


def test_a_call_whose_arguments_start_on_the_next_line(tmp_path: Path) -> None:
    servers = '''package app;

import java.sql.Connection;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RequestParam;

class Servers {
  @GetMapping("/servers")
  Object sorted(@RequestParam String column, @RequestParam String login) throws Exception {
    try (var statement =
        connection.prepareStatement(
            "select id, hostname from servers where status <> 'out of order' order by "
                + column)) {
      return statement.executeQuery();
    }
  }

  @GetMapping("/users")
  Object users(@RequestParam String login) throws Exception {
    String queryString = "SELECT * FROM user_data WHERE login_count = ? and userid = " + login;
    var query =
        connection.prepareStatement(
            queryString, ResultSet.TYPE_SCROLL_INSENSITIVE, ResultSet.CONCUR_READ_ONLY);
    return query.executeQuery();
  }
}
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/main/java/app/Servers.java": servers})
    assert {(item.line, item.severity.value) for item in findings if item.rule == "security/sql-injection"} == {
        (11, "major"), (22, "major")}


def test_literals_joined_by_a_line_break_are_no_formatting(tmp_path: Path) -> None:
    grants = '''package app;

import java.sql.Connection;

class Grants {
  boolean granted(Connection connection) throws Exception {
    var statement =
        connection.prepareStatement(
            "SELECT * FROM INFORMATION_SCHEMA.TABLE_PRIVILEGES WHERE TABLE_NAME = ? AND GRANTEE ="
                + " ?");
    String query = "SELECT * FROM grants WHERE name = ?"
        + " AND level = ?";
    var other = connection.prepareStatement(query);
    return statement.executeQuery().next() && other.executeQuery().next();
  }
}
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/main/java/app/Grants.java": grants})
    assert [item for item in findings if item.rule == "security/sql-injection"] == []


def test_a_statement_or_command_that_is_the_request_input_itself(tmp_path: Path) -> None:
    lesson = '''package app;

import java.sql.Connection;
import javax.servlet.http.HttpServletRequest;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;

class Lesson {
  @PostMapping("/attack")
  Object completed(@RequestParam String query) throws Exception {
    return injectableQuery(query);
  }

  Object injectableQuery(String query) throws Exception {
    return connection.createStatement().executeQuery(query);
  }

  Object byId(HttpServletRequest request) throws Exception {
    String sql = "SELECT * FROM users WHERE id = ?";
    var statement = connection.prepareStatement(sql);
    statement.setString(1, request.getParameter("id"));
    return statement.executeQuery();
  }
}
'''
    handler = '''package server

import (
	"database/sql"
	"net/http"
	"os/exec"
)

func Find(db *sql.DB, w http.ResponseWriter, r *http.Request) {
	query := "SELECT * FROM items WHERE id = ?"
	rows, _ := db.Query(query, r.FormValue("id"))
	defer rows.Close()
}

func Run(w http.ResponseWriter, r *http.Request) {
	script := r.FormValue("script")
	out, _ := exec.Command("sh", "-c", script).Output()
	w.Write(out)
}
'''
    findings = review_change(tmp_path, {"README.md": "x\n"},
                             {"src/main/java/app/Lesson.java": lesson, "server/run.go": handler})
    found = sorted((item.path, item.line, item.severity.value, item.title) for item in findings
                   if item.rule in ("security/sql-injection", "security/shell-injection"))
    assert found == [
        ("server/run.go", 17, "major", "The request's text is run as a shell command"),
        ("src/main/java/app/Lesson.java", 15, "major", "The request's text is run as SQL"),
    ]


def test_python_shell_running_a_parameter_a_caller_builds_from_request_input(tmp_path: Path) -> None:
    views = '''import os
import subprocess

from flask import request


def command_out(command):
    process = subprocess.Popen(command, shell=True, stdout=subprocess.PIPE)
    return process.communicate()


def scan():
    ip = request.form.get("ip")
    command = "nmap " + ip
    return command_out(command)


def run(script):
    return subprocess.run(script, shell=True, check=True)


def status():
    listing = "ls -l"
    os.system(listing)
    return run("git status")
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"app/views.py": views})
    found = [(item.line, item.severity.value, item.title, item.body) for item in findings
             if item.rule == "security/shell-injection"]
    assert [(line, severity, title) for line, severity, title, _body in found] == [
        (8, "major", "The request's text is run as a shell command")]
    assert found[0][3].endswith(
        "Request input reaches it: `command`, from `request.form.get('ip')` at line 13, handed to `command_out` as "
        "`command` at line 15.")


def test_java_runtime_held_in_a_name_and_request_headers(tmp_path: Path) -> None:
    echo = '''package app;

import javax.servlet.http.HttpServletRequest;

class Echo {
  Process echo(HttpServletRequest request) throws Exception {
    String param = "";
    java.util.Enumeration<String> headers = request.getHeaders("X-Name");
    if (headers != null && headers.hasMoreElements()) {
      param = headers.nextElement();
    }
    String cmd = "echo ";
    Runtime r = Runtime.getRuntime();
    return r.exec(cmd + param);
  }

  Process list(String folder) throws Exception {
    Runtime runtime = Runtime.getRuntime();
    return runtime.exec("ls " + folder);
  }

  String other(Matcher matcher, String name) {
    return matcher.exec(name + "!");
  }
}
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/main/java/app/Echo.java": echo})
    assert sorted((item.line, item.severity.value) for item in findings if item.rule == "security/shell-injection") == [
        (14, "major"), (19, "minor")]


def test_request_input_two_calls_up_blocks_and_three_is_minor(tmp_path: Path) -> None:
    lesson = '''package app;

import java.sql.Connection;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;

class Lesson {
  @PostMapping("/attack")
  Object completed(@RequestParam("userid") String userId) throws Exception {
    return injectableQuery(userId);
  }

  Object injectableQuery(String accountName) throws Exception {
    String query = "SELECT * FROM user_data WHERE last_name = '" + accountName + "'";
    return run(query);
  }

  Object run(String query) throws Exception {
    return connection.createStatement().executeQuery(query);
  }

  @PostMapping("/deep")
  Object deep(@RequestParam("id") String id) throws Exception {
    return first(id);
  }

  Object first(String id) throws Exception {
    return second(id);
  }

  Object second(String id) throws Exception {
    return third(id);
  }

  Object third(String id) throws Exception {
    return connection.createStatement().executeQuery("SELECT * FROM items WHERE id = '" + id + "'");
  }
}
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/main/java/app/Lesson.java": lesson})
    found = {item.line: item for item in findings if item.rule == "security/sql-injection"}
    assert {line: item.severity.value for line, item in found.items()} == {19: "major", 36: "minor"}
    assert found[19].body.endswith(
        "Request input reaches it: `userId`, from `@RequestParam(\"userid\") String userId` at line 9, handed to "
        "`injectableQuery` as `accountName` at line 10, handed to `run` as `query` at line 15.")


def test_python_follows_request_input_two_calls_up(tmp_path: Path) -> None:
    views = '''from flask import request


def fetch(cursor, name):
    return cursor.execute(f"SELECT id FROM users WHERE name = '{name}'").fetchone()


def find(cursor, name):
    return fetch(cursor, name)


def user(cursor):
    return find(cursor, request.args["name"])
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"app/views.py": views})
    found = [item for item in findings if item.rule == "security/sql-injection"]
    assert [(item.line, item.severity.value) for item in found] == [(5, "major")]
    assert found[0].body.endswith(
        "Request input reaches it: `request.args['name']` (line 13), handed to `find` as `name` at line 13, "
        "handed to `fetch` as `name` at line 9.")


def test_a_value_whose_quotes_are_replaced_is_no_chain(tmp_path: Path) -> None:
    audit = '''package app;

import java.sql.Connection;
import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.RequestParam;

class Audit {
  @PostMapping("/search")
  Object search(@RequestParam String query) throws Exception {
    log(connection, query);
    return null;
  }

  static void log(Connection connection, String action) throws Exception {
    action = action.replace('\\'', '"');
    String logQuery = "INSERT INTO access_log (action) VALUES ('" + action + "')";
    connection.createStatement().executeUpdate(logQuery);
  }
}
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/main/java/app/Audit.java": audit})
    assert [(item.line, item.severity.value) for item in findings if item.rule == "security/sql-injection"] == [
        (17, "minor")]


def test_a_spring_handler_string_parameter_without_an_annotation_is_request_input(tmp_path: Path) -> None:
    lesson = '''package app;

import org.springframework.web.bind.annotation.PostMapping;
import org.springframework.web.bind.annotation.ResponseBody;

class Lesson {
  @PostMapping("/attack5")
  @ResponseBody
  public Object completed(String query, Model model) throws Exception {
    return injectableQuery(query);
  }

  protected Object injectableQuery(String query) throws Exception {
    return connection.createStatement().executeQuery(query);
  }

  public Object notAHandler(String query) throws Exception {
    return connection.createStatement().executeQuery(query);
  }
}
'''
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/main/java/app/Lesson.java": lesson})
    found = [(item.line, item.severity.value) for item in findings if item.rule == "security/sql-injection"]
    assert found == [(14, "major")]


# A shell named in an argument list with `-c` parses the next element as a command line again.
_SHELL_IN_A_LIST = {
    "src/main/java/app/Ping.java": ('''package app;

import javax.servlet.http.HttpServletRequest;

class Ping {
  Process ping(HttpServletRequest request) throws Exception {
    String host = request.getParameter("host");
    Process first = new ProcessBuilder("sh", "-c", "ping -c1 " + host).start();
    String[] command = {"/bin/bash", "-c", request.getParameter("script")};
    Process second = Runtime.getRuntime().exec(new String[] {"/bin/bash", "-c", host});
    Process safe = new ProcessBuilder("ping", "-c1", host).start();
    return first;
  }
}
''', {8: "`host`, from `request.getParameter(\"host\")` at line 7", 10: "`host`, from `request.getParameter(\"host\")` at line 7"}),
    "routes/ping.js": ('''const { spawn } = require('child_process');

function ping(req, res) {
  const host = req.query.host;
  spawn('sh', ['-c', `ping -c1 ${host}`]).stdout.pipe(res);
  spawn('ping', ['-c1', host]).stdout.pipe(res);
}

module.exports = { ping };
''', {5: "`host`, from `req.query.host` at line 4"}),
    "app/ping.py": ('''import subprocess

from flask import request


def ping():
    host = request.args["host"]
    subprocess.run(["sh", "-c", f"ping -c1 {host}"], check=True)
    subprocess.run(["ping", "-c1", host], check=True)
    script = request.form["script"]
    return subprocess.check_output(["bash", "-c", script])
''', {8: "", 11: ""}),
}


@pytest.mark.parametrize("path", sorted(_SHELL_IN_A_LIST))
def test_a_shell_with_dash_c_in_an_argument_list_is_a_shell_command(tmp_path: Path, path: str) -> None:
    text, major = _SHELL_IN_A_LIST[path]
    for item in _major_shell_findings(tmp_path, path, text, major):
        assert "Request input reaches it: " in item.body
    # The same lists run with no shell, or a shell given a literal, are no finding.
    literal = "\n".join(line for number, line in enumerate(text.splitlines(), 1) if number not in major)
    assert _major_shell_findings(tmp_path / "literal", path, literal + "\n", {}) == []


def _major_shell_findings(tmp_path: Path, path: str, text: str, major: dict[int, str]) -> list[Finding]:
    """The shell findings of `path` added with `text`: major on exactly `major`'s lines, each naming
    its chain (`major`'s text; "" where the test does not spell it)."""
    findings = [item for item in review_change(tmp_path, {"README.md": "x\n"}, {path: text})
                if item.rule == "security/shell-injection"]
    assert {item.line: item.severity.value for item in findings} == {line: "major" for line in major}
    for item in findings:
        chain = major[item.line]
        assert not chain or item.body.endswith(f"Request input reaches it: {chain}."), item.body
    return findings
