"""GitLab: one MR note kept in place, trusted notes by access level, CI_JOB_TOKEN skipped."""

from __future__ import annotations

from pathlib import Path

from reviewgate.forge.metadata import parse_metadata
from testing.changes import BLOCKING_CHANGE, BLOCKING_LINE, BLOCKING_PATH
from testing.cli import run_cli
from testing.forge_server import ForgeServer, fast_retry_config, gitlab_environment
from testing.repo import make_repo

NOTES = r"/merge_requests/3/notes"
WHERE = f"{BLOCKING_PATH}:{BLOCKING_LINE}"  # the blocking finding, as a REVIEW-REJECTED: names it


def _repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"app.py": "x = 1\n"}, BLOCKING_CHANGE).path


def test_one_note_is_written_then_edited_in_place(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = str(fast_retry_config(tmp_path))
    with ForgeServer() as server:
        first = run_cli(repo, "run", "--no-verify", "--config", config, env=gitlab_environment(server))
        second = run_cli(repo, "run", "--no-verify", "--config", config, env=gitlab_environment(server))
    state = server.state
    assert (first.returncode, second.returncode) == (1, 1)
    assert len(state.notes) == 1
    assert len(state.posts("POST", NOTES + "$")) == 1 and len(state.posts("PUT", NOTES + r"/\d+$")) == 1
    body = next(iter(state.notes.values()))["body"]
    assert body.startswith("REVIEW: REQUEST CHANGES\n")
    metadata = parse_metadata(body)
    assert metadata is not None and metadata.patch_sha256 == second.report()["target"]["patch_sha256"]
    assert all(item.token == "api-token" for item in state.requests)
    assert state.requests[0].path == "/api/v4/user"
    assert any("/projects/group%2Fapp/" in item.path for item in state.requests)
    assert (first.output_dir / "codequality.json").is_file()


def test_rejections_count_from_developers_and_not_from_reporters(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with ForgeServer() as server:
        server.state.members.update({5: 20, 6: 30})  # Reporter, Developer
        server.state.add_note(f"REVIEW-REJECTED: {WHERE} a reporter says no", 5, "reporter")
        server.state.add_note("merged main into this branch", 7, "someone", system=True)
        result = run_cli(repo, "run", "--no-verify", "--config", str(fast_retry_config(tmp_path)),
                         env=gitlab_environment(server))
        assert result.returncode == 1
        server.state.add_note(f"REVIEW-REJECTED: {WHERE} the name is one of our job names", 6, "dev")
        again = run_cli(repo, "run", "--no-verify", "--config", str(fast_retry_config(tmp_path)),
                        env=gitlab_environment(server))
    assert again.returncode == 0
    assert again.report()["findings"][0]["dismissed"] == "rejected: the name is one of our job names"
    member_lookups = server.state.posts("GET", r"/members/all/\d+$")
    assert sorted({item.path.rsplit("/", 1)[1] for item in member_lookups}) == ["5", "6"]


def test_only_a_job_token_skips_the_note_and_says_why(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    with ForgeServer() as server:
        env = gitlab_environment(server, token=None, job_token="job")
        result = run_cli(repo, "run", "--no-verify", env=env)
    assert result.returncode == 1
    assert server.state.requests == []
    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    assert "CI_JOB_TOKEN" in summary and "cannot read or write merge request notes" in summary


def test_the_round_cap_labels_the_merge_request(tmp_path: Path) -> None:
    repo = _repo(tmp_path)
    config = str(fast_retry_config(tmp_path, extra="[review]\nmax_rounds = 1\n", gitlab='label = "stuck"\n'))
    with ForgeServer() as server:
        result = run_cli(repo, "run", "--no-verify", "--config", config, env=gitlab_environment(server))
    assert result.returncode == 1
    assert server.state.labels == ["stuck"]
    assert "Review round 1 of 1: the review loop gave up (label `stuck`)" in next(
        iter(server.state.notes.values()))["body"]
