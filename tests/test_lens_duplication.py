"""The DRY lens: renamed copies named with the existing code's place, in-branch repetition once,
forks at file level, stable ids, and the batch reader it indexes with."""

from __future__ import annotations

from pathlib import Path
from typing import cast

from reviewgate.findings import Severity
from reviewgate.freeze.git import TreeReader
from reviewgate.gate import blocks
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.lenses.duplication.added_code import Query
from reviewgate.reviewers.builtin.lenses.duplication.duplicates import Candidate, one_per_pair
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import consistent_renaming
from reviewgate.reviewers.builtin.lenses.duplication.rules import Side, definition_name, rewrapped_lines
from reviewgate.reviewers.builtin.lenses.duplication.runs import Region
from testing.changes import DRY_COPY as COPY
from testing.changes import DRY_EXISTING as EXISTING
from testing.changes import DRY_JOBS as JOBS
from testing.cli import run_cli
from testing.lenses import review_change
from testing.repo import make_repo

TEST = "def test_run():\n    assert True\n"


def test_gate_names_the_existing_function_and_exits_1_where_the_config_asks_to_block(tmp_path: Path) -> None:
    repo = make_repo(
        tmp_path,
        {"app/settings.py": EXISTING, "app/jobs.py": JOBS, "tests/test_jobs.py": TEST,
         ".reviewgate.toml": "[lenses]\nblock_on_duplicates = true\n"},
        {"app/jobs.py": JOBS + COPY, "tests/test_jobs.py": TEST + "\n\ndef test_more():\n    pass\n"},
    )
    result = run_cli(repo.path, "run", "--base", "main")
    assert result.returncode == 1, result.stdout + result.stderr
    findings = [item for item in result.report()["findings"] if item["rule"] == "reuse/duplicate-code"]
    assert len(findings) == 1
    finding = findings[0]
    assert (finding["path"], finding["line"], finding["class"], finding["severity"]) == (
        "app/jobs.py",
        8,
        "systematic",
        "major",
    )
    assert "use `load_settings` at app/settings.py:4" in finding["title"]


def test_id_is_stable_when_lines_shift(tmp_path: Path) -> None:
    base = {"app/settings.py": EXISTING, "app/jobs.py": JOBS}
    first = review_change(tmp_path / "one", base, {"app/jobs.py": JOBS + COPY})
    shifted = review_change(tmp_path / "two", base, {"app/jobs.py": "# jobs\n\n" + JOBS + COPY})
    one = next(item for item in first if item.rule == "reuse/duplicate-code")
    two = next(item for item in shifted if item.rule == "reuse/duplicate-code")
    assert (one.line, two.line) == (8, 10)
    assert one.id == two.id


def test_same_shape_without_shared_names_is_not_a_copy(tmp_path: Path) -> None:
    unrelated = """

def tally_votes(ballots, options):
    with open(ballots, encoding="utf-8") as source:
        rows = csv_reader(source)
    counted = set(options)
    for choice, weight in rows.pairs():
        if choice in counted and weight is not None:
            counted[choice] = weight
    return counted
"""
    findings = review_change(
        tmp_path, {"app/settings.py": EXISTING, "app/jobs.py": JOBS}, {"app/jobs.py": JOBS + unrelated}
    )
    assert [item for item in findings if item.rule.startswith("reuse/")] == []


def test_code_the_change_moves_is_not_a_duplicate(tmp_path: Path) -> None:
    findings = review_change(
        tmp_path,
        {"app/settings.py": EXISTING, "app/jobs.py": JOBS},
        {"app/settings.py": "import json\n", "app/jobs.py": JOBS + COPY},
    )
    assert [item for item in findings if item.rule.startswith("reuse/")] == []


def test_copied_file_is_a_fork_at_file_level(tmp_path: Path) -> None:
    findings = review_change(tmp_path, {"lib/settings.py": EXISTING}, {"billing/settings.py": EXISTING})
    forks = [item for item in findings if item.rule == "reuse/near-copy-file"]
    assert [(item.path, item.line) for item in forks] == [("billing/settings.py", None)]
    assert "lib/settings.py" in forks[0].title


def test_read_many_matches_read_bytes_and_skips_large_files(tmp_path: Path) -> None:
    files = {"a.py": "print(1)\n", "dir/b.txt": "x" * 50, "big.bin": b"\0" * 4096, "d/\u00e9.py": "é = 1\n"}
    repo = make_repo(tmp_path, files)
    reader = TreeReader(repo.path, repo.head_sha)
    batch = reader.read_many(list(files), max_bytes=1000)
    assert set(batch) == {"a.py", "dir/b.txt", "d/\u00e9.py"}
    for path, data in batch.items():
        assert data == reader.read_bytes(path)


def test_same_shape_and_names_without_one_renaming_is_not_a_copy(tmp_path: Path) -> None:
    shuffled = """

def load_defaults(path, defaults):
    with open(defaults, encoding="utf-8") as handle:
        merged = json.load(path)
    data = dict(handle)
    for value, key in merged.items():
        if data in key and merged is not None:
            value[data] = key
    return path
"""
    findings = review_change(
        tmp_path, {"app/settings.py": EXISTING, "app/jobs.py": JOBS}, {"app/jobs.py": JOBS + shuffled}
    )
    assert [item for item in findings if item.rule.startswith("reuse/")] == []


def test_consistent_renaming_score() -> None:
    assert consistent_renaming(["a", "b", "a"], ["x", "y", "x"]) == 1.0
    assert consistent_renaming(["a", "b", "a"], ["x", "y", "y"]) == 2 / 3
    assert consistent_renaming(["a", "b"], ["x", "x"]) == 0.5


def test_definition_names_follow_the_files_language() -> None:
    python = ["    for func in hooks:", "        func(event)", "    return event"]
    assert definition_name(python, 1, 3, Language.PYTHON) is None
    assert definition_name(["class Loader:", "    pass"], 1, 1, Language.PYTHON) == "Loader"
    assert definition_name(["func (s *Server) Start(ctx context.Context) error {"], 1, 1, Language.GO) == "Start"
    assert definition_name(["def helper(x):"], 1, 1, Language.GO) is None
    assert definition_name(["export const parseArgs = (argv: string[]) => {"], 1, 1, Language.TYPESCRIPT) == "parseArgs"
    assert definition_name(["  if (ready) {", "  async render(view) {"], 1, 1, Language.JAVASCRIPT) == "render"
    assert definition_name(["    public static int count(List<String> items) {"], 1, 1, Language.JAVA) == "count"


def test_a_finding_quotes_the_existing_code_with_both_places_and_its_length(tmp_path: Path) -> None:
    findings = review_change(tmp_path, {"app/settings.py": EXISTING, "app/jobs.py": JOBS}, {"app/jobs.py": JOBS + COPY})
    [finding] = [item for item in findings if item.rule == "reuse/duplicate-code"]
    assert finding.severity is Severity.MAJOR
    assert "Lines 8-15 of app/jobs.py (8 lines) repeat `load_settings` at app/settings.py:4-11" in finding.body
    assert "    for key, value in data.items():\n" in finding.body  # the existing side, quoted


def test_a_major_duplicate_is_advisory_unless_the_config_asks_it_to_block(tmp_path: Path) -> None:
    base, branch = {"app/settings.py": EXISTING, "app/jobs.py": JOBS}, {"app/jobs.py": JOBS + COPY}
    [advisory] = [item for item in review_change(tmp_path / "default", base, branch)
                  if item.rule == "reuse/duplicate-code"]
    assert advisory.severity is Severity.MAJOR and not blocks(advisory)
    assert "block_on_duplicates = true" in advisory.body
    asked = review_change(tmp_path / "asked", base, branch, sections={"lenses": {"block_on_duplicates": True}})
    [blocking] = [item for item in asked if item.rule == "reuse/duplicate-code"]
    assert blocking.severity is Severity.MAJOR and blocks(blocking)


def test_a_near_copy_file_is_advisory_unless_the_config_asks_it_to_block(tmp_path: Path) -> None:
    base, branch = {"lib/settings.py": EXISTING}, {"billing/settings.py": EXISTING}
    [advisory] = [item for item in review_change(tmp_path / "default", base, branch)
                  if item.rule == "reuse/near-copy-file"]
    assert advisory.severity is Severity.MAJOR and not blocks(advisory)
    assert "block_on_duplicates = true" in advisory.body
    asked = review_change(tmp_path / "asked", base, branch, sections={"lenses": {"block_on_duplicates": True}})
    [blocking] = [item for item in asked if item.rule == "reuse/near-copy-file"]
    assert blocking.severity is Severity.MAJOR and blocks(blocking)


def test_a_short_run_of_mostly_boilerplate_reports_at_minor(tmp_path: Path) -> None:
    existing = """def close_all(items, log):
    count = 0
    for item in items:
        try:
            item.close()
        except OSError:
            log.warning(item)
        else:
            count += 1
    return count
"""
    copy = """

def stop_all(workers, journal):
    stopped = 0
    for worker in workers:
        try:
            worker.close()
        except OSError:
            journal.warning(worker)
        else:
            stopped += 1
    return stopped
"""
    findings = review_change(tmp_path, {"app/io.py": existing, "app/jobs.py": JOBS}, {"app/jobs.py": JOBS + copy})
    [finding] = [item for item in findings if item.rule == "reuse/duplicate-code"]
    assert finding.severity is Severity.MINOR
    assert "Reported at minor" in finding.body


def test_a_rewrapped_hunk_is_not_added_code() -> None:
    from reviewgate.freeze.diff_files import parse_diff

    patch = (
        b"diff --git a/app/x.py b/app/x.py\n--- a/app/x.py\n+++ b/app/x.py\n@@ -1,4 +1,2 @@\n"
        b" def f(a):\n-    return call(\n-        a, 'b',\n-    )\n+    return call(a, \"b\")\n"
        b"@@ -9,2 +7,2 @@\n x = 1\n-y = 2\n+y = 3\n"
    )
    [change] = parse_diff(patch)
    assert rewrapped_lines(change) == {2}


def test_a_copy_broken_by_one_small_edit_is_one_finding(tmp_path: Path) -> None:
    existing = '''class Command:
    def format_options(self, ctx, formatter):
        """Writes all the options into the formatter if they exist."""
        opts = []
        formatter.indent(ctx.depth)
        self.log.debug(ctx.info_name, formatter.width)
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and not isinstance(param, Argument):
                opts.append(record)
        if opts:
            with formatter.section("Options"):
                formatter.write_dl(opts)
            formatter.flush_section(ctx, opts)
        formatter.dedent(ctx.depth)
        self.log.debug(ctx.info_name, len(opts))
'''
    added = '''
    def format_arguments(self, ctx, formatter):
        """Writes the arguments that have a help record into the formatter."""
        args = []
        formatter.indent(ctx.depth)
        self.log.debug(ctx.info_name, formatter.width)
        for param in self.get_params(ctx):
            record = param.get_help_record(ctx)
            if record is not None and isinstance(param, Argument):
                args.append(record)
        if args:
            with formatter.section("Arguments"):
                formatter.write_dl(args)
            formatter.flush_section(ctx, args)
        formatter.dedent(ctx.depth)
        self.log.debug(ctx.info_name, len(args))
'''
    findings = review_change(tmp_path, {"app/core.py": existing}, {"app/core.py": existing + added})
    reuse = [item for item in findings if item.rule == "reuse/duplicate-code"]
    assert [(item.line, item.end_line) for item in reuse] == [(18, 32)]
    assert "`format_options` at app/core.py:2" in reuse[0].title


def test_a_pair_found_from_both_sides_is_kept_once_at_its_later_place() -> None:
    def candidate(mine: Side, theirs: Side) -> Candidate:
        return Candidate(cast(Query, None), cast(Region, None), mine, theirs, in_branch=True)

    earlier = candidate(Side("a.py", 10, 20), Side("b.py", 30, 40))
    later = candidate(Side("b.py", 31, 39), Side("a.py", 11, 19))  # the same pair, from b.py
    one_way = candidate(Side("a.py", 50, 60), Side("c.py", 1, 10))
    elsewhere = candidate(Side("c.py", 100, 110), Side("a.py", 50, 60))  # its other side overlaps none of one_way's
    assert one_per_pair([earlier, later, one_way, elsewhere]) == [later, one_way, elsewhere]


def test_a_copy_the_change_adds_twice_is_reported_at_its_later_place(tmp_path: Path) -> None:
    def reported(root: Path, branch: dict[str, str]) -> list[tuple[str, int, str]]:
        found = review_change(root, {"app/jobs.py": JOBS}, branch)
        return sorted((item.path, item.line, item.title) for item in found if item.rule == "reuse/duplicate-code")

    # In other files: at the later path, never at the earliest (app/alpha.py).
    assert reported(tmp_path / "files", {"app/jobs.py": JOBS + COPY, "app/alpha.py": COPY,
                                         "app/zeta.py": "import os\n" + COPY}) == [
        ("app/jobs.py", 8, "Repeats code this change adds at app/alpha.py:3"),
        ("app/zeta.py", 4, "Repeats code this change adds at app/alpha.py:3"),
    ]
    # In one file: at the later line.
    assert reported(tmp_path / "one-file", {"app/twice.py": COPY + "\n" + COPY.replace("read_job", "read_task")}) == [
        ("app/twice.py", 14, "Repeats code this change adds at app/twice.py:3"),
    ]
