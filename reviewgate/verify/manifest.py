"""`.prepcook/scripts.toml`: parse and validate the verify manifest into typed records.

Every problem is a ConfigError `file: key: problem` (exit 2) raised before anything runs.
The manifest is strict: an unknown step or key is an error, because a misspelt `timeout`
silently falling back to its default could hold a CI job for half an hour.
Keys and defaults are documented in docs/verify.md and published for editors in
reviewgate/schemas/prepcook-scripts.schema.json.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any
from urllib.parse import urlsplit

from reviewgate.config import TableReader
from reviewgate.errors import ConfigError
from reviewgate.tomlfile import read_toml

# A finite timeout per step, all overridable (seconds).
DEFAULT_TIMEOUTS: Mapping[str, float] = {
    "setup": 15 * 60,
    "build": 15 * 60,
    "seed": 5 * 60,
    "reproduce": 15 * 60,
    "test": 30 * 60,
    "teardown": 2 * 60,
}
DEFAULT_READY_TIMEOUT = 120.0  # start-to-ready
# Ready detection within one polling interval, 0.25 s backing off to 1 s.
DEFAULT_READY_INTERVAL = 0.25
# Time the start process group gets between SIGTERM and SIGKILL at teardown.
DEFAULT_GRACE = 10.0

# The order steps run in; `teardown` always runs last, whatever happened before it.
COMMAND_STEPS = ("setup", "build", "seed", "reproduce", "test", "teardown")
STEP_ORDER = ("setup", "build", "start", "ready", "seed", "reproduce", "test", "teardown")
TOP_LEVEL_KEYS = ("secrets", "ports", "env")

_STEP_KEYS = ("run", "timeout", "cwd", "env")
_ALLOWED_KEYS: Mapping[str, tuple[str, ...]] = {
    **{name: _STEP_KEYS for name in COMMAND_STEPS},
    "test": (*_STEP_KEYS, "junit"),
    "start": ("run", "cwd", "env", "grace"),
    "ready": ("url", "tcp", "run", "timeout", "interval", "expect", "cwd", "env"),
}
_VARIABLE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Variables that make a program load or run other code than it was asked to: the dynamic
# loader's, the ones glibc drops for setuid programs (unsecvars.h), and the shells' and Python's
# start-up files. The branch writes the manifest: set in its `env`, they would reach whatever
# reads the environment before the step's own shell. Inside `run` they reach only the step.
LOADER_VARIABLES = frozenset({
    "GCONV_PATH", "GETCONF_DIR", "GLIBC_TUNABLES", "HOSTALIASES", "LOCALDOMAIN", "LOCPATH", "MALLOC_TRACE",
    "NIS_PATH", "NLSPATH", "RESOLV_HOST_CONF", "RES_OPTIONS", "TZDIR",
    "BASH_ENV", "ENV", "PYTHONHOME", "PYTHONSTARTUP", "PYTHONINSPECT",
})
LOADER_VARIABLE_PREFIXES = ("LD_", "MALLOC_")
_PORT_RANGE = (1, 65535)  # TCP ports; 0 means "any" to the kernel, which cannot be declared
_STATUS_RANGE = (100, 599)  # RFC 9110 section 15: three-digit status codes 1xx to 5xx


@dataclass(frozen=True)
class Step:
    """One command step, run through `sh -c` in the repository root (or `cwd` under it)."""

    name: str
    run: str
    timeout: float
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    junit: str | None = None  # test only: the app's own JUnit XML, relative to the step's cwd


@dataclass(frozen=True)
class StartStep:
    run: str
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)
    grace: float = DEFAULT_GRACE


@dataclass(frozen=True)
class ReadyCheck:
    """Exactly one of url / tcp (host, port) / run; polled until success or `timeout`."""

    url: str | None = None
    tcp_host: str | None = None
    tcp_port: int | None = None
    run: str | None = None
    timeout: float = DEFAULT_READY_TIMEOUT
    interval: float = DEFAULT_READY_INTERVAL
    expect: tuple[int, ...] = ()  # empty: any 2xx or 3xx status
    cwd: str | None = None
    env: Mapping[str, str] = field(default_factory=dict)

    def describe(self) -> str:
        if self.url is not None:
            return f"GET {self.url}"
        if self.tcp_port is not None:
            return f"tcp {self.tcp_host}:{self.tcp_port}"
        return self.run or ""


@dataclass(frozen=True)
class Manifest:
    source: str
    test: Step
    secrets: tuple[str, ...] = ()
    ports: tuple[int, ...] = ()
    env: Mapping[str, str] = field(default_factory=dict)
    setup: Step | None = None
    build: Step | None = None
    start: StartStep | None = None
    ready: ReadyCheck | None = None
    seed: Step | None = None
    reproduce: Step | None = None
    teardown: Step | None = None


class _Table(TableReader):
    """The config reader with the manifest's stricter rules: unknown keys are errors (a misspelt
    `timeout` must not silently become 30 minutes), and step-specific value checks."""

    def error(self, key: str, problem: str) -> ConfigError:
        return ConfigError(f"{self.where(key).rstrip('.')}: {problem}")

    def reject_unknown(self, known: tuple[str, ...]) -> None:
        for key in self.table:
            if key not in known:
                raise self.error(key, f"unknown key; expected one of {', '.join(known)}")

    def text(self, key: str, *, required: bool = False) -> str | None:
        value = self.table.get(key)
        if value is None:
            if required:
                raise self.error(key, "missing; expected a command string")
            return None
        if not isinstance(value, str) or not value.strip():
            raise self.error(key, f"expected a non-empty string, got {value!r}")
        return value

    def seconds(self, key: str, default: float) -> float:
        value = self.table.get(key, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise self.error(key, f"expected a number of seconds, got {value!r}")
        if value <= 0:
            raise self.error(key, f"expected a positive number of seconds, got {value!r}")
        return float(value)

    def relative_path(self, key: str) -> str | None:
        value = self.text(key)
        if value is None:
            return None
        path = PurePosixPath(value)
        if path.is_absolute() or ".." in path.parts:
            raise self.error(
                key, f"expected a path inside the repository, relative to its root, got {value!r}"
            )
        return value

    def environment(self, key: str) -> dict[str, str]:
        value = self.table.get(key, {})
        if not isinstance(value, dict):
            raise self.error(key, f'expected a table of NAME = "value", got {value!r}')
        result: dict[str, str] = {}
        for name, item in value.items():
            if not _VARIABLE_NAME.match(name):
                raise self.error(f"{key}.{name}", "expected a variable name (letters, digits, _)")
            if name in LOADER_VARIABLES or name.startswith(LOADER_VARIABLE_PREFIXES):
                raise self.error(f"{key}.{name}", "changes what code programs load, so it is not accepted in a "
                                 f"manifest env; set it inside the step's `run` instead (run = \"{name}=... command\")")
            if isinstance(item, bool) or not isinstance(item, (str, int, float)):
                raise self.error(f"{key}.{name}", f"expected a string or number, got {item!r}")
            result[name] = item if isinstance(item, str) else str(item)
        return result


def _port(table: _Table, key: str, value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not _PORT_RANGE[0] <= value <= _PORT_RANGE[1]:
        raise table.error(
            key, f"expected a port number from {_PORT_RANGE[0]} to {_PORT_RANGE[1]}, got {value!r}"
        )
    return value


def _command_step(name: str, table: _Table) -> Step:
    table.reject_unknown(_ALLOWED_KEYS[name])
    run = table.text("run", required=True)
    assert run is not None
    return Step(
        name=name,
        run=run,
        timeout=table.seconds("timeout", DEFAULT_TIMEOUTS[name]),
        cwd=table.relative_path("cwd"),
        env=table.environment("env"),
        junit=table.relative_path("junit") if name == "test" else None,
    )


def _start_step(table: _Table) -> StartStep:
    table.reject_unknown(_ALLOWED_KEYS["start"])
    run = table.text("run", required=True)
    assert run is not None
    return StartStep(
        run=run,
        cwd=table.relative_path("cwd"),
        env=table.environment("env"),
        grace=table.seconds("grace", DEFAULT_GRACE),
    )


def _tcp_target(table: _Table, value: Any) -> tuple[str, int]:
    """`tcp = 8000` (loopback) or `tcp = "host:port"`."""
    if isinstance(value, int) and not isinstance(value, bool):
        return "127.0.0.1", _port(table, "tcp", value)
    if isinstance(value, str):
        host, separator, port = value.rpartition(":")
        if separator and host and port.isdigit():
            return host.strip("[]"), _port(table, "tcp", int(port))
    raise table.error("tcp", f'expected a port number or "host:port", got {value!r}')


def _ready_check(table: _Table) -> ReadyCheck:
    table.reject_unknown(_ALLOWED_KEYS["ready"])
    given = [key for key in ("url", "tcp", "run") if key in table.table]
    if len(given) != 1:
        problem = "none" if not given else ", ".join(given)
        raise table.error("", f"expected exactly one of url, tcp, run; got {problem}")
    url = table.text("url")
    if url is not None:
        parts = urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise table.error("url", f"expected an http:// or https:// URL with a host, got {url!r}")
    elif "expect" in table.table:
        raise table.error("expect", "only applies to a url check")
    host, port = _tcp_target(table, table.table["tcp"]) if "tcp" in table.table else (None, None)
    expect = table.table.get("expect", [])
    if not isinstance(expect, list) or not all(
        isinstance(item, int) and not isinstance(item, bool) and _STATUS_RANGE[0] <= item <= _STATUS_RANGE[1]
        for item in expect
    ):
        raise table.error("expect", f"expected a list of HTTP status codes (100 to 599), got {expect!r}")
    return ReadyCheck(
        url=url,
        tcp_host=host,
        tcp_port=port,
        run=table.text("run"),
        timeout=table.seconds("timeout", DEFAULT_READY_TIMEOUT),
        interval=table.seconds("interval", DEFAULT_READY_INTERVAL),
        expect=tuple(expect),
        cwd=table.relative_path("cwd"),
        env=table.environment("env"),
    )


def _step_table(source: str, name: str, value: Any) -> _Table:
    """A step is a table, or a plain command string standing for `{ run = "..." }`."""
    if isinstance(value, str):
        value = {"run": value}
    if not isinstance(value, dict):
        raise ConfigError(f"{source}: {name}: expected a command string or a table, got {value!r}")
    return _Table(source, f"{name}.", value)


def parse_manifest(table: Mapping[str, Any], source: str) -> Manifest:
    """A Manifest from the already-read TOML table; `source` names the file in errors."""
    for key in table:
        if key not in STEP_ORDER and key not in TOP_LEVEL_KEYS:
            raise ConfigError(
                f"{source}: {key}: unknown step; expected one of {', '.join(STEP_ORDER)} "
                f"(or the keys {', '.join(TOP_LEVEL_KEYS)})"
            )
    top = _Table(source, "", table)
    secrets = table.get("secrets", [])
    if not isinstance(secrets, list) or not all(
        isinstance(name, str) and _VARIABLE_NAME.match(name) for name in secrets
    ):
        raise top.error("secrets", f"expected a list of environment variable names, got {secrets!r}")
    ports = table.get("ports", [])
    if not isinstance(ports, list):
        raise top.error("ports", f"expected a list of port numbers, got {ports!r}")
    checked_ports = tuple(_port(top, "ports", value) for value in ports)
    if "ready" in table and not isinstance(table["ready"], dict):
        raise top.error("ready", f"expected a table with one of url, tcp, run, got {table['ready']!r}")
    if "test" not in table:
        raise top.error("test", "missing; the manifest must say how to run the app's tests")
    steps = {
        name: _command_step(name, _step_table(source, name, table[name]))
        for name in COMMAND_STEPS
        if name in table
    }
    return Manifest(
        source=source,
        test=steps["test"],
        secrets=tuple(dict.fromkeys(secrets)),
        ports=tuple(dict.fromkeys(checked_ports)),
        env=top.environment("env"),
        setup=steps.get("setup"),
        build=steps.get("build"),
        start=_start_step(_step_table(source, "start", table["start"])) if "start" in table else None,
        ready=_ready_check(_Table(source, "ready.", table["ready"])) if "ready" in table else None,
        seed=steps.get("seed"),
        reproduce=steps.get("reproduce"),
        teardown=steps.get("teardown"),
    )


def load_manifest(path: Path, source: str) -> Manifest:
    """Read and validate the manifest file; `source` is how errors name it (repo-relative)."""
    try:
        table = read_toml(path)
    except ConfigError as error:
        raise ConfigError(str(error).replace(str(path), source, 1)) from None
    return parse_manifest(table, source)
