"""`run --shard I/N` and `merge`: four shards merged publish what one run publishes; a merge with
a missing, foreign, tampered, duplicated or failed shard is blocked, never approved."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from reviewgate.cli import main
from reviewgate.freeze.freeze import freeze
from reviewgate.sharding.plan import ShardSpec, parse_shard, plan_shards
from testing.cli import CliResult, run_cli
from testing.forge_server import ForgeServer, fast_retry_config, github_environment
from testing.model_repo import calc_repo, fast_openai, write_config
from testing.model_server import ModelServer, Reply, review_document
from testing.repo import commit, git, make_repo
from testing.sharding import BASE, CHANGE, one_run_findings, sharded_findings
from tests.test_corpus import load_cases

TOTAL = 4
COMPARED_FILES = ("junit.xml", "review.sarif", "codequality.json")
_TIMES = re.compile(r' (time|timestamp)="[^"]*"')


@dataclass(frozen=True)
class Sharded:
    repo: Path
    single: CliResult
    shard_dirs: tuple[Path, ...]


def _shard(repo: Path, index: int, output_dir: Path, *args: str, env: dict[str, str] | None = None) -> CliResult:
    return run_cli(repo, "run", "--base", "main", "--shard", f"{index}/{TOTAL}", "--output-dir", str(output_dir),
                   *args, env=env)


def _merge(repo: Path, output_dir: Path, *locations: Path, env: dict[str, str] | None = None,
           args: tuple[str, ...] = ()) -> CliResult:
    return run_cli(repo, "merge", *map(str, locations), "--base", "main", "--output-dir", str(output_dir), *args,
                   env=env)


@pytest.fixture(scope="module")
def sharded(tmp_path_factory: pytest.TempPathFactory) -> Sharded:
    root = tmp_path_factory.mktemp("sharded")
    repo = make_repo(root, BASE, CHANGE).path
    single = run_cli(repo, "run", "--base", "main", "--output-dir", str(root / "single"))
    dirs = tuple(root / f"shard{index}" for index in range(1, TOTAL + 1))
    for index, directory in enumerate(dirs, start=1):
        result = _shard(repo, index, directory)
        assert result.returncode == 0, result.stderr
    return Sharded(repo, single, dirs)


def _shard_copies(sharded: Sharded, destination: Path) -> list[Path]:
    copies = []
    for directory in sharded.shard_dirs:
        copies.append(destination / directory.name)
        shutil.copytree(directory, copies[-1])
    return copies


def _report_file(directory: Path) -> Path:
    (found,) = directory.glob("shard-*-of-*.json")
    return found


def _findings(report: dict[str, Any]) -> list[dict[str, Any]]:
    return report["findings"]  # type: ignore[no-any-return]


def test_four_shards_merged_publish_what_one_run_publishes(sharded: Sharded, tmp_path: Path) -> None:
    single = sharded.single.report()
    assert sharded.single.returncode == 1
    blocking = [item for item in _findings(single) if item["blocking"]]
    lenses = {item["category"] for item in _findings(single)}
    # The change exercises per-file and whole-change lenses, blocking and non-blocking.
    assert blocking and len(blocking) < len(_findings(single))
    assert {"reuse", "tests", "security", "readability"} <= lenses
    assert single["verify"]["status"] == "passed"
    # Each shard wrote its report and nothing else; only shard 1 ran the verify.
    for index, directory in enumerate(sharded.shard_dirs, start=1):
        names = {item.name for item in directory.iterdir()}
        assert names - {"verify", ".lock", ".gitignore"} == {f"shard-{index}-of-{TOTAL}.json"}
        shard_report = json.loads(_report_file(directory).read_text())
        assert (shard_report["verify"] is not None) == (index == 1)
    merged = _merge(sharded.repo, tmp_path / "merged", *sharded.shard_dirs)
    assert merged.returncode == sharded.single.returncode, merged.stderr
    report = merged.report()
    assert _findings(report) == _findings(single)
    for key in ("verdict", "route", "reasons", "target"):
        assert report[key] == single[key]
    assert report["verify"]["status"] == single["verify"]["status"]
    assert [item["status"] for item in report["reviewers"]] == [item["status"] for item in single["reviewers"]]
    for name in COMPARED_FILES:
        ours = _TIMES.sub("", (merged.output_dir / name).read_text())
        theirs = _TIMES.sub("", (sharded.single.output_dir / name).read_text())
        assert ours == theirs, name
    assert (merged.output_dir / "summary.md").is_file()


def test_findings_of_every_shard_count_split_any_way(sharded: Sharded) -> None:
    whole = one_run_findings(sharded.repo)
    assert whole
    for total in (2, 3, 7):  # 7 > the files: some shards review nothing
        assert sharded_findings(sharded.repo, total) == whole, total


def test_a_missing_shard_blocks(sharded: Sharded, tmp_path: Path) -> None:
    copies = _shard_copies(sharded, tmp_path)
    result = _merge(sharded.repo, tmp_path / "merged", copies[0], copies[1], copies[3])
    assert result.returncode == 3
    report = result.report()
    assert report["verdict"] == "blocked"
    assert any("shard 3/4: no report" in reason for reason in report["reasons"])


def test_a_shard_of_another_head_blocks(sharded: Sharded, tmp_path: Path) -> None:
    repo = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(sharded.repo), str(repo))
    git(repo, "branch", "-q", "main", "origin/main")
    old_head = git(repo, "rev-parse", "HEAD")
    new_head = commit(repo, {"app/extra.py": "VALUE = 1\n"}, "one more commit")
    copies = _shard_copies(sharded, tmp_path / "old")
    foreign = tmp_path / "new2"
    assert _shard(repo, 2, foreign).returncode == 0
    result = _merge(repo, tmp_path / "merged", copies[0], foreign, copies[2], copies[3],
                    args=("--head", old_head))
    assert result.returncode == 3
    reasons = result.report()["reasons"]
    assert any("shard 2/4" in reason and f"head {new_head}" in reason and old_head in reason for reason in reasons)


@pytest.mark.parametrize("tamper", ["paths", "hash", "whole_change"])
def test_a_tampered_plan_blocks(sharded: Sharded, tmp_path: Path, tamper: str) -> None:
    copies = _shard_copies(sharded, tmp_path)
    path = _report_file(copies[1])
    document = json.loads(path.read_text())
    if tamper == "paths":  # shard 2 claims a file of shard 3 as its own, keeping the hash
        document["plan"]["paths"] = json.loads(_report_file(copies[2]).read_text())["plan"]["paths"]
    elif tamper == "hash":
        document["plan"]["sha256"] = "0" * 64
    else:
        document["plan"]["whole_change"] = True
    path.write_text(json.dumps(document))
    result = _merge(sharded.repo, tmp_path / "merged", *copies)
    assert result.returncode == 3
    assert any("shard 2/4" in reason and "followed another plan" in reason for reason in result.report()["reasons"])


def test_a_duplicate_shard_blocks(sharded: Sharded, tmp_path: Path) -> None:
    copies = _shard_copies(sharded, tmp_path)
    again = tmp_path / "again"
    shutil.copytree(copies[1], again)
    result = _merge(sharded.repo, tmp_path / "merged", *copies, again)
    assert result.returncode == 3
    assert any("shard 2/4 was given twice" in reason for reason in result.report()["reasons"])


def test_a_shard_that_could_not_run_reports_it_and_the_merge_blocks(sharded: Sharded, tmp_path: Path) -> None:
    broken = tmp_path / "broken.toml"
    broken.write_text("[review\n")
    failed = tmp_path / "failed3"
    result = _shard(sharded.repo, 3, failed, "--config", str(broken))
    assert result.returncode == 2
    assert "broken.toml" in result.stderr
    document = json.loads((failed / "shard-3-of-4.json").read_text())
    assert document["status"] == "failed" and "broken.toml" in document["reason"]
    copies = _shard_copies(sharded, tmp_path)
    merged = _merge(sharded.repo, tmp_path / "merged", copies[0], copies[1], failed, copies[3])
    assert merged.returncode == 3
    assert any("shard 3/4" in reason and "could not run" in reason for reason in merged.report()["reasons"])


def test_no_report_at_all_blocks(sharded: Sharded, tmp_path: Path) -> None:
    empty = tmp_path / "empty"
    empty.mkdir()
    result = _merge(sharded.repo, tmp_path / "merged", empty)
    assert result.returncode == 3
    reasons = result.report()["reasons"]
    assert any("no shard report" in reason for reason in reasons)


@pytest.mark.parametrize("value", ["0/4", "5/4", "a/b", "2", "1/0"])
def test_a_bad_shard_value_is_a_usage_error(tmp_path: Path, value: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--repo", str(tmp_path), "--shard", value, "--output-dir", str(tmp_path / "out")]) == 2
    assert capsys.readouterr().err.strip() == (
        f"reviewgate: error: --shard: {value!r} is not I/N with 1 <= I <= N (e.g. 2/4: the 2nd of 4 shards)")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("other", [["--bundle", "plan.md"], ["--include-dirty"]])
def test_a_shard_of_a_bundle_or_a_dirty_tree_is_a_usage_error(tmp_path: Path, other: list[str],
                                                              capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["run", "--repo", str(tmp_path), "--shard", "1/2", *other]) == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("reviewgate: error: --shard: ") and other[0] in error and "\n" not in error


def test_the_plan_is_balanced_deterministic_and_covers_every_file(sharded: Sharded) -> None:
    target = freeze(sharded.repo, base="main")
    plan = plan_shards(target, 3)
    assert plan == plan_shards(target, 3) and plan.sha256 == plan_shards(target, 3).sha256
    assert sorted(path for part in plan.parts for path in part) == sorted(change.path for change in target.files)
    weights = {change.path: change.stats.added_lines + 1 for change in target.files}
    loads = [sum(weights[path] for path in part) for part in plan.parts]
    # Greedy to the lightest: no shard exceeds another by more than the heaviest file.
    assert max(loads) - min(loads) <= max(weights.values())
    # Heaviest first, ties by path: the two 13-line copies go to shards 1 and 2 in path order.
    assert "app/export.py" in plan.parts[0] and "app/report.py" in plan.parts[1]
    assert plan_shards(target, 4).sha256 != plan.sha256
    assert parse_shard(" 2/4 ") == ShardSpec(2, 4)


def test_on_github_shards_post_nothing_and_the_merge_posts_one_check_run(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE)
    config = fast_retry_config(tmp_path)
    with ForgeServer() as server:
        state = server.state
        outputs, step_summary = tmp_path / "github_output", tmp_path / "step_summary"
        env = {**github_environment(server, tmp_path, head_sha=repo.head_sha),
               "GITHUB_OUTPUT": str(outputs), "GITHUB_STEP_SUMMARY": str(step_summary)}
        state.add_comment("REVIEW-REJECTED: app/notes.py:4 kept on purpose", "owner", "OWNER")
        dirs = [tmp_path / f"shard{index}" for index in range(1, TOTAL + 1)]
        for index, directory in enumerate(dirs, start=1):
            result = _shard(repo.path, index, directory, "--no-verify", "--config", str(config), env=env)
            assert result.returncode == 0, result.stderr
            assert "::" not in result.stdout  # no workflow-command annotations
        # Shards read the conversation (for their reviewers) and write nothing.
        assert state.requests and all(item.method == "GET" for item in state.requests)
        assert not state.check_runs and len(state.comments) == 1
        assert not outputs.exists() and not step_summary.exists()
        result = _merge(repo.path, tmp_path / "merged", *dirs, env=env, args=("--config", str(config)))
        assert result.returncode == 1, result.stderr
        assert len(state.posts("POST", r"/check-runs$")) == 1
        (check_run,) = state.check_runs.values()
        assert check_run["status"] == "completed" and check_run["head_sha"] == repo.head_sha
        assert check_run["conclusion"] == "failure"
        assert len(state.comments) == 2  # the rejection, and the one summary comment
        assert not state.schema_errors
    assert "verdict=request_changes" in outputs.read_text().splitlines()
    assert "reviewgate" in step_summary.read_text()
    report = result.report()
    dismissed = [item for item in _findings(report) if item["dismissed"]]
    assert [item["path"] for item in dismissed] == ["app/notes.py"]


def test_every_multi_file_corpus_case_finds_the_same_in_shards(tmp_path: Path) -> None:
    """The lenses run per file in a shard are per-file indeed: over the labelled corpus, every
    case of several files finds in 2 and 3 shards exactly what one run finds."""
    cases = [case for case in load_cases() if len(case.get("branch", {})) > 1]
    assert len(cases) >= 10
    for index, case in enumerate(cases):
        repo = make_repo(tmp_path / str(index), case.get("base", {}), case.get("branch", {}),
                         branch_name=case.get("branch_name", "feature"),
                         message=case.get("message", "feature work")).path
        sections = {"lenses": case["lenses"]} if "lenses" in case else None
        whole = one_run_findings(repo, sections)
        for total in (2, 3):
            assert sharded_findings(repo, total, sections) == whole, (case["name"], total)


def test_a_model_reviewer_in_shards_is_sent_only_each_shards_files(tmp_path: Path) -> None:
    geometry = "def area(width, height):\n    return width * height  # GEOMETRY-MARKER\n"
    repo = calc_repo(tmp_path, extra_branch={"lib/geometry.py": geometry}).path
    with ModelServer([Reply(review=review_document())]) as server:
        write_config(repo, "openai", fast_openai(server.url))
        env = {"OPENAI_API_KEY": "test-key"}
        dirs = [tmp_path / "shard1", tmp_path / "shard2"]
        for index, directory in enumerate(dirs, start=1):
            result = run_cli(repo, "run", "--base", "main", "--no-verify", "--shard", f"{index}/2",
                             "--output-dir", str(directory), env=env)
            assert result.returncode == 0, result.stderr
        sent = [item.text for item in server.posts()]
        merged = run_cli(repo, "merge", *map(str, dirs), "--base", "main", "--output-dir",
                         str(tmp_path / "merged"), env=env)
    assert len(sent) == 2  # one request per shard, each with one file's diff
    assert sum("GEOMETRY-MARKER" in text for text in sent) == 1
    assert sum("def divide" in text for text in sent) == 1
    assert merged.returncode == 0, merged.stderr
    (outcome,) = merged.report()["reviewers"]
    assert outcome["status"] == "ok" and outcome["usage"]["requests"] == 2


def test_the_example_workflows_shard_and_merge_the_same_plan() -> None:
    root = Path(__file__).parent.parent
    github = yaml.safe_load((root / "docs/examples/github-sharded.yml").read_text())
    shard_job, merge_job = github["jobs"]["shard"], github["jobs"]["merge"]
    shards = shard_job["strategy"]["matrix"]["shard"]
    (gate,) = [step for step in shard_job["steps"] if str(step.get("uses", "")).startswith("reviewgate/")]
    assert shards == list(range(1, len(shards) + 1)) and gate["with"]["shard"] == f"${{{{ matrix.shard }}}}/{len(shards)}"
    assert merge_job["needs"] == "shard" and merge_job["if"] == "always()"
    assert any(str(step.get("run", "")).startswith("reviewgate merge ") for step in merge_job["steps"])
    gitlab = yaml.safe_load((root / ".gitlab-ci.sharded.example.yml").read_text())
    assert gitlab["reviewgate-shard"]["parallel"] == len(shards)
    assert '--shard "${CI_NODE_INDEX}/${CI_NODE_TOTAL}"' in gitlab["reviewgate-shard"]["script"][0]
    assert gitlab["reviewgate"]["needs"] == [{"job": "reviewgate-shard", "artifacts": True}]
    assert gitlab["reviewgate"]["script"][0].startswith("reviewgate merge ")


def test_a_reviewer_the_merge_expects_but_no_shard_ran_blocks(sharded: Sharded, tmp_path: Path) -> None:
    result = _merge(sharded.repo, tmp_path / "merged", *sharded.shard_dirs,
                    args=("--reviewer", "builtin", "--reviewer", "openai"))
    assert result.returncode == 3
    assert any("openai ran in no shard" in reason for reason in result.report()["reasons"])


def test_a_shard_leaves_no_report_of_an_earlier_run_beside_its_own(sharded: Sharded, tmp_path: Path) -> None:
    (directory,) = _shard_copies(sharded, tmp_path)[:1]
    assert _shard(sharded.repo, 2, directory).returncode == 0
    assert sorted(item.name for item in directory.glob("shard-*")) == ["shard-2-of-4.json"]


def test_a_report_of_another_plan_size_or_not_a_report_at_all_blocks(sharded: Sharded, tmp_path: Path) -> None:
    other = tmp_path / "half"
    assert run_cli(sharded.repo, "run", "--base", "main", "--shard", "1/2", "--no-verify",
                   "--output-dir", str(other)).returncode == 0
    garbage = tmp_path / "notes.json"
    garbage.write_text('{"verdict": "approve"}')
    result = _merge(sharded.repo, tmp_path / "merged", *sharded.shard_dirs, other, garbage)
    assert result.returncode == 3
    reasons = result.report()["reasons"]
    assert any("shard 1/2" in reason and "2-shard plan" in reason for reason in reasons)
    assert any(str(garbage) in reason and "not a reviewgate shard report" in reason for reason in reasons)
    # The four good shards still count: their findings are published with the blocked verdict.
    assert result.report()["findings"] == sharded.single.report()["findings"]


def test_a_shard_says_which_part_it_reviewed_and_where_its_report_is(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, BASE, CHANGE).path
    result = _shard(repo, 1, tmp_path / "out")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    lines = lines[next(index for index, line in enumerate(lines) if line.startswith("reviewgate: shard")):]
    files = len(plan_shards(freeze(repo, base="main"), TOTAL).paths(ShardSpec(1, TOTAL)))
    assert re.fullmatch(rf"reviewgate: shard 1/{TOTAL} of main\.\.\.HEAD \(merge-base \w{{12}}, head \w{{12}}\): "
                        rf"{files} of \d+ file\(s\) here, and the whole-change work", lines[0]), lines
    assert any(line.startswith("  reviewer builtin: ok (") for line in lines), lines
    assert lines[-1] == (f"shard report: {tmp_path / 'out' / f'shard-1-of-{TOTAL}.json'}; `reviewgate merge` "
                         f"combines the {TOTAL} shard reports into the verdict; this shard publishes nothing")
