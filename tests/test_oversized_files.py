"""A file over the per-file size cap is kept from the model reviewers and the structural lenses,
but never from the cheap ones: its secrets, security patterns and swallowed failures are found,
and when no reviewer that can read it ran, the review is blocked."""

from __future__ import annotations

import json
import random
import re
import sys
from collections.abc import Iterable
from pathlib import Path
from types import SimpleNamespace

import pytest

from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding
from reviewgate.freeze.diff import ChangeStatus, FileChange, LineKind, parse_hunks
from reviewgate.freeze.exclusions import MAX_FILE_DIFF_BYTES
from reviewgate.reviewers.builtin.lenses.oversized import WHOLE_FILE_LIMIT, matching_pieces, pieces_of
from reviewgate.reviewers.builtin.lenses.secrets import MAY_HOLD_A_SECRET, SecretsLens
from reviewgate.reviewers.builtin.lenses.security import lens as security
from reviewgate.reviewers.builtin.lenses.security.line_rules import MAX_TEMPLATE_LINES
from reviewgate.text import lines_at
from testing.cli import run_cli
from testing.model_server import review_document
from testing.repo import make_repo

pytestmark = pytest.mark.timeout(120)

BASE = {"README.md": "# app\n", ".gitignore": ".reviewgate/\n.reviewgate-cache/\n"}
# A made-up token in GitHub's format, assembled so no scanner takes this file for a leak.
TOKEN = "gh" + "p_" + "0versized" * 4 + "Tk"
FILLER = "def helper_{n}(value):\n    return value + {n}\n\n\n"


def filler(first: int, size: int) -> str:
    parts, total, number = [], 0, first
    while total < size:
        parts.append(FILLER.format(n=number))
        total += len(parts[-1])
        number += 1
    return "".join(parts)


def line_of(text: str, needle: str) -> int:
    return text[: text.index(needle)].count("\n") + 1


def big_app() -> str:
    """565 KB of harmless code with four problems in its middle and at its end."""
    middle = (
        "import os\n\n\n"
        "def run(expression, name):\n"
        "    try:\n"
        "        os.system(f\"convert {name}\")\n"
        "        return eval(expression)\n"
        "    except Exception:\n"
        "        pass\n\n\n"
    )
    return filler(0, 300_000) + middle + filler(100_000, 265_000) + f'API = "{TOKEN}"\n'


def findings_by_rule(report: dict[str, object]) -> dict[str, list[tuple[str, int]]]:
    found: dict[str, list[tuple[str, int]]] = {}
    for item in report["findings"]:  # type: ignore[attr-defined]
        found.setdefault(item["rule"], []).append((item["path"], item["line"]))
    return found


def test_a_565_kb_file_with_four_problems_is_not_approved(tmp_path: Path) -> None:
    text = big_app()
    assert MAX_FILE_DIFF_BYTES < len(text) < WHOLE_FILE_LIMIT
    repo = make_repo(tmp_path, BASE, {"app.py": text, "tests/test_app.py": "def test_app():\n    pass\n"})
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify")
    assert result.returncode == 1, result.stdout + result.stderr
    report = result.report()
    found = findings_by_rule(report)
    assert found["security/committed-secret"] == [("app.py", line_of(text, TOKEN))]
    assert ("app.py", line_of(text, "eval(")) in found["security/eval"]
    assert ("app.py", line_of(text, "os.system")) in found["security/shell-injection"]
    assert ("app.py", line_of(text, "except Exception")) in found["correctness/swallowed-exception"]
    [excluded] = report["target"]["excluded"]
    assert excluded["path"] == "app.py" and "only the builtin line lenses read it" in excluded["reason"]
    assert TOKEN not in json.dumps(report) and TOKEN not in result.stdout


def test_a_file_of_megabytes_is_scanned_line_by_line_to_its_end(tmp_path: Path) -> None:
    text = "".join(f"const value{n} = {n};\n" for n in range(120_000)) + f'const key = "{TOKEN}";\n'
    text += "".join(f"const after{n} = {n};\n" for n in range(5_000))
    assert len(text) > 2 * WHOLE_FILE_LIMIT
    repo = make_repo(tmp_path, BASE, {"web/data.js": text})
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify")
    assert result.returncode == 1, result.stdout + result.stderr
    found = findings_by_rule(result.report())
    assert found["security/committed-secret"] == [("web/data.js", line_of(text, TOKEN))]


def test_a_file_only_the_builtin_reviewer_can_read_blocks_a_model_only_review(tmp_path: Path) -> None:
    agent = tmp_path / "agent.py"
    agent.write_text(f"import sys\nsys.stdin.read()\nprint({json.dumps(review_document())!r})\n", encoding="utf-8")
    config = (
        '[review]\nreviewers = ["agent"]\n\n[reviewer.agent]\nprovider = "command"\n'
        f"command = [{json.dumps(sys.executable)}, {json.dumps(str(agent))}]\ntimeout = 10\n\n"
        "[cache]\nenabled = false\n"
    )
    repo = make_repo(tmp_path, {**BASE, ".reviewgate.toml": config},
                     {"app.py": big_app(), "notes.txt": "small and reviewed\n"})
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify")
    assert result.returncode == 3, result.stdout + result.stderr
    report = result.report()
    assert report["verdict"] == "blocked"
    assert any(reason.startswith("app.py: over the per-file size cap") for reason in report["reasons"])


RAW_HUNKS = (
    b"@@ -1,3 +1,4 @@ def f():\n context\n-old\n+new one\n+new two\n context\n"
    b"@@ -10,2 +11,3 @@\n+x\n same\n+y\n\\ No newline at end of file\n"
)


def lines_in(pieces: list[bytes]) -> dict[int, str]:
    seen: dict[int, str] = {}
    for piece in pieces:
        for hunk in parse_hunks(piece):
            assert all(line.kind is LineKind.ADDED for line in hunk.lines)
            seen.update({line.new_line: line.text for line in hunk.lines if line.new_line is not None})
    return seen


@pytest.mark.parametrize("region_bytes", [1, 7, 30, 1 << 20])
@pytest.mark.parametrize("piece_bytes", [1, 10, 1 << 20])
def test_pieces_hold_the_added_lines_that_match_with_their_numbers_and_nothing_else(
    piece_bytes: int, region_bytes: int
) -> None:
    every_added = re.compile(r"^\+", re.MULTILINE)  # the search sees each line with its marker
    found = list(matching_pieces(RAW_HUNKS, ((every_added,),), piece_bytes=piece_bytes, region_bytes=region_bytes))
    assert lines_in(found) == {2: "new one", 3: "new two", 11: "x", 13: "y"}
    # "old" is removed and "context" on both sides: only added lines are handed on.
    found = list(matching_pieces(RAW_HUNKS, ((re.compile("two|y|old|context"),),), piece_bytes=piece_bytes,
                                 region_bytes=region_bytes))
    assert lines_in(found) == {3: "new two", 13: "y"}
    found = list(matching_pieces(RAW_HUNKS, ((re.compile("one"),),), following=5, piece_bytes=piece_bytes,
                                 region_bytes=region_bytes))
    assert lines_in(found) == {2: "new one", 3: "new two"}  # the run ends at the context line


def test_a_line_with_undecodable_bytes_keeps_its_bytes_and_its_number() -> None:
    raw = b"@@ -0,0 +1,3 @@\n+caf\xe9 = 1\n+\xff\xfe token = 2\n+plain\n"
    [piece] = matching_pieces(raw, ((re.compile("token"),),), region_bytes=4)
    assert piece == b"@@ -0,0 +2,1 @@\n+\xff\xfe token = 2\n"


@pytest.mark.parametrize("rule", range(len(security.LINE_RULES)))
def test_every_security_line_rule_needs_what_the_oversized_scan_looks_for(rule: int) -> None:
    """The scan of a file over the size cap reads only lines LINE_RULES_NEED finds something in:
    a line a rule matches that the filter missed would go unread."""
    examples = [
        "cp.exec(`rm ${name}`)", "exec(\"ls \" + dir)", 'exec.Command("sh", "-c", fmt.Sprintf("x %s", a))',
        'Runtime.getRuntime().exec("ls " + dir)', "exec(command, done)", "Process p = r.exec(cmd + input);",
        'new ProcessBuilder("sh", "-c", "ping " + host)', "spawn('sh', ['-c', command])", "db.query(`SELECT * FROM t WHERE id = ${id}`)",
        'db.Query(fmt.Sprintf("SELECT %s", a))', 'stmt.executeQuery("SELECT " + id)', "stmt.executeQuery(query);", "statement.addBatch(sql)", "db.QueryRowContext(ctx, query)",
        "eval(code)",
        "new Function(body)", "rejectUnauthorized: false", "NODE_TLS_REJECT_UNAUTHORIZED = '0'",
        "InsecureSkipVerify: true", "new NoopHostnameVerifier()", "ALLOW_ALL_HOSTNAME_VERIFIER",
    ]
    pattern = security.LINE_RULES[rule].pattern
    matched = [line for line in examples if pattern.search(line)]
    assert matched, "an example for every rule"
    assert [line for line in matched if not security.LINE_RULES_NEED.search(line)] == []


# Lines the secrets lens flags, spelled as the case-blind match still reads them: the Kelvin sign
# and the long s are the letters k and s to it. The filter searches lowered text for speed.
FLAGGED_LINES = [f'API = "{TOKEN}"', 'db_password = "Zx81kQ2mVb7LpW3r"', 'api_\u212aey = "Zx81kQ2mVb7LpW3r"',
                 'db_pa\u017f\u017fword = "Zx81kQ2mVb7LpW3r"', 'T\u0130KEN_TOKEN = "Zx81kQ2mVb7LpW3r"',
                 "-----BEGIN RSA " + "PRIVATE KEY-----", 'aws = "AKIA' + "Q" * 16 + '"']


@pytest.mark.parametrize("line", FLAGGED_LINES)
def test_every_line_the_secrets_lens_can_flag_passes_its_filter(line: str) -> None:
    assert SecretsLens()._secret_in(line) is not None
    harmless = "".join(f"+value_{number} = {number}\n" for number in range(50))
    raw = f"@@ -0,0 +1,101 @@\n{harmless}+{line}\n{harmless}".encode()
    [piece] = matching_pieces(raw, MAY_HOLD_A_SECRET, region_bytes=300)
    assert piece == f"@@ -0,0 +51,1 @@\n+{line}\n".encode()


def _mixed_hunks(seed: int) -> bytes:
    """A modified file's hunk text of about 1.5 MB: context, removed and added lines, lines that
    name keys without holding one, and every kind of line a line lens flags, some several times
    within a few lines and a multi-line query template."""
    generator = random.Random(seed)
    flagged = [f'const token = "{TOKEN}";', 'const api_key = "Zx81kQ2mVb7LpW3r";',
               "db.query(`SELECT name\n  FROM users\n  WHERE id = ${id}`);", "eval(code);",
               "https.request({ rejectUnauthorized: false });", "// api_key = 'Zx81kQ2mVb7LpW3r' in a comment",
               'exec("ls " + dir);']
    plain = ["const key = value;", "const keys = Object.keys(map);", "function f(a) {", "  return a + 1;", "}"]
    hunks, old_line, new_line = [], 1, 1
    while sum(map(len, hunks)) < 1_500_000:
        body, old_count, new_count = [], 0, 0
        for _ in range(generator.randint(1, 400)):
            kind = generator.choices(" -+", weights=(2, 1, 6))[0]
            text = generator.choice(flagged) if generator.random() < 0.01 else generator.choice(plain)
            for line in text.split("\n"):
                body.append(f"{kind}{line}\n")
                old_count += kind != "+"
                new_count += kind != "-"
        hunks.append(f"@@ -{old_line},{old_count} +{new_line},{new_count} @@ context\n" + "".join(body))
        gap = generator.randint(1, 50)
        old_line, new_line = old_line + old_count + gap, new_line + new_count + gap
    return "".join(hunks).encode()


@pytest.mark.parametrize("seed", [1, 2])
def test_the_oversized_scan_finds_what_the_lenses_find_reading_every_line(seed: int) -> None:
    """The pieces hold only the lines the filters let through; the line lenses must find the same
    findings, at the same lines, as when they read the whole file."""
    change = FileChange("web/app.js", "web/app.js", ChangeStatus.MODIFIED, raw_hunks=_mixed_hunks(seed))

    def request_for(file: FileChange) -> ReviewRequest:
        # No head to read the whole file from: no request chain is followed, on either side.
        return SimpleNamespace(target=SimpleNamespace(files=(file,), test_inputs=()),  # type: ignore[return-value]
                               head=SimpleNamespace(read_text=lambda path: None))

    def found(findings: Iterable[Finding]) -> list[tuple[str, int | None, str]]:
        return sorted((item.rule or "", item.line, item.title) for item in findings)

    secrets_whole = found(SecretsLens().check(request_for(change)))
    secrets_pieces = found(item for piece in pieces_of(change, MAY_HOLD_A_SECRET)
                           for item in SecretsLens().check(request_for(piece)))
    assert len(secrets_whole) > 10 and secrets_pieces == secrets_whole
    security_lens = security.SecurityLens()
    security_whole = found(security_lens.check(request_for(change)))
    security_pieces = found(item for piece in pieces_of(change, ((security.LINE_RULES_NEED,),),
                                                        following=MAX_TEMPLATE_LINES)
                            for item in security_lens.check(request_for(piece)))
    assert {rule for rule, _, _ in security_whole} >= {"security/sql-injection", "security/eval", "security/tls-verification-off"}
    assert security_pieces == security_whole


def test_lines_at_numbers_lines_as_git_does_without_splitting_the_file() -> None:
    data = b"one\r\ntwo\x0cstill two\n\nfour caf\xe9\nfive"
    assert lines_at(data, 1, 2) == ["one", "two\x0cstill two"]  # a form feed ends no line
    assert lines_at(data, 3, 5) == ["", "four caf\ufffd", "five"]
    assert lines_at(data, 5, 9) == ["five"] and lines_at(data, 6, 7) == []
    big = b"".join(b"line %d\n" % number for number in range(1, 300_001))
    assert lines_at(big, 299_999, 300_001) == ["line 299999", "line 300000"]


def test_a_suppression_in_a_huge_file_is_read_from_its_own_two_lines(tmp_path: Path) -> None:
    """The secret at the end of a 3 MB file is suppressed on the line above it: the lookup reads
    those lines, not the whole file split into lines (which cost 300 MB for a 60 MB file)."""
    text = filler(0, 3_000_000) + f'# reviewgate: ignore[security/committed-secret] a test fixture\nAPI = "{TOKEN}"\n'
    repo = make_repo(tmp_path, BASE, {"app.py": text})
    result = run_cli(repo.path, "run", "--base", "main", "--no-verify")
    assert result.returncode == 0, result.stdout + result.stderr
    [secret] = [item for item in result.report()["findings"] if item["rule"] == "security/committed-secret"]
    assert secret["line"] == line_of(text, TOKEN) and secret["dismissed"] == "suppressed: a test fixture"
