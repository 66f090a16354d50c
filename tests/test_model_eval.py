"""benchmarks/model_eval.py end to end: a subprocess over a directory of labelled cases, against a
real local model server whose reviews and second looks are scripted per request."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

from testing.cli import clean_environment
from testing.model_server import ModelServer, Reply, finding, review_document, verdict

REPO_ROOT = Path(__file__).resolve().parent.parent
CASES = '''
[[case]]
name = "eval-divide"
[case.base]
"app/a.py" = "def add(a, b):\\n    return a + b\\n"
[case.branch]
"app/a.py" = "def add(a, b):\\n    return a + b\\n\\n\\ndef ratio(a, b):\\n    return a / b\\n"
[[case.expect]]
rule = "correctness/division"
path = "app/a.py"
line = 6

[[case]]
name = "eval-lookalike"
[case.base]
"app/b.py" = "def one():\\n    return 1\\n"
[case.branch]
"app/b.py" = "def one():\\n    return 1\\n\\n\\ndef two():\\n    return 2\\n"
'''


def _eval(tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, str(REPO_ROOT / "benchmarks" / "model_eval.py"), *args],
                          cwd=tmp_path, env=clean_environment(), capture_output=True, text=True, timeout=120,
                          check=False)


def _row(output: str, label: str) -> list[str]:
    line = next(line for line in output.splitlines() if line.startswith(label))
    return line[len(label):].split()


def test_model_eval_prints_precision_and_recall_with_and_without_the_second_look(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "eval.toml").write_text(CASES, encoding="utf-8")
    reviews = [
        # Case one: the labelled bug, one line off (within the tolerance). Case two: a false alarm.
        Reply(review=review_document([finding("app/a.py", 5, title="Division by zero in ratio")])),
        Reply(review=review_document([finding("app/b.py", 6, title="two() is untested", severity="blocker")])),
    ]
    verdicts = [Reply(review=verdict("confirmed")), Reply(review=verdict("refuted", "two() is trivial"))]
    with ModelServer(reviews, verdicts=verdicts) as server:
        config = tmp_path / "eval.toml"
        table = {"provider": "openai", "model": "test-model", "base_url": f"{server.url}/v1", "api_key_env": "",
                 "timeout": 2, "retries": 0, "input_price": 2.0, "output_price": 8.0}
        config.write_text('[review]\nreviewers = ["llm"]\n\n[reviewer.llm]\n'
                          + "".join(f"{key} = {json.dumps(value)}\n" for key, value in table.items()), encoding="utf-8")
        completed = _eval(tmp_path, "--config", str(config), "--cases", str(cases), "--jobs", "1")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    output = completed.stdout
    print(output)
    assert "model eval: openai test-model, 2 of 2 case(s) reviewed" in output
    # precision recall reported true expected requests input output cost
    assert _row(output, "review alone") == ["0.500", "1.000", "2", "1", "1", "2", "2000", "200", "0.0056"]
    assert _row(output, "with second look") == ["1.000", "1.000", "1", "1", "1", "2", "2000", "200", "0.0056"]
    assert len(server.review_posts()) == 2 and len(server.verification_posts()) == 2


def test_model_eval_reports_a_case_the_model_could_not_review(tmp_path: Path) -> None:
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "eval.toml").write_text(CASES, encoding="utf-8")
    with ModelServer([Reply(status=401)]) as server:
        completed = _eval(tmp_path, "--provider", "openai", "--model", "test-model", "--base-url", f"{server.url}/v1",
                          "--api-key-env", "", "--cases", str(cases), "--timeout", "2")
    assert completed.returncode == 0, completed.stderr
    assert "0 of 2 case(s) reviewed" in completed.stdout
    assert len(re.findall(r"^not reviewed: eval-\w+: HTTP 401", completed.stdout, re.MULTILINE)) == 2


def test_model_eval_usage_errors_name_the_flag(tmp_path: Path) -> None:
    completed = _eval(tmp_path, "--provider", "openai")
    assert completed.returncode == 2 and "give --config FILE, or --provider and --model" in completed.stderr
    completed = _eval(tmp_path, "--config", "missing.toml")
    assert completed.returncode == 2 and "--config missing.toml: no such file" in completed.stderr
    completed = _eval(tmp_path, "--provider", "openai", "--model", "m", "--cases", str(tmp_path))
    assert completed.returncode == 2 and f"--cases {tmp_path}: no *.toml case files there" in completed.stderr


def test_model_eval_with_the_stand_in_reports_what_a_changed_line_costs(tmp_path: Path) -> None:
    """The stand-in reads the context it is sent: a new function repeating a line of an existing
    one the diff calls is a reuse finding, because that definition is among the excerpts."""
    cases = tmp_path / "cases"
    cases.mkdir()
    (cases / "reuse.toml").write_text('''
[[case]]
name = "stand-in-reuse"
[case.base]
"lib/total.py" = "def order_total(items):\\n    return sum(item.price * item.count for item in items)\\n"
[case.branch]
"app/cart.py" = "from lib.total import order_total\\n\\n\\ndef cart_total(items):\\n    return sum(item.price * item.count for item in items)\\n\\n\\nprint(order_total([]))\\n"
[[case.expect]]
path = "app/cart.py"
line = 5
''', encoding="utf-8")
    completed = _eval(tmp_path, "--stand-in", "--cases", str(cases), "--jobs", "1")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    output = completed.stdout
    assert "model eval: openai stand-in, 1 of 1 case(s) reviewed" in output
    assert _row(output, "review alone")[:5] == ["1.000", "1.000", "1", "1", "1"]
    sent = re.search(r"sent by the review: ([\d,]+) characters \(~([\d,]+) tokens\) for 8 changed lines: "
                     r"(\d+) characters, (\d+) tokens per changed line", output)
    assert sent is not None, output
    characters = int(sent.group(1).replace(",", ""))
    assert int(sent.group(3)) == round(characters / 8) and int(sent.group(4)) == round(characters / 32)


def test_the_stand_in_reads_the_other_files_diffs_of_a_packed_request(tmp_path: Path) -> None:
    """Two directories add the same function: both files' chunks are one request, whose context
    leaves out the lines its own diff shows, so the stand-in finds the copy in the other file's
    diff (a finding on each copy; the case labels one), and never a file's line against itself."""
    cases = tmp_path / "cases"
    cases.mkdir()
    body = "def shipping_cost(order):\\n    return order.weight_in_grams * order.rate_per_gram / 1000\\n"
    (cases / "copy.toml").write_text(f'''
[[case]]
name = "stand-in-copy"
[case.base]
"README.md" = "base\\n"
[case.branch]
"billing/cost.py" = "{body}"
"shipping/cost.py" = "{body}"
[[case.expect]]
path = "shipping/cost.py"
line = 2

[[case]]
name = "stand-in-no-copy"
[case.base]
"README.md" = "base\\n"
[case.branch]
"billing/cost.py" = "{body}"
"shipping/rate.py" = "def rate_for(zone):\\n    return {{'near': 1, 'far': 3}}.get(zone, 5)\\n"
''', encoding="utf-8")
    completed = _eval(tmp_path, "--stand-in", "--cases", str(cases), "--jobs", "1")
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert _row(completed.stdout, "review alone")[:5] == ["0.500", "1.000", "2", "1", "1"]
