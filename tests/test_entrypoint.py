"""The container's entrypoint: action inputs (INPUT_*, hyphens kept) drive the same gate."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from entrypoint import InputError, arguments_from_inputs, environment_from_inputs
from testing.cli import clean_environment
from testing.repo import make_repo

ENTRYPOINT = Path(__file__).resolve().parents[1] / "entrypoint.py"


def test_inputs_map_onto_flags() -> None:
    environ = {
        "INPUT_BASE": "main",
        "INPUT_OUTPUT-DIR": "out",
        "INPUT_REVIEWERS": "builtin, llm\nother",
        "INPUT_FAIL-ON": "correctness:major",
        "INPUT_NO-VERIFY": "true",
        "INPUT_HEAD": "",
    }
    assert arguments_from_inputs(environ) == [
        "run", "--base", "main", "--output-dir", "out", "--reviewer", "builtin", "--reviewer", "llm",
        "--reviewer", "other", "--fail-on", "correctness:major", "--no-verify",
    ]


def test_a_false_switch_and_empty_inputs_add_nothing() -> None:
    assert arguments_from_inputs({"INPUT_NO-VERIFY": "false", "INPUT_REVIEWERS": " "}) == ["run"]


def test_a_bad_switch_names_the_input() -> None:
    with pytest.raises(InputError, match="input no-verify: expected true or false, got 'maybe'"):
        arguments_from_inputs({"INPUT_NO-VERIFY": "maybe"})


def test_the_token_input_becomes_an_environment_variable_not_a_flag() -> None:
    assert environment_from_inputs({"INPUT_GITHUB-TOKEN": "ghs_secret"}) == {"GITHUB_TOKEN": "ghs_secret"}
    assert "ghs_secret" not in arguments_from_inputs({"INPUT_GITHUB-TOKEN": "ghs_secret"})


def test_the_entrypoint_runs_the_gate_in_github_actions(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"a.py": ""}, {"a.py": "def find(cursor, request):\n    cursor.execute(f\"SELECT id FROM users WHERE name = '{request.args['name']}'\")\n    return cursor.fetchone()\n"})
    outputs = tmp_path / "outputs"
    env = clean_environment({
        "GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(outputs), "INPUT_BASE": "main", "INPUT_OUTPUT-DIR": "gate-out",
        "INPUT_NO-VERIFY": "false",
    })
    completed = subprocess.run([sys.executable, str(ENTRYPOINT)], cwd=repo.path, env=env, capture_output=True,
                               text=True, timeout=120, check=False)
    assert completed.returncode == 1, completed.stderr
    assert "::error file=a.py,line=2" in completed.stdout
    report = json.loads((repo.path / "gate-out" / "report.json").read_text())
    assert report["verdict"] == "request_changes"
    written = dict(line.split("=", 1) for line in outputs.read_text().splitlines())
    assert written["verdict"] == "request_changes"
    import yaml

    action = yaml.safe_load((ENTRYPOINT.parent / "action.yml").read_text())
    assert set(written) == set(action["outputs"]), "action.yml must declare every output the gate sets"


def test_the_entrypoint_rejects_a_bad_input_with_exit_2(tmp_path: Path) -> None:
    env = clean_environment({"INPUT_NO-VERIFY": "maybe"})
    completed = subprocess.run([sys.executable, str(ENTRYPOINT)], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=60, check=False)
    assert completed.returncode == 2
    assert completed.stderr.strip() == "reviewgate: error: input no-verify: expected true or false, got 'maybe'"


def test_every_action_input_is_mapped_and_every_mapping_is_an_input() -> None:
    import yaml

    from entrypoint import ENVIRONMENT_INPUTS, INPUTS

    action = yaml.safe_load((ENTRYPOINT.parent / "action.yml").read_text())
    declared = set(action["inputs"])
    mapped = {item.name for item in INPUTS} | set(ENVIRONMENT_INPUTS)
    assert declared == mapped


def test_fail_on_none_is_report_only_through_the_action_input() -> None:
    assert arguments_from_inputs({"INPUT_FAIL-ON": "none"}) == ["run", "--fail-on", "none"]


def test_the_shard_input_maps_onto_the_flag_and_a_bad_one_names_the_input() -> None:
    assert arguments_from_inputs({"INPUT_SHARD": "2/4"}) == ["run", "--shard", "2/4"]
    for value in ("0/4", "5/4", "a/b"):
        with pytest.raises(InputError) as raised:
            arguments_from_inputs({"INPUT_SHARD": value})
        assert str(raised.value) == f"input shard: {value!r} is not I/N with 1 <= I <= N (e.g. 2/4: the 2nd of 4 shards)"


def _outputs(path: Path) -> dict[str, str]:
    return dict(line.split("=", 1) for line in path.read_text(encoding="utf-8").splitlines())


def test_a_bad_input_still_sets_the_outputs_saying_what_happened(tmp_path: Path) -> None:
    outputs, summary = tmp_path / "outputs", tmp_path / "summary.md"
    env = clean_environment({"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(outputs),
                             "GITHUB_STEP_SUMMARY": str(summary), "INPUT_NO-VERIFY": "maybe"})
    completed = subprocess.run([sys.executable, str(ENTRYPOINT)], cwd=tmp_path, env=env, capture_output=True,
                               text=True, timeout=60, check=False)
    assert completed.returncode == 2
    import yaml

    written = _outputs(outputs)
    assert set(written) == set(yaml.safe_load((ENTRYPOINT.parent / "action.yml").read_text())["outputs"])
    assert written["verdict"] == "error" and written["report"] == "" and written["blocking"] == "0"
    assert written["error"] == "input no-verify: expected true or false, got 'maybe'"
    assert "not reviewed (exit 2: a usage or config error)" in summary.read_text(encoding="utf-8")


def test_a_base_that_names_nothing_in_github_actions_sets_verdict_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"a.py": ""}, {"a.py": "x = 1\n"})
    outputs = tmp_path / "outputs"
    env = clean_environment({"GITHUB_ACTIONS": "true", "GITHUB_OUTPUT": str(outputs), "INPUT_BASE": "no-such-base"})
    completed = subprocess.run([sys.executable, str(ENTRYPOINT)], cwd=repo.path, env=env, capture_output=True,
                               text=True, timeout=60, check=False)
    assert completed.returncode == 2, completed.stderr
    written = _outputs(outputs)
    assert written["verdict"] == "error"
    assert "'no-such-base' (from input base)" in written["error"], written["error"]
