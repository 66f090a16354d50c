"""Base and head from captured GitHub event payloads and GitLab job variables (pure functions)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from reviewgate.ci import detect
from reviewgate.ci.events import github_refs, gitlab_refs
from reviewgate.ci.github import MAX_EVENT_BYTES
from reviewgate.errors import UsageError
from testing.ci import PLACEHOLDER_BASE as BASE
from testing.ci import PLACEHOLDER_HEAD as HEAD
from testing.ci import PLACEHOLDER_MERGE as MERGE
from testing.ci import github_env, load_payload

WHERE = "GITHUB_EVENT_PATH (event.json)"


def test_pull_request_reviews_the_branch_head_not_the_test_merge() -> None:
    refs = github_refs("pull_request", load_payload("github_pull_request.json"), {"GITHUB_SHA": MERGE}, WHERE)
    assert (refs.base_sha, refs.head_sha) == (BASE, HEAD)
    assert refs.base_source == "pull_request event: pull_request.base.sha"
    assert "pull_request.head.sha" in (refs.head_source or "")
    assert refs.is_fork is False
    assert refs.pull_request_number == 42


def test_pull_request_target_from_a_fork_is_detected() -> None:
    payload = load_payload("github_pull_request_target_fork.json")
    refs = github_refs("pull_request_target", payload, {"GITHUB_SHA": BASE}, WHERE)
    assert (refs.base_sha, refs.head_sha, refs.is_fork) == (BASE, HEAD, True)


def test_a_push_to_the_default_branch_reviews_after_against_before() -> None:
    """`before` is the target branch's own previous tip: what this push added to it."""
    refs = github_refs("push", load_payload("github_push.json"), {"GITHUB_SHA": HEAD}, WHERE)
    assert (refs.base_sha, refs.base_branch, refs.head_sha) == (BASE, None, HEAD)
    assert (refs.base_source or "").startswith("push event: before: the previous tip of the default branch main")


@pytest.mark.parametrize(
    "payload", ["github_push.json", "github_push_new_branch.json", "github_push_forced.json"]
)
def test_a_push_to_another_branch_is_judged_against_the_default_branch(payload: str) -> None:
    """Never against `before`, the branch's own previous push: the policy would be read at a
    commit of the branch under review and only the last push's diff reviewed."""
    event = load_payload(payload)
    event["ref"] = "refs/heads/feature"
    refs = github_refs("push", event, {"GITHUB_SHA": HEAD}, WHERE)
    assert (refs.base_sha, refs.base_branch, refs.head_sha) == (None, "main", HEAD)
    assert refs.base_source == (
        "push to branch feature (push event: ref): merge-base with the target branch, repository.default_branch"
    )


def test_a_tag_push_is_judged_against_the_default_branch() -> None:
    event = load_payload("github_push.json")
    event["ref"] = "refs/tags/v1.0"
    refs = github_refs("push", event, {"GITHUB_SHA": HEAD}, WHERE)
    assert (refs.base_sha, refs.base_branch) == (None, "main")
    assert "a tag" in (refs.base_source or "")


def test_a_forced_push_to_the_default_branch_reviews_from_before() -> None:
    event = load_payload("github_push_forced.json")
    event["ref"] = "refs/heads/main"
    refs = github_refs("push", event, {"GITHUB_SHA": HEAD}, WHERE)
    assert (refs.base_sha, refs.base_branch) == (BASE, None)
    assert "forced: from its merge base with after" in (refs.base_source or "")


def test_a_push_creating_the_default_branch_has_no_earlier_target_commit() -> None:
    event = load_payload("github_push_new_branch.json")
    event["ref"] = "refs/heads/main"
    refs = github_refs("push", event, {"GITHUB_SHA": HEAD}, WHERE)
    assert (refs.base_sha, refs.base_branch) == (None, "main")
    assert refs.base_source == (
        "push to the default branch main with no previous tip (push event: before is all zeros or unset): "
        "merge-base with the target branch, repository.default_branch"
    )


def test_merge_group_uses_its_base_and_head() -> None:
    refs = github_refs("merge_group", load_payload("github_merge_group.json"), {"GITHUB_SHA": HEAD}, WHERE)
    assert (refs.base_sha, refs.head_sha) == (BASE, HEAD)
    assert refs.base_source == "merge_group event: merge_group.base_sha"


def test_workflow_dispatch_takes_the_base_input() -> None:
    refs = github_refs(
        "workflow_dispatch", load_payload("github_workflow_dispatch.json"), {"GITHUB_SHA": HEAD}, WHERE
    )
    assert (refs.base_sha, refs.base_branch, refs.head_sha) == (None, "release/1.2", HEAD)
    assert refs.base_source == "workflow_dispatch event: inputs.base"


def test_schedule_falls_back_to_the_default_branch() -> None:
    refs = github_refs("schedule", load_payload("github_schedule.json"), {"GITHUB_SHA": HEAD}, WHERE)
    assert (refs.base_sha, refs.base_branch, refs.head_sha, refs.head_source) == (
        None,
        "main",
        HEAD,
        "GITHUB_SHA",
    )


@pytest.mark.parametrize("bad", ["--upload-pack=touch /tmp/x", "main", "12345", 7])
def test_a_sha_that_is_not_hex_is_refused_naming_the_field(bad: object) -> None:
    payload = load_payload("github_pull_request.json")
    payload["pull_request"]["head"]["sha"] = bad
    with pytest.raises(UsageError, match=r"event.json\): pull_request.head.sha: expected a commit SHA"):
        github_refs("pull_request", payload, {}, WHERE)


def test_gitlab_merge_request_pipeline() -> None:
    refs = gitlab_refs(load_payload("gitlab_merge_request.json"))
    assert (refs.base_sha, refs.head_sha) == (BASE, HEAD)
    assert (refs.base_source, refs.head_source) == ("CI_MERGE_REQUEST_DIFF_BASE_SHA", "CI_COMMIT_SHA")
    assert refs.pull_request_number == 7 and refs.is_fork is False


def test_gitlab_merged_results_pipeline_reviews_the_source_head_not_the_synthetic_merge() -> None:
    refs = gitlab_refs(load_payload("gitlab_merged_result.json"))
    assert (refs.base_sha, refs.head_sha) == (BASE, HEAD)
    assert "CI_MERGE_REQUEST_SOURCE_BRANCH_SHA" in (refs.head_source or "")
    assert refs.is_fork is True


def test_gitlab_merged_results_without_source_sha_is_a_clear_error() -> None:
    variables = load_payload("gitlab_merged_result.json")
    del variables["CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"]
    with pytest.raises(UsageError, match="CI_MERGE_REQUEST_SOURCE_BRANCH_SHA"):
        gitlab_refs(variables)


def test_gitlab_branch_pipelines_are_judged_against_the_default_branch() -> None:
    for name in ("gitlab_branch.json", "gitlab_branch_first_pipeline.json"):
        refs = gitlab_refs(load_payload(name))
        assert (refs.base_sha, refs.base_branch, refs.head_sha) == (None, "main", HEAD), name
        assert refs.base_source == (
            "push to branch feature (CI_COMMIT_BRANCH): merge-base with the target branch, CI_DEFAULT_BRANCH"
        )


def test_a_gitlab_pipeline_of_the_default_branch_reviews_from_before() -> None:
    variables = {**load_payload("gitlab_branch.json"), "CI_COMMIT_BRANCH": "main"}
    refs = gitlab_refs(variables)
    assert (refs.base_sha, refs.base_branch, refs.head_sha) == (BASE, None, HEAD)
    assert (refs.base_source or "").startswith("CI_COMMIT_BEFORE_SHA: the previous tip of the default branch main")


def test_detect_reads_the_event_file_at_the_edge(tmp_path: Path) -> None:
    env = github_env(tmp_path, "pull_request", load_payload("github_pull_request.json"), GITHUB_SHA=MERGE)
    context = detect(env)
    assert (context.provider, context.base_sha, context.head_sha) == ("github", BASE, HEAD)
    assert context.pull_request_number == 42


def test_detect_gitlab() -> None:
    context = detect(load_payload("gitlab_merged_result.json"))
    assert (context.provider, context.base_sha, context.head_sha) == ("gitlab", BASE, HEAD)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"{not json", "not valid JSON"),
        (b"[1, 2]", "expected a JSON object"),
        (None, "cannot read the event file"),
        (b'{"a": ' * 100_000 + b"1" + b"}" * 100_000, "not valid JSON: nested too deeply to read"),
    ],
)
def test_a_broken_event_file_is_one_clear_error(tmp_path: Path, content: bytes | None, message: str) -> None:
    event = tmp_path / "event.json"
    if content is not None:
        event.write_bytes(content)
    env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "pull_request", "GITHUB_EVENT_PATH": str(event)}
    with pytest.raises(UsageError, match=f"GITHUB_EVENT_PATH \\({event}\\): {message}"):
        detect(env)


def test_an_event_file_larger_than_any_webhook_payload_is_refused_unread(tmp_path: Path) -> None:
    event = tmp_path / "event.json"
    with event.open("wb") as file:
        file.truncate(MAX_EVENT_BYTES + 1)  # sparse: no disk written
    env = {"GITHUB_ACTIONS": "true", "GITHUB_EVENT_NAME": "push", "GITHUB_EVENT_PATH": str(event)}
    with pytest.raises(UsageError, match=f"GITHUB_EVENT_PATH \\({event}\\): the event file is larger than 32 MiB$"):
        detect(env)


def test_payload_files_are_valid_json() -> None:
    for path in Path(__file__).with_name("payloads").glob("*.json"):
        assert isinstance(json.loads(path.read_text(encoding="utf-8")), dict), path
