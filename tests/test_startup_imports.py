"""A local run loads only what it uses: the forge clients, the shard modules, the SARIF importer
and the verify runner are imported where they are needed, so a one-line change's run does not
pay their start-up. An eager import added later fails here instead of silently costing time."""

from __future__ import annotations

import dataclasses
import gc
import importlib
import importlib.util
import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from testing.cli import clean_environment, run_cli
from testing.repo import make_repo

# Run in a fresh interpreter: the gate's own `main`, then the modules it had loaded.
_RUN_AND_LIST_MODULES = """
import io, json, sys
from reviewgate.cli import main
code = main(sys.argv[2:], stdout=io.StringIO())
with open(sys.argv[1], "w", encoding="utf-8") as listing:
    json.dump({"exit_code": code, "modules": sorted(sys.modules)}, listing)
"""

# Each only on a forge, with --shard or --import-sarif, with a verify manifest, for a changed
# file in a language other than Python, for added code long enough to repeat other code, or for
# a file that mentions what a bug rule follows (a redirect, a regex, random bytes: the data-flow
# readers). The change below is one short Python line.
DEFERRED = (
    # A model reviewer's stored answers: a builtin-only run opens no chunk store.
    "reviewgate.chunk_store",
    "reviewgate.ci.github",
    "reviewgate.ci.gitlab",
    "reviewgate.forge.conversation",
    "reviewgate.forge.github_api",
    "reviewgate.forge.gitlab_api",
    "reviewgate.forge.http",
    "reviewgate.forge.inline_plan",
    "reviewgate.forge.metadata",
    "reviewgate.forge.session",
    "reviewgate.report.annotated",
    "reviewgate.report.github_annotations",
    "reviewgate.report.github_checks",
    "reviewgate.report.github_step",
    "reviewgate.report.inline_comments",
    "reviewgate.report.pr_comment",
    "reviewgate.reviewers.builtin.languages.tree_shapes",
    "reviewgate.reviewers.builtin.languages.javascript",
    "reviewgate.reviewers.builtin.languages.javascript_source",
    "reviewgate.reviewers.builtin.languages.go",
    "reviewgate.reviewers.builtin.languages.jvm",
    "reviewgate.reviewers.builtin.languages.csharp",
    "reviewgate.reviewers.builtin.languages.rust",
    "reviewgate.reviewers.builtin.languages.ruby",
    "reviewgate.reviewers.builtin.languages.php",
    "reviewgate.reviewers.builtin.lenses.duplication.index",
    "reviewgate.reviewers.builtin.lenses.duplication.search",
    "reviewgate.reviewers.builtin.lenses.duplication.candidate_files",
    "reviewgate.reviewers.builtin.lenses.duplication.added_code",
    "reviewgate.reviewers.builtin.lenses.duplication.tree_places",
    "reviewgate.reviewers.builtin.lenses.duplication.duplicates",
    "reviewgate.reviewers.builtin.lenses.duplication.reordering",
    "reviewgate.reviewers.builtin.lenses.duplication.demotions",
    "reviewgate.reviewers.builtin.lenses.duplication.fingerprints",
    "reviewgate.reviewers.builtin.lenses.duplication.hashes",
    "reviewgate.reviewers.builtin.lenses.duplication.runs",
    "reviewgate.reviewers.builtin.languages.python_flow",
    "reviewgate.reviewers.builtin.languages.text_flow",
    "reviewgate.reviewers.builtin.lenses.discarded_callback_error",
    "reviewgate.reviewers.builtin.lenses.open_redirect.guards",
    "reviewgate.reviewers.builtin.lenses.open_redirect.javascript_go",
    "reviewgate.reviewers.builtin.lenses.open_redirect.python",
    "reviewgate.reviewers.builtin.lenses.open_redirect.server_languages",
    "reviewgate.reviewers.builtin.lenses.wrong_exception_csharp",
    "reviewgate.reviewers.builtin.lenses.wrong_exception_jvm",
    "reviewgate.reviewers.builtin.lenses.wrong_exception_tree",
    "reviewgate.reviewers.sarif_import",
    # The rules' SARIF descriptors, for a SARIF report with results: the change below has none.
    "reviewgate.report.sarif_rules",
    "reviewgate.sharding.plan",
    "reviewgate.sharding.shard_report",
    "reviewgate.sharding.shard_run",
    "reviewgate.verify.environment",
    "reviewgate.verify.manifest",
    "reviewgate.verify.processes",
    "reviewgate.verify.runner",
    # For a block of commented-out lines only (the readability lens): its patterns compile at import.
    "textwrap",
    # For a forge's timestamps and the model reviewers' caches: the run's start is written with time.
    "datetime",
    # The grammars of the languages the change does not touch.
    "tree_sitter_javascript",
    "tree_sitter_typescript",
    "tree_sitter_go",
    "tree_sitter_java",
    "tree_sitter_kotlin",
    "tree_sitter_c_sharp",
    "tree_sitter_rust",
    "tree_sitter_ruby",
    "tree_sitter_php",
)


def loaded_modules(repo: Path, listing: Path, *arguments: str) -> set[str]:
    completed = subprocess.run(
        [sys.executable, "-c", _RUN_AND_LIST_MODULES, str(listing), "run", "--reviewer", "builtin",
         "--base", "main", *arguments],
        cwd=repo, env=clean_environment(), capture_output=True, text=True, timeout=120, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    result = json.loads(listing.read_text(encoding="utf-8"))
    assert result["exit_code"] == 0
    return set(result["modules"])


def test_a_local_run_leaves_the_forge_shard_sarif_and_verify_modules_unloaded(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    loaded = loaded_modules(repo.path, tmp_path / "modules.json")
    assert "reviewgate.reviewers.builtin" in loaded  # the run did review
    assert sorted(loaded.intersection(DEFERRED)) == []


# reviewgate modules a local run of a one-line Python change loads (111 before the start-up
# work): each costs its import, most a dataclass or two at about a millisecond each. One more
# on this path is a deliberate change of this number: 106 with the compiled walk of a Python tree
# (`_walk`, an extension module whose load is a fraction of a millisecond, loaded by the first walk);
# 107 with `progress` (the stages' one call each; it defines no dataclass and imports only threading and time);
# 108 with git found and sealed before the verify (`trusted_programs`); 109 with the builtin reviewer
# telling the product's own code by the repository's tooling (`product_code`); 110 with each rule
# declared in its lens module (`rule`: four named tuples, no dataclass); 115 with five more bug
# rules, each a lens module of its own (a case-sensitive scheme check, an API newer than the
# declared runtime, joined Set-Cookie values, an unpinned JWT algorithm, an error's cause dropped);
# 116 with the decision and publishing in a module of their own (`verdict_stage`), shared with the
# shards' merge; 118 with git's environment and its object names apart from the git wrapper
# (`freeze.git_environment`, `freeze.git_objects`: constants and three functions, no dataclass);
# 119 with the patch split into files apart from the records it makes (`freeze.diff_files`, no
# dataclass); 120 with the command line's grammar apart from the commands (`cli_arguments`, no
# dataclass); 121 with the file writing at the ground, apart from the output directory's handling
# (`file_writing`, no dataclass); 128 with what every builtin lens shares split by what it is, from
# one module into eight (`language_table`, `file_kinds`, `changed_lines`, `python_parsing`,
# `python_walk`, `comments`, `lens_findings`, `given_up_parses`: the same code, no dataclass); 130
# with the behaviour analysis's shape reading and function comparison apart from it (`side_shapes`,
# `function_comparison`: the same code, no dataclass); 131 with the Python insertions' check apart
# from the Python shapes (`python_insertions`: the same code, no dataclass); 134 with the swallowed
# failures' handler comments, shell exit traps and Go results apart from their lens
# (`handler_comments`, `exit_traps`, `go_results`: the same code, no dataclass); 135 with what a
# path alone says of a file apart from product_code, so the secrets lens can ask it (`path_kinds`);
# 142 with the security lens's rules each beside its checks, one module per family, and what they
# share apart (the same code, no dataclass):
# - `security.python_calls`: a Python call's dotted name and keywords, formatted strings, a name's assignment
# - `security.line_rules`: the C-like languages' line rule record and a template literal read to its end
# - `security.shell_injection`: `security/shell-injection`'s declaration and checks
# - `security.sql_injection`: `security/sql-injection`'s declaration and checks
# - `security.code_evaluation`: `security/eval`'s declaration and checks
# - `security.unsafe_loading`: `security/unsafe-yaml` and `security/unsafe-deserialization`
# - `security.tls_verification`: `security/tls-verification-off`'s declaration and checks
# 143 with the open-redirect lens a package (`open_redirect`, its `__init__`), whose readers per
# family of languages are imported where a file mentions a redirect (DEFERRED above)
# 144 with a bug rule for a value passed as a printf-style format (`format_string`, no dataclass).
# 145 with what a Gradle build declares as build logic or test support (`gradle_build`, no dataclass).
# 146 with the DRY lens's sizes apart from its search, so the search imports no lens module back
# (`lenses.duplication.sizes`: constants only).
# 147 with the API-newer-than-runtime rule's tables of releases apart from its checks (`runtime_apis`:
# data only), as the lens had grown past the 450-line bound.
# 148 with what HEAD and the refs name apart from the git wrapper (`freeze.commit_names`: the branch
# read from the HEAD file, the refs resolved with their subjects kept, two git processes fewer; no
# dataclass), as git.py had grown past the 450-line bound.
# 149 with the pairing of moved, extracted and renamed functions apart from their comparison
# (`moved_functions`: no dataclass), as function_comparison.py had grown past the 450-line bound.
# 151 with two bug rules: a search's -1 used as a slice bound (`index_bound`) and a regular expression
# that backtracks exponentially (`catastrophic_regex`; its pattern reader `regex_shapes` is imported
# only where a file holds a pattern to read). No dataclass.
# 152 with the collector paused while the modules load (`start_up`: two functions and the entry
# point; the collections it saves were 2.4% of a one-line change's instructions, the module 0.07%).
# 153 with the freeze's reads of the head side while the diff streams (`freeze.head_reads`: a thread
# that reads in batches; no dataclass), as git.py was at the 450-line bound.
# 155 with the builtin reviewer's review in a module apart from the reviewer (`lens_review`), so that
# building the reviewer loads no lens, and the workers variable it checks apart from the engine
# (`workers`); no dataclass.
# 157 with the builtin reviewer's outcome kept for the same change reviewed again (`outcome_cache`
# and the `cache_keys` it names its entries with; no dataclass). The run below is a first run: the
# same change reviewed again loads REUSED_RUN_MODULES.
# 158 with the runtime rule's Python uses in a module of their own (`runtime_python_uses`), as
# runtime_minimum.py had passed the 450-line bound; no dataclass.
# 159 with a bug rule for a whole value checked with line anchors (`line_anchors`, no dataclass).
LOCAL_RUN_MODULES = 159
# The same change reviewed again, the builtin reviewer's outcome reused: no lens, no lens_review
# (82 with `given_up_parses`, whose note on a parse given up keeps an outcome from being stored).
REUSED_RUN_MODULES = 82


def test_a_local_run_loads_no_more_reviewgate_modules_than_it_did(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    loaded = sorted(name for name in loaded_modules(repo.path, tmp_path / "modules.json")
                    if name.startswith("reviewgate"))
    assert len(loaded) <= LOCAL_RUN_MODULES, loaded


def test_the_same_change_reviewed_again_loads_no_lens(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    loaded_modules(repo.path, tmp_path / "first.json")
    loaded = sorted(name for name in loaded_modules(repo.path, tmp_path / "again.json")
                    if name.startswith("reviewgate"))
    assert "reviewgate.reviewers.builtin.lens_review" not in loaded
    assert len(loaded) <= REUSED_RUN_MODULES, loaded


def test_the_dataclasses_a_local_run_defines_have_docstrings(tmp_path: Path) -> None:
    # A dataclass without a docstring gets one written from inspect.signature when its module is
    # imported: a tenth of the dataclasses' part of the start-up, paid by every run.
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    undocumented = []
    for name in sorted(loaded_modules(repo.path, tmp_path / "modules.json")):
        if not name.startswith("reviewgate"):
            continue
        for value in vars(importlib.import_module(name)).values():
            if (isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name
                    and (value.__doc__ or "").startswith(f"{value.__name__}(")):
                undocumented.append(f"{name}.{value.__qualname__}")
    assert undocumented == []


# Dataclasses the modules of that run define (57 before this bound, 40 before the third step of the start-up work):
# each costs about 1.3 ms at every start (a frozen one execs six generated methods). A record is
# a NamedTuple (as immutable, comparable and hashable, built in a fraction of the time) unless it
# needs what only a dataclass gives: fields the policy comparison walks (config.py), a field left
# out of equality or repr, a mutable default, a cached property, mutation, an exception. A record
# a run never makes lives in a module imported where it is used.
# 8 since the mutable records nothing compares or prints are plain classes with an __init__ of
# their own (report.base's PublishLog and SinkContext, report.sections' Section, freeze.shallow's
# FetchLog, freeze.git's GitFailure): 1.8% of a warm one-line run's instructions.
LOCAL_RUN_DATACLASSES = 8


def test_a_local_run_defines_no_more_dataclasses_than_it_did(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    defined = sorted(
        f"{name}.{value.__qualname__}"
        for name in loaded_modules(repo.path, tmp_path / "modules.json") if name.startswith("reviewgate")
        for value in vars(importlib.import_module(name)).values()
        if isinstance(value, type) and dataclasses.is_dataclass(value) and value.__module__ == name
    )
    assert len(defined) <= LOCAL_RUN_DATACLASSES, defined


def test_the_records_made_named_tuples_stay_immutable_comparable_and_hashable() -> None:
    from reviewgate.context import Rejection, ReviewScope
    from reviewgate.reviewers.builtin.suppressions import parse_suppression

    rejection = Rejection("app.py", 3, "callers never pass zero")
    assert rejection == Rejection("app.py", 3, "callers never pass zero") and len({rejection, rejection}) == 1
    assert rejection._replace(dismisses=True).dismisses and not rejection.dismisses
    try:
        rejection.line = 4  # type: ignore[misc]
    except AttributeError:
        pass
    else:
        raise AssertionError("a Rejection took a new line")
    assert hash(ReviewScope(frozenset({"a.py"}), True)) == hash(ReviewScope(frozenset({"a.py"}), True))
    suppression = parse_suppression("x = 1  # reviewgate: ignore[security] the value is a test key")
    assert suppression is not None and suppression.rules == frozenset({"security"}) and suppression.line == 0
    # The run's own records since the third step: a verify outcome and the overrides as well.
    from reviewgate.config import Overrides
    from reviewgate.verify.outcome import ABSENT

    cancelled = ABSENT._replace(cancelled=True)
    assert cancelled.cancelled and not ABSENT.cancelled and cancelled != ABSENT
    assert hash(Overrides(no_verify=True)) == hash(Overrides(no_verify=True)) and Overrides() != Overrides(no_verify=True)
    # A finding crosses the fork of the lens workers pickled, its extras with it.
    import pickle

    from testing.results import sample_finding

    finding = sample_finding().with_changes(extra={"suggestion": {"line": 1}})
    assert pickle.loads(pickle.dumps(finding)) == finding and sample_finding().extra == {}
    for record in (ABSENT, Overrides(), finding):
        try:
            record.reason = "changed"  # type: ignore[attr-defined, misc]
        except AttributeError:
            pass
        else:
            raise AssertionError(f"{type(record).__name__} took a new value")


def test_ini_files_without_the_sections_read_are_not_parsed(tmp_path: Path) -> None:
    # Django's setup.cfg and tox.ini: INI files, none with a [mypy] or pytest section.
    ini = {"setup.cfg": "[flake8]\nmax-line-length = 119\n", "tox.ini": "[tox]\nenvlist = py3\n"}
    repo = make_repo(tmp_path, {**ini, "app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    assert "configparser" not in loaded_modules(repo.path, tmp_path / "modules.json")
    # The guard above can fail: with a section the tooling reads, the file is parsed.
    (tmp_path / "with-section").mkdir()
    repo = make_repo(tmp_path / "with-section", {**ini, "tox.ini": "[pytest]\ntestpaths = checks\n", "app.py": "x = 1\n"},
                     {"app.py": "x = 2\n"})
    assert "configparser" in loaded_modules(repo.path, tmp_path / "modules.json")


def git_calls(tmp_path: Path, repo: Path, *arguments: str) -> list[str]:
    """The argument lines of every git process a local run starts, through a git on PATH that logs them."""
    log, shim = tmp_path / "git-calls.log", tmp_path / "git-shim"
    shim.mkdir()
    (shim / "git").write_text(f'#!/bin/sh\nprintf "%s\\n" "$*" >> "{log}"\nexec "{shutil.which("git")}" "$@"\n',
                              encoding="utf-8")
    (shim / "git").chmod(0o755)
    result = run_cli(repo, "run", "--reviewer", "builtin", "--base", "main", *arguments,
                     env={"PATH": f"{shim}{os.pathsep}{os.environ['PATH']}"})
    assert result.returncode == 0, result.stderr
    return log.read_text(encoding="utf-8").splitlines()


def test_a_local_run_asks_git_once_for_what_one_process_can_answer(tmp_path: Path) -> None:
    # Each git call is a process (2-3 ms of CPU): the work tree's root and its git directory
    # (for the freeze's tree-only commands) come from one, HEAD and the base --base names from one.
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    calls = git_calls(tmp_path, repo.path)
    asked = [call for call in calls if " rev-parse " in call and ("--show-toplevel" in call or "--absolute-git-dir" in call)]
    assert len(asked) == 1 and "--show-toplevel --absolute-git-dir" in asked[0]
    assert [call for call in calls if " rev-parse --verify " in call] == []
    # The branch a fix may be named by is read from the HEAD file of the git directory the first call gave,
    # and the head's subject from the commit the refs' resolution printed.
    assert [call for call in calls if " symbolic-ref " in call or " log " in call] == []
    # The merge base's `.gitattributes`, which tells vendored and generated code from the product's, is
    # read with the policy by the reader the lenses share (`shared_tree_reader`), not by a process of its own.
    assert len(calls) <= 7, calls


def test_the_subject_kept_from_the_refs_resolution_is_the_one_git_log_prints(tmp_path: Path) -> None:
    from reviewgate.freeze import commit_names
    from testing.repo import git

    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"}).path
    messages = ["Fix: overflow", "fix\nthe rest of the subject  \n\nbody", "\n\n  bugfix-12 \t\nmore\n",
                "fixture cleanup", "", "héllo wörld\r\nnext"]
    tree = git(repo, "rev-parse", "HEAD^{tree}")
    for message in messages:
        commit = subprocess.run(["git", "commit-tree", tree, "-p", "HEAD"], cwd=repo, input=message.encode(),
                                capture_output=True, check=True).stdout.decode().strip()
        logged = subprocess.run(["git", "log", "-1", "--format=%s", commit], cwd=repo, capture_output=True,
                                check=True).stdout.decode("utf-8", "replace").strip()
        assert commit_names.resolve_commits(repo, [commit, "main"])[0] == commit
        assert commit in commit_names._SUBJECTS and commit_names.commit_subject(repo, commit).strip() == logged, message


def test_the_branch_read_from_the_head_file_is_the_one_git_names(tmp_path: Path) -> None:
    from reviewgate.freeze.commit_names import checked_out_branch
    from reviewgate.freeze.git import repository_root
    from testing.repo import git

    def by_git(path: Path) -> str | None:
        completed = subprocess.run(["git", "symbolic-ref", "--quiet", "--short", "HEAD"], cwd=path,
                                   capture_output=True, text=True, check=False)
        return completed.stdout.strip() or None

    repo = make_repo(tmp_path / "main", {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"}, branch_name="fix/overflow")
    root = repository_root(repo.path)
    assert checked_out_branch(root) == by_git(root) == "fix/overflow"
    linked = tmp_path / "linked"
    git(repo.path, "worktree", "add", "-q", "-b", "hotfix/totals", str(linked), "main")
    assert checked_out_branch(repository_root(linked)) == by_git(linked) == "hotfix/totals"
    git(repo.path, "checkout", "-q", "--detach", "main")
    assert checked_out_branch(root) is None and by_git(root) is None


# A run in a fresh interpreter whose Python change checks a URL's scheme as written: which of the
# scheme-case lens's JavaScript and Go patterns it compiled (`_patterns`, compiled together on first use).
_RUN_AND_COUNT_SCHEME_PATTERNS = """
import io, sys
from reviewgate.cli import main
code = main(sys.argv[1:], stdout=io.StringIO())
from reviewgate.reviewers.builtin.lenses import scheme_case
print(code, scheme_case._patterns.cache_info().currsize)
"""


def test_a_python_change_compiles_none_of_the_text_languages_scheme_patterns(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"},
                     {"app.py": "def secure(url):\n    return url.startswith('https:')\n"})
    completed = subprocess.run(
        [sys.executable, "-c", _RUN_AND_COUNT_SCHEME_PATTERNS, "run", "--reviewer", "builtin", "--base", "main",
         "--output-dir", str(tmp_path / "out")],
        cwd=repo.path, env=clean_environment(), capture_output=True, text=True, timeout=120, check=False,
    )
    assert completed.stdout.split() == ["0", "0"], completed.stderr
    report = json.loads((tmp_path / "out" / "report.json").read_text(encoding="utf-8"))
    assert "correctness/case-sensitive-scheme" in json.dumps(report)  # the lens did read the Python check


def test_the_deferred_modules_exist_and_a_shard_run_loads_its_own(tmp_path: Path) -> None:
    # A rename must not leave the guard above checking for modules that no longer exist.
    assert [name for name in DEFERRED if importlib.util.find_spec(name) is None] == []
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    loaded = loaded_modules(repo.path, tmp_path / "modules.json", "--shard", "1/2")
    assert {"reviewgate.sharding.plan", "reviewgate.sharding.shard_report"} <= loaded


# Importing the package, in a fresh interpreter: which reviewgate modules compile a regular
# expression while being imported (the module's own code, not a function called later).
_COMPILED_AT_IMPORT = """
import json, os, re, sys
compiled = set()
original = re._compile
def counting(pattern, flags):
    frame = sys._getframe(1)
    while frame is not None and frame.f_code.co_filename.endswith(os.path.join("", "re", "__init__.py")):
        frame = frame.f_back
    if frame is not None and frame.f_code.co_name == "<module>":
        compiled.add(frame.f_globals.get("__name__", "?"))
    return original(pattern, flags)
re._compile = counting
import reviewgate.cli, reviewgate.run, reviewgate.reviewers.builtin
print(json.dumps(sorted(name for name in compiled if name.startswith("reviewgate"))))
"""
# Still compiled at import: bytes patterns (LazyPattern is for text), and a module whose
# patterns are to move to LazyPattern with its own pending change.
_COMPILING_AT_IMPORT = {
    "reviewgate.freeze.diff",
    "reviewgate.reviewers.builtin.lenses.oversized",
    "reviewgate.reviewers.builtin.behaviour",
    "reviewgate.reviewers.builtin.function_comparison",
    "reviewgate.reviewers.builtin.moved_functions",
    # The literals a huge file's lines must hold (secrets.MAY_HOLD_A_SECRET): the secrets lens
    # searches every file with them. security.LINE_RULES_NEED, which only a file over the size cap
    # is read with, is a LazyPattern (its compilation was 0.6% of a one-line change's instructions).
    "reviewgate.reviewers.builtin.lenses.secrets",
}


def test_importing_the_package_compiles_almost_no_regular_expression() -> None:
    # Over a hundred module-level patterns were compiled on every start (a fifth of the import
    # time); a LazyPattern compiles when a lens first uses it.
    completed = subprocess.run(
        [sys.executable, "-c", _COMPILED_AT_IMPORT], env=clean_environment(), capture_output=True, text=True,
        timeout=120, check=True,
    )
    assert set(json.loads(completed.stdout)) <= _COMPILING_AT_IMPORT


def test_a_lazy_pattern_answers_as_the_compiled_one_and_compiles_once() -> None:
    from reviewgate.lazy_patterns import LazyPattern

    source, flags, text = r"(\w+)=(\d+)", re.IGNORECASE, "a=1, B=22, c=x"
    lazy, compiled = LazyPattern(source, flags), re.compile(source, flags)
    assert lazy.search(text, 2) is not None and lazy.search(text, 2).span() == compiled.search(text, 2).span()  # type: ignore[union-attr]
    assert lazy.findall(text) == compiled.findall(text)
    assert [match.span() for match in lazy.finditer(text)] == [match.span() for match in compiled.finditer(text)]
    assert lazy.sub(r"\2", text) == compiled.sub(r"\2", text)
    assert lazy.subn("", text, 1) == compiled.subn("", text, 1)
    assert lazy.split(text) == compiled.split(text)
    assert lazy.match(text) is not None and lazy.fullmatch(text) is None
    assert lazy.compiled() is lazy.compiled()
    assert lazy.search == lazy.compiled().search  # the compiled pattern's own method from now on


# `python -m reviewgate run` in a fresh interpreter, each start of a collection logged with where the
# start-up was: before the command line's module began loading (runpy's and Python's own imports),
# during the gate's imports, or after them (reviewgate.run defines run_gate after its imports).
_COLLECTIONS_DURING_START_UP = """
import gc, os, runpy, sys
log = os.open(sys.argv[1], os.O_WRONLY | os.O_CREAT | os.O_APPEND)
def logged(phase, info):
    if phase == "start":
        loaded = getattr(sys.modules.get("reviewgate.run"), "run_gate", None) is not None
        started = "reviewgate.cli" in sys.modules
        os.write(log, b"after\\n" if loaded else b"during\\n" if started else b"before\\n")
gc.callbacks.append(logged)
sys.argv = ["reviewgate", *sys.argv[2:]]
runpy.run_module("reviewgate", run_name="__main__", alter_sys=True)
"""


def test_the_collector_does_not_run_while_the_modules_load(tmp_path: Path) -> None:
    # The start-up's imports make no garbage: about 35 collections over them were 2.4% of a
    # one-line change's instructions (start_up.py).
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 2\n"})
    log = tmp_path / "collections.log"
    completed = subprocess.run(
        [sys.executable, "-c", _COLLECTIONS_DURING_START_UP, str(log), "run", "--reviewer", "builtin", "--base", "main",
         "--no-verify", "--output-dir", str(tmp_path / "out")],
        cwd=repo.path, env=clean_environment(), capture_output=True, text=True, timeout=120, check=False,
    )
    assert completed.returncode == 0, completed.stderr
    phases = log.read_text(encoding="utf-8").split() if log.exists() else []
    assert "during" not in phases, f"{phases.count('during')} collections while the modules loaded"
    # Embedded (a test, a program calling main): its collector is left as it was.
    from reviewgate.start_up import resume_collector

    resume_collector()
    assert gc.isenabled()
