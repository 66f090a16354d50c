"""How fast is the builtin reviewer on a big change in a big repository? One command:

    python benchmarks/builtin_benchmark.py           # 20,000 added lines; repositories of 100k, 500k lines
    python benchmarks/builtin_benchmark.py --small   # a quick check that the benchmark works

For each repository size it builds a synthetic git repository (Python, JavaScript and Go files
whose functions are random sequences of varied statements, so shapes repeat the way real code's
do), commits a branch that adds the lines, and times in the same run:

- plain `git diff` of the change (the floor: reading the change at all),
- `reviewgate run --reviewer builtin --no-verify` (freeze, every lens, every report file), with its
  peak memory,
- the DRY lens's index alone (to show how its cost grows with the repository),
- jscpd 5.3.2 (npm), the usual copy-paste detector, over the same repository: by default and with
  `--ignore-identifiers --ignore-literals` (its mode that also matches renamed copies), each with
  its peak memory.

The targets: the whole builtin review at most 5x the `git diff` time, faster than jscpd,
peak memory below 1 GB. jscpd is installed on first use into benchmarks/.cache/ (gitignored)
with `npm install --prefix`. Peak memory: the most the process tree held at once (benchmarks/measure.py).
"""

from __future__ import annotations

import argparse
import os
import random
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parent
REPO_ROOT = BENCHMARKS.parent
TARGET_DIFF_RATIO = 5.0
MEMORY_LIMIT_MB = 1024

sys.path.insert(0, str(REPO_ROOT))

from benchmarks.measure import (  # noqa: E402
    IDENTIFIER_WORDS,
    JSCPD_RENAMED_FLAGS,
    JSCPD_VERSION,
    ensure_jscpd,
    jscpd_command,
    python_environment,
    run_measured,
)
from reviewgate.context import ReviewRequest  # noqa: E402
from reviewgate.freeze.freeze import freeze  # noqa: E402
from reviewgate.freeze.git import TreeReader  # noqa: E402
from reviewgate.reviewers.builtin.lenses.duplication.lens import DuplicationLens  # noqa: E402
from testing.lenses import gate_cache  # noqa: E402
from testing.repo import GIT_IDENTITY  # noqa: E402


def _name(rng: random.Random) -> str:
    return "_".join(rng.sample(IDENTIFIER_WORDS, rng.randint(1, 3)))


def _camel(rng: random.Random) -> str:
    first, *rest = rng.sample(IDENTIFIER_WORDS, rng.randint(1, 3))
    return first + "".join(word.title() for word in rest)


def _python_statement(rng: random.Random, names: list[str]) -> list[str]:
    a, b, c = (rng.choice(names) for _ in range(3))
    return rng.choice(
        [
            [f"    {a} = {b}.{_name(rng)}({c}, {rng.randint(0, 99)})"],
            [f"    {a} = [{b} for {b} in {c} if {b} > {rng.randint(0, 9)}]"],
            [f"    if {a} is None:", f"        {a} = {rng.choice(['{}', '[]', '0', repr(_name(rng))])}"],
            [
                f"    for {a} in {b}.{_name(rng)}():",
                f"        {c}[{a}] = {c}.get({a}, 0) + {rng.randint(1, 5)}",
            ],
            [f'    log.info("{_name(rng)} %s", {a})'],
            [f"    {a} += {b} * {rng.randint(2, 50)} - {c}"],
            [
                f"    with open({a}, encoding={rng.choice(['utf8', 'latin1'])!r}) as handle:",
                f"        {b} = handle.read()",
            ],
            [f"    {a}, {b} = {c}.{_name(rng)}, {rng.choice(names)}"],
            [f"    assert {a} != {b}, {_name(rng)!r}"],
            [f"    {a} = {{{_name(rng)!r}: {b}, {_name(rng)!r}: {c}}}"],
            [f"    while {a} < {rng.randint(10, 1000)}:", f"        {a} = {a} * 2 + {b}"],
            [f"    {a} = {b}({c}) if {c} else {rng.randint(0, 9)}"],
        ]
    )


def _javascript_statement(rng: random.Random, names: list[str]) -> list[str]:
    a, b, c = (rng.choice(names) for _ in range(3))
    return [
        rng.choice(
            [
                f"  const {_camel(rng)} = {a}.{_camel(rng)}({b}, {rng.randint(0, 99)});",
                f"  if ({a} === {rng.choice(['null', 'undefined', '0'])}) {{ {b} = {c}; }}",
                f"  for (const {a} of {b}) {{ {c}.push({a} * {rng.randint(2, 9)}); }}",
                f"  {a} = {b} ? {c} : '{_camel(rng)}';",
                f"  console.log('{_camel(rng)}', {a}, {b});",
                f"  await {a}.{_camel(rng)}({{ {_camel(rng)}: {b}, {_camel(rng)}: {c} }});",
            ]
        )
    ]


def _go_statement(rng: random.Random, names: list[str]) -> list[str]:
    a, b, c = (rng.choice(names) for _ in range(3))
    return [
        rng.choice(
            [
                f"\t{a} = {b}*{rng.randint(2, 9)} + {c}",
                f"\tif {a} > {rng.randint(0, 99)} {{\n\t\t{b} = {c}\n\t}}",
                f"\tfor i := 0; i < {a}; i++ {{\n\t\t{b} += i\n\t}}",
                f'\tfmt.Println("{_camel(rng)}", {a}, {b})',
            ]
        )
    ]


@dataclass(frozen=True)
class Dialect:
    """How one language writes a file of functions, for the generator below."""

    header: Callable[[str], list[str]]
    name: Callable[[random.Random], str]
    opener: Callable[[random.Random, list[str], list[str]], list[str]]  # (rng, params, locals)
    statement: Callable[[random.Random, list[str]], list[str]]
    closer: Callable[[random.Random, list[str]], list[str]]


PYTHON = Dialect(
    header=lambda _package: ["import logging", "", "log = logging.getLogger(__name__)", ""],
    name=_name,
    opener=lambda rng, params, _locals: [f"def {_name(rng)}({', '.join(params)}):"],
    statement=_python_statement,
    closer=lambda rng, names: [f"    return {rng.choice(names)}"],
)
JAVASCRIPT = Dialect(
    header=lambda _package: ["'use strict';", ""],
    name=_camel,
    opener=lambda rng, params, _locals: [f"export function {_camel(rng)}({', '.join(params)}) {{"],
    statement=_javascript_statement,
    closer=lambda rng, names: [f"  return {rng.choice(names)};", "}"],
)
GO = Dialect(
    header=lambda package: [f"package {package}", "", 'import "fmt"', ""],
    name=_camel,
    opener=lambda rng, params, local_names: [
        f"func {_camel(rng).title()}({', '.join(p + ' int' for p in params)}) int {{",
        *(f"\t{name} := {rng.randint(0, 9)}" for name in local_names),
    ],
    statement=_go_statement,
    closer=lambda rng, names: ["\t_ = " + " + ".join(names), f"\treturn {rng.choice(names)}", "}"],
)


def source_file(rng: random.Random, lines: int, dialect: Dialect, package: str = "main") -> str:
    """About `lines` lines of functions whose bodies are random sequences of varied statements."""
    out = dialect.header(package)
    while len(out) < lines:
        params = [dialect.name(rng) for _ in range(rng.randint(1, 4))]
        local_names = [dialect.name(rng) for _ in range(3)]
        names = params + local_names
        out += ["", *dialect.opener(rng, params, local_names)]
        for _ in range(rng.randint(3, 12)):
            out += dialect.statement(rng, names)
        out += dialect.closer(rng, names)
    return "\n".join(out) + "\n"


def make_file(rng: random.Random, index: int, lines: int) -> tuple[str, str]:
    kind = index % 3
    folder = f"pkg{index // 40:03d}"
    if kind == 0:
        return f"{folder}/mod_{index}.py", source_file(rng, lines, PYTHON)
    if kind == 1:
        return f"web/{folder}/mod_{index}.js", source_file(rng, lines, JAVASCRIPT)
    return f"go/{folder}/mod_{index}.go", source_file(rng, lines, GO, folder)


def git(repo: Path, *args: str) -> None:
    env = {**os.environ, **GIT_IDENTITY, "GIT_CONFIG_NOSYSTEM": "1"}
    subprocess.run(["git", *args], cwd=repo, env=env, check=True, capture_output=True)


def build_repository(root: Path, total_lines: int, added_lines: int, seed: int) -> tuple[Path, list[str]]:
    """A repository of about `total_lines` on main, and a branch adding about `added_lines`."""
    rng = random.Random(seed)
    repo = root / f"repo-{total_lines}"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    written, index, paths = 0, 0, []
    file_lines = 300
    while written < total_lines:
        path, text = make_file(rng, index, file_lines)
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
        paths.append(path)
        written += text.count("\n")
        index += 1
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "base")
    git(repo, "checkout", "-q", "-b", "feature")
    added = 0
    # Half the added lines extend existing files, half are new files; a few functions are renamed copies.
    for path in rng.sample(paths, min(len(paths), max(1, added_lines // 400))):
        if not path.endswith(".py"):
            continue
        extra = source_file(rng, 200, PYTHON).split("\n", 4)[4]
        with (repo / path).open("a", encoding="utf-8") as handle:
            handle.write(extra)
        added += extra.count("\n")
    while added < added_lines:
        path, text = make_file(rng, index, 300)
        path = path.replace("mod_", "new_")
        (repo / path).parent.mkdir(parents=True, exist_ok=True)
        (repo / path).write_text(text, encoding="utf-8")
        added += text.count("\n")
        index += 1
    source = (repo / paths[0]).read_text(encoding="utf-8").split("\n\n\n")[1]
    (repo / "pkg000" / "copied.py").write_text(
        "import logging\n\nlog = logging.getLogger(__name__)\n\n\n"
        + source.replace("def ", "def renamed_", 1),
        encoding="utf-8",
    )
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "feature")
    return repo, paths


@dataclass
class Measurement:
    repo_lines: int
    added_lines: int
    git_diff: float
    review: float
    review_peak_mb: float
    dry_index: float
    jscpd: float | None
    jscpd_peak_mb: float | None
    jscpd_renamed: float | None  # with --ignore-identifiers --ignore-literals
    jscpd_renamed_peak_mb: float | None
    findings: int  # reuse findings: the synthetic branch holds one renamed copy, the rest is random


def measure(root: Path, total_lines: int, added_lines: int, jscpd: Path | None) -> Measurement:
    repo, _ = build_repository(root, total_lines, added_lines, seed=total_lines)
    counted = (
        subprocess.run(
            ["git", "diff", "--numstat", "main", "feature"], cwd=repo, capture_output=True, check=True
        )
        .stdout.decode()
        .split("\n")
    )
    added = sum(int(row.split("\t")[0]) for row in counted if row and row.split("\t")[0].isdigit())
    started = time.perf_counter()
    subprocess.run(["git", "diff", "main...feature"], cwd=repo, stdout=subprocess.DEVNULL, check=True)
    git_diff = time.perf_counter() - started
    review, peak = run_measured(
        [
            sys.executable,
            "-m",
            "reviewgate",
            "run",
            "--base",
            "main",
            "--reviewer",
            "builtin",
            "--no-verify",
            "--output-dir",
            str(root / f"out-{total_lines}"),
        ],
        repo,
        python_environment(REPO_ROOT),
    )
    report = (root / f"out-{total_lines}" / "report.json").read_text(encoding="utf-8")
    findings = report.count('"rule": "reuse/')
    target = freeze(repo, base="main")
    request = ReviewRequest(target=target, head=TreeReader(repo, target.head_sha), cache=gate_cache(repo))
    started = time.perf_counter()
    list(DuplicationLens().check(request))
    dry_index = time.perf_counter() - started
    jscpd_default: tuple[float | None, float | None] = (None, None)
    jscpd_renamed: tuple[float | None, float | None] = (None, None)
    if jscpd is not None:
        # jscpd exits 1 when it finds clones; --min-tokens 50 is its default, written out.
        jscpd_default = run_measured(
            jscpd_command(jscpd, root / f"jscpd-{total_lines}", "--min-tokens", "50"), repo, ok=(0, 1)
        )
        jscpd_renamed = run_measured(
            jscpd_command(jscpd, root / f"jscpd-renamed-{total_lines}", "--min-tokens", "50", *JSCPD_RENAMED_FLAGS),
            repo,
            ok=(0, 1),
        )
    return Measurement(
        total_lines, added, git_diff, review, peak, dry_index, *jscpd_default, *jscpd_renamed, findings
    )


def _seconds(value: float | None) -> str:
    return f"{value:8.2f}s" if value is not None else "      n/a"


def _ratio(value: float, against: float | None) -> str:
    return f"{value / against:7.2f}x" if against else "     n/a"


def _megabytes(value: float | None) -> str:
    return f"{value:7.0f}" if value is not None else "    n/a"


def report(rows: list[Measurement]) -> None:
    print(f"\njscpd {JSCPD_VERSION}; 'renamed': jscpd {' '.join(JSCPD_RENAMED_FLAGS)}; memory in MB")
    print(
        f"{'repo lines':>10} {'added':>7} {'git diff':>9} {'builtin':>9} {'x diff':>7} {'peak':>7} "
        f"{'jscpd':>9} {'x jscpd':>8} {'peak':>7} {'renamed':>9} {'x renamed':>9} {'peak':>7} "
        f"{'DRY lens':>9} {'reuse':>6}"
    )
    for row in rows:
        print(
            f"{row.repo_lines:>10} {row.added_lines:>7} {row.git_diff:8.3f}s {row.review:8.2f}s "
            f"{row.review / row.git_diff:7.1f} {row.review_peak_mb:7.0f} "
            f"{_seconds(row.jscpd)} {_ratio(row.review, row.jscpd)} {_megabytes(row.jscpd_peak_mb)} "
            f"{_seconds(row.jscpd_renamed)} {_ratio(row.review, row.jscpd_renamed):>9} "
            f"{_megabytes(row.jscpd_renamed_peak_mb)} {row.dry_index:8.2f}s {row.findings:>6}"
        )
    if len(rows) >= 2:
        first, last = rows[0], rows[-1]
        growth = (last.dry_index / first.dry_index) if first.dry_index else float("nan")
        scale = last.repo_lines / first.repo_lines
        print(
            f"\nDRY lens: {growth:.1f}x the time for {scale:.1f}x the repository "
            "(the index reads and fingerprints every code file once; matching grows with the added lines)."
        )
    for row in rows:
        verdicts = [
            f"builtin/git diff {row.review / row.git_diff:.1f}x (target <= {TARGET_DIFF_RATIO:g}x): "
            + ("met" if row.review / row.git_diff <= TARGET_DIFF_RATIO else "NOT met"),
            f"peak {row.review_peak_mb:.0f} MB (target < {MEMORY_LIMIT_MB} MB): "
            + ("met" if row.review_peak_mb < MEMORY_LIMIT_MB else "NOT met"),
        ]
        if row.jscpd:
            verdicts.append("faster than jscpd: " + ("met" if row.review < row.jscpd else "NOT met"))
        print(f"{row.repo_lines} lines: " + "; ".join(verdicts))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--small", action="store_true", help="small sizes, to check the benchmark works")
    parser.add_argument(
        "--sizes", type=int, nargs="+", help="repository sizes in lines (default 100000 500000)"
    )
    parser.add_argument("--added", type=int, help="lines the branch adds (default 20000)")
    parser.add_argument("--no-jscpd", action="store_true", help="skip the jscpd comparison")
    arguments = parser.parse_args()
    sizes = arguments.sizes or ([20_000, 60_000] if arguments.small else [100_000, 500_000])
    added = arguments.added or (2_000 if arguments.small else 20_000)
    jscpd = None if arguments.no_jscpd else ensure_jscpd()
    rows = []
    with tempfile.TemporaryDirectory(prefix="reviewgate-bench-") as temporary:
        for size in sizes:
            print(f"building and measuring a {size}-line repository with {added} added lines ...", flush=True)
            rows.append(measure(Path(temporary), size, added, jscpd))
    report(rows)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
