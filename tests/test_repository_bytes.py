"""The diff is the bytes: what the branch brings around its code (attributes, a byte-order mark,
odd file names) and what sits in the repository's own config (filters, textconv, hooks) never
change what is reviewed or run anything. Real repositories, the real `reviewgate run`."""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ElementTree
from collections.abc import Iterator
from pathlib import Path

import pytest

from reviewgate.freeze.bundle import document_change
from reviewgate.freeze.diff_files import parse_diff
from reviewgate.reviewers.model.context_collector import symbol_sites
from reviewgate.reviewers.model.snapshot import checkout_fingerprint, export_snapshot, remove_snapshot
from testing.agent_clis import shared_with_the_agent
from testing.cli import CliResult, run_cli
from testing.model_repo import calc_repo, review_request
from testing.model_server import review_document
from testing.repo import BranchRepo, git, make_repo, write_base_config
from testing.verify_app import python_for_the_verify

# A shell command built from a request's value and an eval of it (two blocking lenses), and a
# swallowed exception (advisory).
RISKY = (
    "import os\n\n\ndef run(request):\n    name = request.args[\"name\"]\n    try:\n        os.system(f\"echo {name}\")\n"
    "    except Exception:\n        pass\n    return eval(name)\n"
)
TOKEN_LINE = 'TOKEN = "ghp_' + "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8" + '"\n'
EXPECTED = {
    ("security/shell-injection", 7),
    ("correctness/swallowed-exception", 8),
    ("security/eval", 10),
    ("security/committed-secret", 11),
}
MARKER_NAMES = ("clean-ran", "smudge-ran", "textconv-ran", "command-ran", "external-ran", "hook-ran",
                "fsmonitor-ran", "pager-ran")


def _findings(result: CliResult, path: str = "app.py") -> set[tuple[str, int]]:
    return {(item["rule"], item["line"]) for item in result.report()["findings"] if item["path"] == path}


def _branch(tmp_path: Path, files: dict[str, str | bytes]) -> BranchRepo:
    return make_repo(tmp_path, {"README.md": "readme\n"}, files)


@pytest.mark.parametrize(
    "attributes",
    ["*.py -diff\n", "app.py binary\n", "* -text\n", "*.py eol=crlf\n", "*.py text eol=crlf\n",
     "[attr]hide -diff -text\n*.py hide\n"],
)
def test_attributes_the_branch_brings_change_nothing_reviewed(tmp_path: Path, attributes: str) -> None:
    """`-diff` or `binary` made git call app.py binary: 'listed, not diffed', and the branch's
    swallowed exception and token were approved. Now the file is text because its bytes are."""
    repo = _branch(tmp_path, {".gitattributes": attributes, "app.py": RISKY + TOKEN_LINE})
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stderr
    assert EXPECTED <= _findings(result)
    files = {item["path"]: item for item in result.report()["target"]["files"]}
    assert files["app.py"]["binary"] is False


def test_a_file_with_nul_bytes_is_still_binary_and_listed(tmp_path: Path) -> None:
    """Binary is decided from the bytes: a NUL in the first 8000 bytes, as git's own rule."""
    repo = _branch(tmp_path, {".gitattributes": "*.bin diff\n", "data.bin": b"\x00\x01\x02 image\n" * 10})
    result = run_cli(repo.path, "run", "--base", "main")
    excluded = {item["path"]: item["reason"] for item in result.report()["target"]["excluded"]}
    assert excluded["data.bin"] == "binary file: listed, not diffed"


def _plant_drivers(repo: Path, markers: Path) -> None:
    """A repository config whose every code-running setting writes a marker file when git runs
    it, and the attributes that would select the filter and the diff driver for every file."""
    markers.mkdir()
    hooks = repo / ".git" / "planted-hooks"
    hooks.mkdir()
    for hook in ("post-index-change", "reference-transaction", "pre-auto-gc", "post-checkout"):
        (hooks / hook).write_text(f"#!/bin/sh\ntouch {markers}/hook-ran\n", encoding="utf-8")
        (hooks / hook).chmod(0o755)
    (repo / ".git" / "info").mkdir(exist_ok=True)
    (repo / ".git" / "info" / "attributes").write_text("", encoding="utf-8")
    with (repo / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write(
            f"""[filter "evil"]
\tclean = "sh -c 'touch {markers}/clean-ran; cat'"
\tsmudge = "sh -c 'touch {markers}/smudge-ran; cat'"
[diff "evil"]
\ttextconv = "sh -c 'touch {markers}/textconv-ran; cat \\"$0\\"'"
\tcommand = "sh -c 'touch {markers}/command-ran'"
[diff]
\texternal = "sh -c 'touch {markers}/external-ran'"
[core]
\thooksPath = {hooks}
\tfsmonitor = "sh -c 'touch {markers}/fsmonitor-ran'"
\tpager = "sh -c 'touch {markers}/pager-ran; cat'"
"""
        )


@pytest.fixture
def shared() -> Iterator[Path]:
    """Where the agent's script lives and writes: as root it runs as another uid."""
    with shared_with_the_agent() as directory:
        yield directory


def _agent_config(repo: BranchRepo, shared: Path, body: str) -> None:
    """The builtin lenses and an agent (a Python script) standing in for `claude -p`."""
    agent = shared / "agent.py"
    answer = json.dumps(review_document())
    agent.write_text(f"import os, sys\nsys.stdin.read()\n{body}\nprint({answer!r})\n", encoding="utf-8")
    command = json.dumps([python_for_the_verify(), str(agent)])
    write_base_config(
        repo.path,
        f'[review]\nreviewers = ["builtin", "agent"]\n\n[reviewer.agent]\nprovider = "command"\n'
        f"command = {command}\ntimeout = 20\nverify_findings = false\n\n[cache]\nenabled = false\n",
    )


def test_filters_drivers_and_hooks_of_the_repository_config_never_run(tmp_path: Path, shared: Path) -> None:
    """With an agent reviewer, `git archive` ran the smudge filter and the checkout check's
    `git diff HEAD` the clean filter. No git call of the gate runs any of them now."""
    repo = _branch(tmp_path, {".gitattributes": "* filter=evil diff=evil\n", "app.py": RISKY + TOKEN_LINE})
    _agent_config(repo, shared, "")
    markers = tmp_path / "markers"
    _plant_drivers(repo.path, markers)
    result = run_cli(repo.path, "run", "--base", "main")
    assert sorted(os.listdir(markers)) == []
    assert result.returncode == 1, result.stderr
    assert EXPECTED <= _findings(result)
    assert [item["status"] for item in result.report()["reviewers"]] == ["ok", "ok"], result.report()["reasons"]
    # The planted drivers are live: git's own commands run them.
    git(repo.path, "archive", "HEAD")
    git(repo.path, "diff", "HEAD~", "HEAD")
    git(repo.path, "diff", "--no-ext-diff", "HEAD~", "HEAD")
    assert {"smudge-ran", "command-ran", "textconv-ran"} <= set(os.listdir(markers))


def test_an_agent_planting_a_filter_blocks_and_the_filter_never_runs(tmp_path: Path, shared: Path) -> None:
    """The agent writes a clean filter into .git/config and touches a tracked file so git would
    re-read it: the gate's check of the checkout ran the filter and saw no change. Now the
    changed config is a reviewer mutation, found without running git on the work tree."""
    markers = tmp_path / "markers"
    markers.mkdir()
    repo = _branch(tmp_path, {".gitattributes": "* filter=evil\n", "app.py": "VALUE = 1\n"})
    config = repo.path / ".git" / "config"
    planted = f"[filter \"evil\"]\n\tclean = \"sh -c 'touch {markers}/clean-ran; cat'\"\n"
    body = (
        f"open({str(config)!r}, 'a').write({planted!r})\n"
        f"os.utime({str(repo.path / 'app.py')!r})"
    )
    _agent_config(repo, shared, body)
    result = run_cli(repo.path, "run", "--base", "main")
    assert os.listdir(markers) == []
    assert result.returncode == 3, result.stderr
    # As root the agent is another uid, and the checkout's .git is out of its reach.
    assert ("PermissionError" if os.geteuid() == 0 else "reviewer mutation") in result.report()["reasons"][0]


def test_export_ignore_does_not_hide_a_file_from_the_agent(tmp_path: Path, shared: Path) -> None:
    """The agent's snapshot was `git archive`: the branch's `export-ignore` took app.py out of
    what the agent could open, and `export-subst` rewrote it."""
    repo = _branch(tmp_path, {".gitattributes": "app.py export-ignore\nnote.txt export-subst\n",
                              "app.py": "VALUE = 1\n", "note.txt": "$Format:%H$\n"})
    seen = shared / "out" / "seen.json"
    _agent_config(repo, shared, f"import json\njson.dump([os.path.exists('app.py'), open('note.txt').read()], "
                                  f"open({str(seen)!r}, 'w'))")
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 0, result.stderr
    assert json.loads(seen.read_text(encoding="utf-8")) == [True, "$Format:%H$\n"]


def test_a_byte_order_mark_hides_nothing(tmp_path: Path) -> None:
    """A UTF-8 byte-order mark before the first line made `ast` refuse the file: every lens
    found nothing. It blocks exactly as the same file without the mark."""
    plain = run_cli(_branch(tmp_path / "plain", {"app.py": RISKY + TOKEN_LINE}).path, "run", "--base", "main")
    marked_repo = _branch(tmp_path / "marked", {"app.py": b"\xef\xbb\xbf" + (RISKY + TOKEN_LINE).encode()})
    marked = run_cli(marked_repo.path, "run", "--base", "main")
    assert marked.returncode == plain.returncode == 1, marked.stderr
    assert EXPECTED <= _findings(marked)
    assert _findings(marked) == _findings(plain)


def test_a_byte_order_mark_on_a_first_line_that_blocks(tmp_path: Path) -> None:
    """The finding is on line 1 itself, behind the mark: still found, at line 1."""
    repo = _branch(tmp_path, {"app.py": b"\xef\xbb\xbfresult = eval(input())\n"})
    result = run_cli(repo.path, "run", "--base", "main")
    assert ("security/eval", 1) in _findings(result)


def test_utf16_text_is_listed_as_not_reviewed(tmp_path: Path) -> None:
    """UTF-16 text without a NUL byte (git calls it text) was read as UTF-8 garbage and approved
    silently; with NUL bytes it is binary. Both are listed as not reviewed."""
    no_nul = b"\xff\xfe" + "漢字".encode("utf-16-le") * 50
    with_nul = b"\xff\xfe" + "x = 1\n".encode("utf-16-le")
    repo = _branch(tmp_path, {"wide.py": no_nul, "ascii.py": with_nul})
    result = run_cli(repo.path, "run", "--base", "main")
    excluded = {item["path"]: item["reason"] for item in result.report()["target"]["excluded"]}
    assert excluded == {"wide.py": "UTF-16 text: listed, not reviewed (the reviewers read UTF-8)",
                        "ascii.py": "binary file: listed, not diffed"}


ODD_NAMES = (b"caf\xe9.py", b"new\nline.py", b"tab\tand\"quote.py", b"bell\x07\x1b[31m.py", b"back\\slash.py")


def test_odd_file_names_complete_the_run_with_valid_outputs(tmp_path: Path) -> None:
    """A name that is not UTF-8 crashed the run with no outputs at all (any branch could do it).
    Every output is written, parses, and names the files escaped."""
    repo = make_repo(tmp_path, {"README.md": "readme\n"})
    for name in ODD_NAMES:
        Path(os.fsdecode(os.path.join(os.fsencode(repo.path), name))).write_text(RISKY, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "odd names")
    summary = tmp_path / "step-summary.md"
    summary.write_text("", encoding="utf-8")
    result = run_cli(repo.path, "run", "--base", "main",
                     env={"GITHUB_ACTIONS": "true", "GITHUB_STEP_SUMMARY": str(summary)})
    assert result.returncode == 1, result.stderr
    report = result.report()
    paths = {item["path"] for item in report["target"]["files"]}
    assert paths == {"caf\ufffd.py", "new\nline.py", 'tab\tand"quote.py', "bell\x07\x1b[31m.py", "back\\slash.py"}
    for path in paths:  # every file reviewed: each one's eval is found
        assert any(item["path"] == path and item["rule"] == "security/eval" for item in report["findings"])
    output = result.output_dir
    sarif = json.loads((output / "review.sarif").read_text(encoding="utf-8"))
    uris = {location["physicalLocation"]["artifactLocation"]["uri"]
            for item in sarif["runs"][0]["results"] for location in item["locations"]}
    assert uris == {"caf%E9.py", "new%0Aline.py", "tab%09and%22quote.py", "bell%07%1B%5B31m.py", "back%5Cslash.py"}
    json.loads((output / "codequality.json").read_text(encoding="utf-8"))
    ElementTree.parse(output / "junit.xml")
    summary_text = (output / "summary.md").read_text(encoding="utf-8") + summary.read_text(encoding="utf-8")
    assert "caf\ufffd.py" in summary_text and "\x1b" not in summary_text and "\x07" not in summary_text
    annotations = [line for line in result.stdout.splitlines() if line.startswith("::error")]
    assert annotations and all("\x1b" not in line for line in annotations)
    assert not any(line.startswith("line.py") for line in result.stdout.splitlines())  # no name breaks a line
    assert not any(control in result.stdout + result.stderr for control in ("\x1b", "\x07", "\udce9"))


def test_the_agents_snapshot_holds_the_blobs_bytes(tmp_path: Path) -> None:
    """Written from the blobs: no eol conversion (`git archive` wrote CRLF for `eol=crlf`), links
    kept as links, names that are not UTF-8 kept, withheld files still removed."""
    repo = _branch(tmp_path, {".gitattributes": "* text eol=crlf\n", "app.py": "a = 1\nb = 2\n",
                              "docs/specs/plan.md": "SPEC\n"})
    os.symlink("app.py", repo.path / "link.py")
    Path(os.fsdecode(os.fsencode(repo.path) + b"/caf\xe9.txt")).write_bytes(b"bytes\n")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "more")
    destination = tmp_path / "snapshot"
    removed = export_snapshot(repo.path, git(repo.path, "rev-parse", "HEAD"), destination, {"app.py"})
    try:
        assert (destination / "app.py").read_bytes() == b"a = 1\nb = 2\n"
        assert os.readlink(destination / "link.py") == "app.py"
        assert Path(os.fsdecode(os.fsencode(destination) + b"/caf\xe9.txt")).read_bytes() == b"bytes\n"
        assert removed == ["docs/specs/plan.md"] and not (destination / "docs/specs/plan.md").exists()
    finally:
        remove_snapshot(destination)


def test_the_checkout_check_sees_config_hooks_and_touched_files(tmp_path: Path) -> None:
    repo = _branch(tmp_path, {"app.py": "VALUE = 1\n"})
    before = checkout_fingerprint(repo.path)
    assert checkout_fingerprint(repo.path) == before
    with (repo.path / ".git" / "config").open("a", encoding="utf-8") as config:
        config.write("[core]\n\tfsmonitor = true\n")
    after_config = checkout_fingerprint(repo.path)
    (repo.path / ".git" / "hooks" / "post-index-change").write_text("#!/bin/sh\n", encoding="utf-8")
    after_hook = checkout_fingerprint(repo.path)
    os.utime(repo.path / "app.py", ns=(1, 1))
    after_touch = checkout_fingerprint(repo.path)
    assert len({before, after_config, after_hook, after_touch}) == 4


def test_a_byte_order_mark_is_dropped_from_line_one_only() -> None:
    """In the diff and in a bundle's document: line 1 loses the mark, line numbers stay."""
    patch = (b"diff --git a/app.py b/app.py\nnew file mode 100644\nindex 0000000..1111111\n--- /dev/null\n"
             b"+++ b/app.py\n@@ -0,0 +1,2 @@\n+\xef\xbb\xbfimport os\n+\xef\xbb\xbfx = 1\n")
    change = parse_diff(patch)[0]
    assert change.added_lines() == {1: "import os", 2: "\ufeffx = 1"}
    assert change.opening_text == "import os\n\ufeffx = 1"
    assert document_change("notes.md", b"\xef\xbb\xbf# Title\nbody\n").added_lines() == {1: "# Title", 2: "body"}


@pytest.mark.parametrize("planted", ["info/attributes", "config"])
def test_the_repository_git_directory_cannot_make_text_binary(tmp_path: Path, planted: str) -> None:
    """A step before the gate that ran the branch's code can write the git directory: `*.py
    -diff` in info/attributes (which every git call reads), or core.bigFileThreshold=1 in the
    config (every file binary to git's diff). Text is still text; real binary files stay binary."""
    repo = _branch(tmp_path, {"app.py": RISKY + TOKEN_LINE, "data.bin": b"\x00binary\n"})
    if planted == "info/attributes":
        (repo.path / ".git" / "info").mkdir(exist_ok=True)
        (repo.path / ".git" / "info" / "attributes").write_text("* -diff\n", encoding="utf-8")
    else:
        git(repo.path, "config", "core.bigFileThreshold", "1")
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stderr
    assert EXPECTED <= _findings(result)
    excluded = {item["path"]: item["reason"] for item in result.report()["target"]["excluded"]}
    assert excluded == {"data.bin": "binary file: listed, not diffed"}


def test_the_model_reviewers_context_reads_files_the_branch_calls_binary(tmp_path: Path) -> None:
    """The context of a model review (where a touched name is used) is a `git grep -I` of the
    head tree: with the branch's `*.py -diff` every Python file was binary to it, and skipped."""
    repo = calc_repo(tmp_path, extra_branch={".gitattributes": "*.py -diff\n"})
    sites = symbol_sites(review_request(repo.path), "add")
    assert ("app/calc.py", 1, "def add(a, b):") in sites


def test_a_sharded_review_of_a_name_that_is_not_utf8_merges(tmp_path: Path) -> None:
    """A shard report wrote the name with U+FFFD: the merge found 'another plan' and blocked."""
    repo = make_repo(tmp_path, {"README.md": "readme\n"})
    for name in (b"caf\xe9.py", b"plain.py", b"other.py"):
        Path(os.fsdecode(os.fsencode(repo.path) + b"/" + name)).write_text(RISKY, encoding="utf-8")
    git(repo.path, "add", "-A")
    git(repo.path, "commit", "-q", "-m", "names")
    shards = [tmp_path / "shard-1", tmp_path / "shard-2"]
    for index, output in enumerate(shards, 1):
        shard = run_cli(repo.path, "run", "--base", "main", "--no-verify", "--shard", f"{index}/2",
                        "--output-dir", str(output))
        assert shard.returncode == 0, shard.stderr
    merged = run_cli(repo.path, "merge", *map(str, shards), "--base", "main", "--output-dir", "merged")
    assert merged.returncode == 1, merged.stdout
    report = merged.report()
    assert {item["path"] for item in report["findings"] if item["rule"] == "security/eval"} == {
        "caf\ufffd.py", "plain.py", "other.py"}
