"""Document bundles: documents frozen in a deterministic order, reviewed like a diff."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.errors import UsageError
from reviewgate.freeze.bundle import freeze_bundle
from reviewgate.freeze.freeze import reader_for
from reviewgate.freeze.git import SnapshotReader
from testing.cli import run_cli
from testing.repo import make_repo


def write_documents(root: Path) -> None:
    (root / "docs").mkdir(parents=True, exist_ok=True)
    (root / "docs" / "plan.md").write_text("# Plan\n\nShip it.\r\n", encoding="utf-8")
    (root / "docs" / "spec.md").write_text("# Spec\n\nMust work.\n", encoding="utf-8")


def test_bundle_order_and_hash_do_not_depend_on_argument_order(tmp_path: Path) -> None:
    write_documents(tmp_path)
    plan, spec = tmp_path / "docs/plan.md", tmp_path / "docs/spec.md"
    first = freeze_bundle(tmp_path, [spec, plan, spec])
    second = freeze_bundle(tmp_path, [plan, spec])
    assert first.patch_sha256 == second.patch_sha256
    assert [item.path for item in first.documents] == ["docs/plan.md", "docs/spec.md"]
    assert (first.mode, first.head_sha, first.merge_base) == ("bundle", "", "")
    assert first.files[0].added_lines() == {1: "# Plan", 2: "", 3: "Ship it.\r"}
    spec.write_text("# Spec\n\nMust work, changed.\n", encoding="utf-8")
    assert freeze_bundle(tmp_path, [plan, spec]).patch_sha256 != first.patch_sha256


def test_reviewers_read_the_frozen_bytes_not_the_disk(tmp_path: Path) -> None:
    write_documents(tmp_path)
    target = freeze_bundle(tmp_path, [tmp_path / "docs/plan.md"])
    (tmp_path / "docs/plan.md").write_text("changed after freezing\n", encoding="utf-8")
    reader = reader_for(target)
    assert isinstance(reader, SnapshotReader)
    assert reader.read_text("docs/plan.md") == "# Plan\n\nShip it.\r\n"
    assert reader.list_files() == ["docs/plan.md"]
    assert "snapshot" not in repr(target) and "Ship it" not in str(target.identity())


def test_run_with_a_bundle_outside_any_repository(tmp_path: Path) -> None:
    write_documents(tmp_path)
    (tmp_path / "docs" / "image.png").write_bytes(b"\x89PNG\x00\x00")
    result = run_cli(
        tmp_path,
        "run",
        "--bundle",
        "docs/spec.md",
        "docs/plan.md",
        "--bundle",
        "docs/image.png",
        "--output-dir",
        "out",
    )
    assert result.returncode == 0, result.stderr
    target = result.report()["target"]
    assert (
        target["mode"] == "bundle"
        and target["head_sha"] == ""
        and target["bundle_sha256"] == target["patch_sha256"]
    )
    assert [item["path"] for item in target["documents"]] == [
        "docs/image.png",
        "docs/plan.md",
        "docs/spec.md",
    ]
    assert [item["path"] for item in target["files"]] == ["docs/plan.md", "docs/spec.md"]
    assert target["excluded"] == [{"path": "docs/image.png", "reason": "binary file: listed, not diffed"}]
    assert result.report()["verdict"] == "approve"
    assert "reviewgate: bundle of 2 document(s), bundle hash " in result.stdout
    summary = (result.output_dir / "summary.md").read_text(encoding="utf-8")
    assert f"Reviewed a bundle of 2 document(s), bundle hash `{target['patch_sha256'][:16]}`." in summary


def test_bundle_findings_use_the_same_reviewers_and_exit_codes(tmp_path: Path) -> None:
    built = make_repo(tmp_path, {"README.md": "x\n"})
    (built.path / "repro").mkdir()
    (built.path / "repro" / "steps.md").write_text("1. run it\n", encoding="utf-8")
    result = run_cli(built.path, "run", "--bundle", "repro/steps.md", "--output-dir", "out")
    assert result.returncode == 1, result.stderr
    assert [item["category"] for item in result.report()["findings"]] == ["reproduction"]


@pytest.mark.parametrize(("name", "message"), [("missing.md", "no such file"), ("docs", "expected a file")])
def test_bad_bundle_paths_are_usage_errors(tmp_path: Path, name: str, message: str) -> None:
    write_documents(tmp_path)
    result = run_cli(tmp_path, "freeze", "--bundle", name)
    assert result.returncode == 2
    assert f"--bundle: {name}: {message}" in result.stderr and "Traceback" not in result.stderr
    with pytest.raises(UsageError):
        freeze_bundle(tmp_path, [tmp_path / name])


def test_bundle_refuses_flags_that_choose_a_diff(tmp_path: Path) -> None:
    write_documents(tmp_path)
    result = run_cli(tmp_path, "freeze", "--bundle", "docs/plan.md", "--base", "main", "--include-dirty")
    assert result.returncode == 2
    assert "--bundle: reviews documents, not a diff; it cannot be combined with --base, --include-dirty" in (
        result.stderr
    )
