"""The shipped CI examples run warm and keep their outputs: each gate job restores
`.reviewgate-cache` with a fallback that reaches the default branch's cache and saves it whatever
the verdict, and the outputs are kept as an artifact whatever the verdict. The GitLab examples say the MR note needs GITLAB_TOKEN."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
GITHUB_EXAMPLES = ("docs/examples/github-workflow.yml", "docs/examples/github-sharded.yml")
GITLAB_EXAMPLES = (".gitlab-ci.example.yml", ".gitlab-ci.sharded.example.yml")


def _load(name: str) -> dict[Any, Any]:
    document = yaml.safe_load((ROOT / name).read_text(encoding="utf-8"))
    assert isinstance(document, dict)
    return document


def _uses(step: dict[str, Any], action: str) -> bool:
    return str(step.get("uses", "")).startswith(f"{action}@")


@pytest.mark.parametrize("name", GITHUB_EXAMPLES)
def test_github_examples_restore_the_cache_before_the_gate_and_upload_the_outputs(name: str) -> None:
    document = _load(name)
    assert "main" in document[True]["push"]["branches"], "main's runs keep the cache pull requests start from"
    gate_jobs = 0
    for job in document["jobs"].values():
        steps = job.get("steps", [])
        gates = [index for index, step in enumerate(steps) if _uses(step, "reviewgate/reviewgate")]
        if not gates:
            continue
        gate_jobs += 1
        restores = [index for index, step in enumerate(steps) if _uses(step, "actions/cache/restore")]
        assert restores and restores[0] < gates[0], f"{name}: the cache is restored before the gate"
        restore = steps[restores[0]]["with"]
        assert restore["path"] == ".reviewgate-cache" and "github.sha" in restore["key"]
        assert restore["restore-keys"] == "reviewgate-", "any branch's newest: the base branch's seeds a PR"
        # actions/cache's combined step saves only when the job succeeds: a blocked push would
        # leave the next one an older cache (and the prompt cache's push-cadence record).
        assert not any(_uses(step, "actions/cache") for step in steps), f"{name}: restore and save apart"
        saves = [index for index, step in enumerate(steps) if _uses(step, "actions/cache/save")]
        assert saves and saves[0] > gates[0], f"{name}: the cache is saved after the gate"
        save = steps[saves[0]]
        assert save.get("if") == "always()", f"{name}: saved whatever the verdict"
        assert save["with"] == {"path": restore["path"], "key": restore["key"]}
    assert gate_jobs, name
    uploads = [step for job in document["jobs"].values() for step in job.get("steps", [])
               if _uses(step, "actions/upload-artifact") and step["with"]["path"] == ".reviewgate/"]
    assert uploads and all(step.get("if") == "always()" for step in uploads), name
    assert all(step["with"].get("include-hidden-files") is True for step in uploads), "a dot directory"


@pytest.mark.parametrize("name", GITLAB_EXAMPLES)
def test_gitlab_examples_cache_with_the_default_branch_as_fallback(name: str) -> None:
    document = _load(name)
    text = (ROOT / name).read_text(encoding="utf-8")
    assert "GITLAB_TOKEN" in text and "api" in text
    cached = [job for job in document.values() if isinstance(job, dict) and "cache" in job]
    assert cached, name
    for job in cached:
        assert job["cache"]["paths"] == [".reviewgate-cache/"]
        assert any("CI_DEFAULT_BRANCH" in key for key in job["cache"]["fallback_keys"])
        assert "run" in " ".join(job["script"]), "the jobs that review keep the cache"
