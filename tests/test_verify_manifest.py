"""The manifest: the documented example parses and validates against the published schema;
every bad input is one `file: key: problem` line (exit 2)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import jsonschema
import pytest

from reviewgate.errors import ConfigError
from reviewgate.tomlfile import parse_toml
from reviewgate.verify.manifest import (
    DEFAULT_GRACE,
    DEFAULT_READY_INTERVAL,
    DEFAULT_READY_TIMEOUT,
    DEFAULT_TIMEOUTS,
    load_manifest,
    parse_manifest,
)

ROOT = Path(__file__).resolve().parents[1]
SCHEMA = json.loads((ROOT / "reviewgate/schemas/prepcook-scripts.schema.json").read_text())
SOURCE = ".prepcook/scripts.toml"


def documented_example() -> dict[str, Any]:
    """The first ```toml block of docs/verify.md: the example users copy."""
    text = (ROOT / "docs/verify.md").read_text()
    match = re.search(r"```toml\n(.*?)```", text, re.DOTALL)
    assert match, "docs/verify.md has no ```toml example"
    return parse_toml(match.group(1).encode(), "docs/verify.md")


def test_documented_example_parses_and_validates_against_the_schema() -> None:
    example = documented_example()
    jsonschema.Draft202012Validator.check_schema(SCHEMA)
    jsonschema.Draft202012Validator(SCHEMA).validate(example)
    manifest = parse_manifest(example, SOURCE)
    assert manifest.secrets == ("DATABASE_URL",) and manifest.ports == (8000,)
    assert manifest.env == {"APP_ENV": "ci"}
    assert manifest.ready is not None and manifest.ready.url == "http://127.0.0.1:8000/health"
    assert manifest.test.junit == "test-results.xml"
    assert manifest.start is not None and manifest.teardown is not None


def test_defaults_and_plain_string_steps() -> None:
    manifest = parse_manifest(
        {
            "setup": "make deps",
            "test": "make test",
            "teardown": "make clean",
            "start": "make serve",
            "ready": {"tcp": 8000},
        },
        SOURCE,
    )
    assert manifest.setup is not None and manifest.setup.run == "make deps"
    assert manifest.setup.timeout == DEFAULT_TIMEOUTS["setup"] == 900
    assert manifest.test.timeout == DEFAULT_TIMEOUTS["test"] == 1800
    assert manifest.teardown is not None and manifest.teardown.timeout == 120
    assert DEFAULT_TIMEOUTS["seed"] == 300 and DEFAULT_TIMEOUTS["build"] == 900
    assert manifest.start is not None and manifest.start.grace == DEFAULT_GRACE
    ready = manifest.ready
    assert ready is not None and (ready.tcp_host, ready.tcp_port) == ("127.0.0.1", 8000)
    assert (ready.timeout, ready.interval, ready.expect) == (
        DEFAULT_READY_TIMEOUT,
        DEFAULT_READY_INTERVAL,
        (),
    )


def test_ready_tcp_with_host_and_url_expect() -> None:
    assert (
        parse_manifest({"test": "t", "ready": {"tcp": "localhost:5432"}}, SOURCE).ready.tcp_host
        == "localhost"
    )  # type: ignore[union-attr]
    ready = parse_manifest(
        {"test": "t", "ready": {"url": "http://localhost:1/", "expect": [204]}}, SOURCE
    ).ready
    assert ready is not None and ready.expect == (204,)


BAD = [
    ({"test": "t", "deploy": "x"}, "deploy: unknown step; expected one of setup, build, start, ready"),
    ({"test": 3}, "test: expected a command string or a table, got 3"),
    ({"test": "t", "setup": ["a"]}, "setup: expected a command string or a table"),
    ({"test": "t", "ready": {}}, "ready: expected exactly one of url, tcp, run; got none"),
    (
        {"test": "t", "ready": {"url": "http://x/", "tcp": 1}},
        "ready: expected exactly one of url, tcp, run; got url, tcp",
    ),
    ({"test": "t", "ready": "http://x/"}, "ready: expected a table with one of url, tcp, run"),
    ({"test": {"run": "t", "timeout": -1}}, "test.timeout: expected a positive number of seconds, got -1"),
    ({"test": {"run": "t", "timeout": "10"}}, "test.timeout: expected a number of seconds"),
    ({"test": "t", "ports": [70000]}, "ports: expected a port number from 1 to 65535, got 70000"),
    ({"test": "t", "ports": [0]}, "ports: expected a port number from 1 to 65535, got 0"),
    ({"test": "t", "ports": 8000}, "ports: expected a list of port numbers"),
    ({"test": "t", "ready": {"tcp": 0}}, "ready.tcp: expected a port number from 1 to 65535"),
    ({"test": "t", "ready": {"tcp": "nohost"}}, 'ready.tcp: expected a port number or "host:port"'),
    ({"test": "t", "ready": {"url": "ftp://x/"}}, "ready.url: expected an http:// or https:// URL"),
    ({"test": "t", "ready": {"tcp": 1, "expect": [200]}}, "ready.expect: only applies to a url check"),
    (
        {"test": "t", "ready": {"url": "http://x/", "expect": [99]}},
        "ready.expect: expected a list of HTTP status",
    ),
    ({"test": "t", "secrets": ["BAD NAME"]}, "secrets: expected a list of environment variable names"),
    ({"test": "t", "env": {"A": ["x"]}}, "env.A: expected a string or number"),
    (
        {"test": {"run": "t", "timout": 5}},
        "test.timout: unknown key; expected one of run, timeout, cwd, env, junit",
    ),
    ({"test": {"run": "t", "cwd": "../elsewhere"}}, "test.cwd: expected a path inside the repository"),
    ({"test": {"timeout": 5}}, "test.run: missing; expected a command string"),
    ({"test": {"run": "  "}}, "test.run: expected a non-empty string"),
    ({"setup": "x"}, "test: missing; the manifest must say how to run the app's tests"),
    (
        {"test": "t", "start": {"run": "s", "timeout": 3}},
        "start.timeout: unknown key; expected one of run, cwd, env, grace",
    ),
    ({"test": "t", "setup": {"run": "s", "junit": "x.xml"}}, "setup.junit: unknown key"),
]


@pytest.mark.parametrize(("table", "message"), BAD, ids=[message.split(":")[0] for _, message in BAD])
def test_bad_input_names_file_and_key(table: dict[str, Any], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        parse_manifest(table, SOURCE)
    assert str(caught.value).startswith(f"{SOURCE}: {message}"), str(caught.value)
    assert "\n" not in str(caught.value)


@pytest.mark.parametrize(("table", "_message"), BAD, ids=[message.split(":")[0] for _, message in BAD])
def test_schema_rejects_what_the_parser_rejects(table: dict[str, Any], _message: str) -> None:
    """The schema editors use agrees with the parser, so an editor flags what the gate refuses."""
    errors = list(jsonschema.Draft202012Validator(SCHEMA).iter_errors(table))
    assert errors, f"the schema accepts {table}"


def test_not_toml_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "scripts.toml"
    path.write_text("[test\nrun = 1\n")
    with pytest.raises(ConfigError, match=r"^\.prepcook/scripts\.toml: not valid TOML: "):
        load_manifest(path, SOURCE)
