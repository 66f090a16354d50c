"""How the lenses run: file by file with each tree parsed once, and on several processes for a
large change, with the same findings in the same order as one process gives."""

from __future__ import annotations

import ast
import os
import pickle
import time
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from reviewgate.context import ReviewRequest
from reviewgate.errors import BlockedError, ConfigError
from reviewgate.freeze.freeze import freeze
from reviewgate.freeze.git import TreeReader
from reviewgate.reviewers.builtin import BuiltinReviewer, engine
from reviewgate.reviewers.builtin.behaviour import ToldEvidence, analyse
from reviewgate.reviewers.builtin.engine import PARALLEL_MIN_ADDED_LINES, PARALLEL_MIN_CORES, worker_count
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.languages.shapes import FunctionShape, HeadShapes, packed
from reviewgate.reviewers.builtin.lenses.tests_needed import TestsLens
from reviewgate.reviewers.builtin.python_parsing import forget_parsed_trees
from reviewgate.reviewers.builtin.side_shapes import head_shapes_of, head_shapes_unpacked
from reviewgate.reviewers.builtin.workers import WORKERS_VARIABLE
from testing.cli import run_cli
from testing.repo import FileContent, make_repo
from tests.test_corpus import load_cases


def _corpus_change() -> tuple[dict[str, FileContent], dict[str, FileContent]]:
    """Every labelled corpus case side by side in one repository, each under a folder of its
    name, its test files and Rust files with tests inside left out (so the tests lens has its
    say): a change of a few hundred files that every lens has something to say about."""
    base: dict[str, FileContent] = {}
    branch: dict[str, FileContent] = {}
    for case in load_cases():
        base.update({f"{case['name']}/{name}": text for name, text in case.get("base", {}).items()})
        branch.update(
            {
                f"{case['name']}/{name}": text
                for name, text in case.get("branch", {}).items()
                if not is_test_file(name) and not (isinstance(text, str) and "#[cfg(test)]" in text)
            }
        )
    return base, branch


def _request(root: Path, base: dict[str, FileContent], branch: dict[str, FileContent]) -> ReviewRequest:
    repo = make_repo(root, base, branch)
    target = freeze(repo.path, base="main")
    return ReviewRequest(target=target, head=TreeReader(repo.path, target.head_sha))


# What a review found, as compared across processes: id, rule, path, line.
Found = list[tuple[str, str, "str | None", "int | None"]]


def _review(request: ReviewRequest) -> Found:
    fresh = ReviewRequest(target=request.target, head=TreeReader(Path(request.target.repo_root), request.target.head_sha))
    return [(item.id, item.rule, item.path, item.line) for item in BuiltinReviewer().review(fresh).findings]


@pytest.fixture(scope="module")
def corpus_in_one_process(tmp_path_factory: pytest.TempPathFactory) -> tuple[ReviewRequest, Found]:
    """The corpus change and its findings in one process: made and reviewed once for every number
    of workers compared with it."""
    request = _request(tmp_path_factory.mktemp("corpus"), *_corpus_change())
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv(WORKERS_VARIABLE, "1")
        assert worker_count(request) == 1
        serial = _review(request)
    families = Counter(rule.split("/")[0] for _id, rule, _path, _line in serial)
    assert len(serial) > 60 and {"reuse", "tests", "correctness", "readability", "security"} <= set(families)
    return request, serial


@pytest.mark.parametrize("workers", [2, 3])  # the DRY lens beside this process; and a per-file worker from the start
def test_several_processes_give_the_findings_one_process_gives(
    corpus_in_one_process: tuple[ReviewRequest, Found], monkeypatch: pytest.MonkeyPatch, workers: int
) -> None:
    request, serial = corpus_in_one_process
    monkeypatch.setenv(WORKERS_VARIABLE, str(workers))
    assert worker_count(request) == workers
    assert _review(request) == serial


def test_each_changed_file_is_parsed_once_however_many_files_change(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = (
        "import subprocess\n\n\ndef run_{0}(command):\n    try:\n"
        "        return subprocess.run(command, shell=True)\n    except Exception:\n        pass\n"
    )
    branch: dict[str, FileContent] = {f"app/module_{number}.py": source.format(number) for number in range(80)}
    request = _request(tmp_path, {"README.md": "app\n"}, branch)
    parsed: Counter[str] = Counter()
    real_parse = ast.parse

    def counting_parse(text: str, filename: str = "<unknown>", *args: Any, **kwargs: Any) -> Any:
        parsed[filename] += 1
        return real_parse(text, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting_parse)
    monkeypatch.setenv(WORKERS_VARIABLE, "1")
    findings = _review(request)
    assert {rule for _id, rule, _path, _line in findings} >= {
        "correctness/swallowed-exception", "tests/missing-tests"
    }
    assert parsed == Counter(dict.fromkeys(branch, 1))


@pytest.mark.parametrize("value", ["two", "-1", "1.5"])
def test_a_worker_count_that_is_not_a_number_is_refused_naming_the_variable(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, value: str
) -> None:
    request = _request(tmp_path, {}, {"app.py": "x = 1\n"})
    monkeypatch.setenv(WORKERS_VARIABLE, value)
    with pytest.raises(ConfigError, match=f"{WORKERS_VARIABLE}={value!r}"):
        worker_count(request)


def test_a_small_change_is_reviewed_in_this_process(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    request = _request(tmp_path, {}, {f"app/m{number}.py": "x = 1\n" for number in range(40)})
    monkeypatch.delenv(WORKERS_VARIABLE, raising=False)
    assert worker_count(request) == 1


def test_a_bad_worker_count_stops_the_run_as_a_usage_error(tmp_path: Path) -> None:
    repo = make_repo(tmp_path, {"app.py": "x = 1\n"}, {"app.py": "x = 1\ny = 2\n"})
    result = run_cli(repo.path, "run", "--base", "main", "--reviewer", "builtin", "--no-verify",
                     env={WORKERS_VARIABLE: "all"})
    assert result.returncode == 2, result.stdout + result.stderr
    assert f"{WORKERS_VARIABLE}='all'" in result.stderr and len(result.stderr.strip().splitlines()) == 1


def test_a_large_change_uses_the_cores_only_where_there_are_cores_to_spare(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = "".join(f"value_{line} = {line}\n" for line in range(PARALLEL_MIN_ADDED_LINES // 40 + 1))
    request = _request(tmp_path, {}, {f"app/m{number}.py": body for number in range(40)})
    monkeypatch.delenv(WORKERS_VARIABLE, raising=False)
    monkeypatch.setattr(engine, "available_cores", lambda: PARALLEL_MIN_CORES - 1)
    assert worker_count(request) == 1
    monkeypatch.setattr(engine, "available_cores", lambda: PARALLEL_MIN_CORES)
    assert worker_count(request) == PARALLEL_MIN_CORES


def _has_ended(pid: int) -> bool:
    """Whether the process is gone or a zombie (ended, not yet waited for)."""
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except FileNotFoundError:
        return True


class _RecordsItsProcess:
    """A whole-change lens that writes the id of the process it runs in."""

    def __init__(self, record: Path) -> None:
        self.record = record

    def check(self, request: ReviewRequest) -> list[Any]:
        self.record.write_text(str(os.getpid()))
        return []


class _WaitsForTheWorkerToEnd:
    """A per-file lens that, in this process, waits up to 20 s for the whole-change worker to end."""

    def __init__(self, record: Path) -> None:
        self.record = record
        self.ended: bool | None = None

    def check(self, request: ReviewRequest) -> list[Any]:
        deadline = time.monotonic() + 20
        while self.ended is None and time.monotonic() < deadline:
            if self.record.exists() and self.record.read_text() and _has_ended(int(self.record.read_text())):
                self.ended = True
            time.sleep(0.05)
        return []


def test_the_whole_change_worker_ends_when_its_lenses_are_done_not_with_the_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Memory: a pool's worker stayed alive, holding what the DRY index left in its heap (250 MB
    at Django +300k lines), until this process had run the whole per-file stage."""
    request = _request(tmp_path, {}, {"app/a.py": "value = 1\n"})
    monkeypatch.setenv(WORKERS_VARIABLE, "2")
    record = tmp_path / "worker-pid"
    whole, per_file = _RecordsItsProcess(record), _WaitsForTheWorkerToEnd(record)
    assert engine.run_lenses(request, [whole, per_file], [whole]) == []
    assert int(record.read_text()) != os.getpid() and per_file.ended


class _EndsItsProcess:
    def check(self, request: ReviewRequest) -> list[Any]:
        os._exit(7)


def test_a_worker_that_ends_without_an_answer_blocks_the_run_naming_its_exit_code(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pool waited forever for the answer of a worker that died (killed, out of memory)."""
    request = _request(tmp_path, {}, {"app/a.py": "value = 1\n"})
    monkeypatch.setenv(WORKERS_VARIABLE, "2")
    lens = _EndsItsProcess()
    with pytest.raises(BlockedError, match="exit code 7"):
        engine.run_lenses(request, [lens], [lens])


_FUNCTIONS = '''\
import os


def load_{0}(path, mode="r", retries=3):
    """Read the file."""
    for attempt in range(retries):
        if os.path.exists(path):
            return open(path, mode).read()
        if attempt > 1 and mode == "rb":
            break
    return None


def _helper_{0}(value):
    return value


class Store{0}:
    def name(self):
        return self._name

    def save(self, item, *, flush=False):
        if flush and item:
            os.sync()
        return item
'''


@pytest.mark.parametrize("appended", [False, True])  # a new file; functions appended (HeadShapes)
def test_function_shapes_made_in_a_worker_are_the_ones_this_process_makes(tmp_path: Path, appended: bool) -> None:
    """What a per-file worker sends back for the tests lens: every field of every function, those
    the worker computed and those asked of the text again here (the normalised body)."""
    base: dict[str, FileContent] = {"README.md": "app\n", **({"app/store.py": _FUNCTIONS.format(1)} if appended else {})}
    request = _request(tmp_path, base, {"app/store.py": _FUNCTIONS.format(1) + ("\n\n" + _FUNCTIONS.format(2)) * appended})
    change = request.target.files[0]
    made = head_shapes_of(request, change)
    forget_parsed_trees()
    again = head_shapes_of(request, change)
    assert made is not None and again is not None and isinstance(made, HeadShapes) is appended
    received = head_shapes_unpacked(request, change, pickle.loads(pickle.dumps(packed(made))))
    assert type(received) is type(again) and list(received) == list(again) and len(received) >= 4

    def fields(shape: FunctionShape) -> tuple[object, ...]:
        return (shape.name, shape.line, shape.end_line, shape.text, shape.public, shape.branches,
                shape.statements, shape.defaults, shape.trivial, shape.body)

    assert [fields(shape) for shape in received.values()] == [fields(shape) for shape in again.values()]


class _SlowHere:
    """A per-file lens that records which process reviewed each file, and in this process takes
    0.2 s a file: a worker free to share the stage takes most of the files."""

    def __init__(self, record: Path) -> None:
        self.record = record
        self.parent = os.getpid()

    def check(self, request: ReviewRequest) -> list[Any]:
        path = request.target.files[0].path
        (self.record / path.replace("/", "_")).write_text(str(os.getpid()))
        if os.getpid() == self.parent:
            time.sleep(0.2)
        return []


class _Quick:
    def check(self, request: ReviewRequest) -> list[Any]:
        return []


def test_once_the_whole_change_worker_is_done_a_worker_shares_the_per_file_stage(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On 2 cores the DRY lens's worker ended long before this process's per-file stage, and that
    core then stood idle. The tests lens, run here, gets the function shapes the worker made."""
    branch: dict[str, FileContent] = {f"app/module_{number}.py": _FUNCTIONS.format(number) for number in range(12)}
    request = _request(tmp_path, {"README.md": "app\n"}, branch)
    record = tmp_path / "reviewed-in"
    record.mkdir()
    quick, tests = _Quick(), TestsLens()
    lenses: list[engine.Lens] = [quick, _SlowHere(record), tests]

    def found() -> list[tuple[str, str | None, int | None, str, str]]:
        return [(item.rule, item.path, item.line, item.title, item.body)
                for item in engine.run_lenses(request, lenses, [quick, tests])]

    monkeypatch.setenv(WORKERS_VARIABLE, "1")
    serial = found()
    monkeypatch.setenv(WORKERS_VARIABLE, "2")
    shared = found()
    assert shared == serial and any(rule.startswith("tests/") for rule, *_rest in serial)
    processes = Counter(path.read_text() for path in record.iterdir())
    assert len(processes) == 2 and processes[str(os.getpid())] < len(branch) // 2, processes


def test_functions_appended_to_existing_modules_are_parsed_without_the_rest_of_each_module(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a declared Python minimum (the runtime lens reads each file), a change appending
    functions to existing modules has only the appended statements parsed: the runtime lens asks
    them first for the newest use on an added line, and parses the whole module only when it is
    newer than the minimum (here, `tomllib` in one module). Each module says `timeout`, a word the
    lens requires of a file it reports in."""
    old = "import os\n\n\ndef existing_{0}(path, timeout=3):\n    return os.path.join(path, str(timeout))\n"
    appended = "\n\ndef added_{0}(values):\n    return sorted(set(values))\n"
    base: dict[str, FileContent] = {"pyproject.toml": '[project]\nname = "app"\nrequires-python = ">=3.8"\n'}
    base |= {f"app/module_{number}.py": old.format(number) for number in range(6)}
    branch: dict[str, FileContent] = {
        f"app/module_{number}.py": old.format(number) + appended.format(number) for number in range(6)
    }
    branch["app/module_0.py"] = str(branch["app/module_0.py"]) + "\n\ndef settings(raw):\n    import tomllib\n    return tomllib.loads(raw)\n"
    request = _request(tmp_path, base, branch)
    parsed: Counter[tuple[str, bool]] = Counter()  # (file, whole module)
    real_parse = ast.parse

    def counting_parse(text: str, filename: str = "<unknown>", *args: Any, **kwargs: Any) -> Any:
        parsed[(filename, text.lstrip("\n").startswith("import os"))] += 1
        return real_parse(text, filename, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting_parse)
    monkeypatch.setenv(WORKERS_VARIABLE, "1")
    findings = _review(request)
    assert [(rule, path) for _id, rule, path, _line in findings if rule == "correctness/api-newer-than-runtime"] == [
        ("correctness/api-newer-than-runtime", "app/module_0.py")
    ]
    whole = {path for (path, is_whole), count in parsed.items() if is_whole}
    assert whole == {"app/module_0.py"}, parsed
    assert all(parsed[(path, False)] == 1 for path in branch), parsed


_RUN_BEFORE = '''def run(items):
    total = 0
    for item in items:
        weight = item.weight * 3
        total += weight - item.discount
        log_entry("weighed", item.name, weight)
        record_weight(item, weight)
    return total
'''
_RUN_AFTER = '''def run(items):
    total = 0
    for item in items:
        total += _weighed(item)
    return total


def _weighed(item):
    weight = item.weight * 3
    log_entry("weighed", item.name, weight)
    record_weight(item, weight)
    return weight - item.discount


def fresh(order):
    if order.rush:
        schedule_courier(order.address, priority=True)
    notify_customer(order.customer, "on its way")
    return order.reference
'''


def test_the_per_file_stage_tells_which_new_functions_were_extracted_and_the_tests_lens_reads_it(
    tmp_path: Path,
) -> None:
    """Whether a new function was extracted from code the base side has is worked out as each file
    is reviewed, in whichever process reviews it, not by the tests lens once every file is done;
    the lens reads that answer (here, one said otherwise of the extracted helper makes it new)."""
    request = _request(tmp_path, {"src/shop/orders.py": _RUN_BEFORE}, {"src/shop/orders.py": _RUN_AFTER})
    change = request.target.files[0]
    outcome = engine.review_file(request, change, [], True)
    assert outcome.shapes is not None and outcome.extracted == {"_weighed": True, "fresh": False}
    head_shapes = {change.path: outcome.shapes}

    def new_functions(extracted: dict[str, dict[str, bool]]) -> list[str]:
        findings = list(TestsLens().check_with_shapes(request, head_shapes, extracted))
        return sorted(name for name in ("_weighed", "fresh") for finding in findings if f"`{name}`" in finding.body)

    assert new_functions({change.path: outcome.extracted}) == ["fresh"]
    assert new_functions({change.path: {"_weighed": False, "fresh": False}}) == ["_weighed", "fresh"]


def test_the_per_file_stage_tells_each_files_evidence_and_the_tests_lens_takes_it_when_none_removes(
    tmp_path: Path,
) -> None:
    """A file's evidence, were no function removed anywhere, is worked out as the file is reviewed
    (behaviour.told_evidence); when no file removes one, the tests lens takes it as told rather than
    comparing every file once they are all done (here, a told answer of no evidence gives no finding)."""
    request = _request(tmp_path, {"src/shop/orders.py": _RUN_BEFORE}, {"src/shop/orders.py": _RUN_AFTER})
    change = request.target.files[0]
    outcome = engine.review_file(request, change, [], True)
    assert outcome.shapes is not None and outcome.extracted is not None and outcome.told is not None
    assert not outcome.told.removes
    # What the whole-change analysis finds, file by file (changed bodies only for a fix, as the lens asks).
    assert outcome.told.evidence == analyse(request, changed_bodies=request.marked_as_fix)
    head_shapes, extracted = {change.path: outcome.shapes}, {change.path: outcome.extracted}

    def found(told: dict[str, ToldEvidence] | None) -> list[str]:
        return [finding.body for finding in TestsLens().check_with_shapes(request, head_shapes, extracted, told)]

    assert found({change.path: outcome.told}) == found(None) != []
    assert found({change.path: ToldEvidence([], False)}) == []


def test_a_file_that_removes_a_function_is_compared_by_the_tests_lens_itself(tmp_path: Path) -> None:
    """A removed function may be where a new one came from (moved, renamed): with one removed, the
    evidence told file by file, worked out against none, is not taken."""
    before = "def tally(items):\n    return sum(item.weight for item in items)\n"
    after = (
        "def count_weights(items):\n    return sum(item.weight for item in items)\n\n\n"
        "def fresh(order):\n    if order.rush:\n        schedule_courier(order.address)\n"
        "    notify_customer(order.customer)\n    return order.reference\n"
    )
    request = _request(tmp_path, {"src/shop/weights.py": before}, {"src/shop/weights.py": after})
    change = request.target.files[0]
    outcome = engine.review_file(request, change, [], True)
    assert outcome.told is not None and outcome.told.removes  # `tally` is gone at head
    assert outcome.extracted is not None and outcome.shapes is not None
    told = {change.path: ToldEvidence([], True)}  # were it taken, nothing would be found
    findings = list(TestsLens().check_with_shapes(request, {change.path: outcome.shapes}, {change.path: outcome.extracted}, told))
    assert [finding.body for finding in findings] == [finding.body for finding in TestsLens().check(request)] != []


@pytest.mark.parametrize("removes", [False, True])
def test_the_tests_lens_finds_the_same_in_several_processes_whether_or_not_a_function_is_removed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, removes: bool
) -> None:
    """Without a removed function the lens takes each file's evidence as told; with one (a function
    renamed in one file) it compares every file itself, unpacking the shapes the worker sent."""
    source = "def run_{0}(order):\n    if order.rush:\n        ship_{0}(order)\n    return order.reference\n"
    base: dict[str, FileContent] = {f"shop/module_{number}.py": source.format(number) for number in range(40)}
    branch: dict[str, FileContent] = {
        path: text + "\n\n" + source.format(f"extra_{number}").replace("def run_", "def fresh_")
        for number, (path, text) in enumerate(base.items())
    }
    if removes:
        branch["shop/module_0.py"] = str(branch["shop/module_0.py"]).replace("def run_0(", "def renamed_0(")
    request = _request(tmp_path, base, branch)
    found = {}
    for workers in ("1", "3"):  # 3: a per-file worker from the start, whose shapes are sent
        monkeypatch.setenv(WORKERS_VARIABLE, workers)
        found[workers] = [item for item in _review(request) if item[1] == "tests/missing-tests"]
    assert len(found["1"]) == 40 and found["3"] == found["1"]
