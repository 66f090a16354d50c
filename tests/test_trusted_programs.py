"""Programs the gate runs after the verify: found and sealed before it, refused when the verify
could replace them, and not run once changed."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewgate.freeze import git_environment as git_module
from reviewgate.trusted_programs import UntrustedProgram, interpreter, resolve, resolve_with_interpreter


def _program(directory: Path, name: str, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    program = directory / name
    program.write_text(body, encoding="utf-8")
    program.chmod(0o755)
    return program


@pytest.fixture
def fresh_git() -> Iterator[None]:
    git_module._sealed_git.cache_clear()
    yield
    git_module._sealed_git.cache_clear()


def test_a_git_changed_after_the_first_git_call_is_not_run(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fresh_git: None) -> None:
    shim = _program(tmp_path / "bin", "git", f'#!/bin/sh\nexec "{shutil.which("git")}" "$@"\n')
    monkeypatch.setenv("PATH", f"{shim.parent}{os.pathsep}{os.environ['PATH']}")
    assert git_module.git_program() == str(shim)
    with shim.open("a", encoding="utf-8") as program:
        program.write("# planted\n")
    with pytest.raises(UntrustedProgram, match=r"'git' \(.*/bin/git\) changed after it was resolved before the verify"):
        git_module.git_program()


@pytest.mark.skipif(os.geteuid() != 0, reason="as root the verify is another uid, whose writes are known")
def test_a_program_in_a_directory_writable_by_all_is_refused(tmp_path: Path) -> None:
    program = _program(tmp_path / "open", "agent", "#!/bin/sh\n")
    program.parent.chmod(0o777)
    with pytest.raises(UntrustedProgram, match=r"is writable by the verify's principal"):
        resolve(str(program))
    program.parent.chmod(0o1777)  # sticky, like /tmp: no one replaces another's entry
    assert resolve(str(program)).path == program


def test_a_scripts_interpreter_is_sealed_too(tmp_path: Path) -> None:
    node = _program(tmp_path / "node-bin", "node", "#!/bin/sh\n")
    script = _program(tmp_path / "bin", "claude", "#!/usr/bin/env node\nconsole.log(1)\n")
    assert interpreter(script) == "node"
    sealed = resolve_with_interpreter("claude", f"{script.parent}{os.pathsep}{node.parent}")
    assert [program.path for program in sealed] == [script, node]
    node.write_text("#!/bin/sh\necho planted\n", encoding="utf-8")
    with pytest.raises(UntrustedProgram, match="changed after"):
        sealed[1].check()


def test_a_missing_program_is_named(tmp_path: Path) -> None:
    with pytest.raises(UntrustedProgram, match="'no-such-agent': not found on PATH"):
        resolve("no-such-agent", str(tmp_path))
