"""The README's quick start is true: its sample output is what `reviewgate run` prints on the
change it describes, in a clone whose default branch is `master` (commit ids and timings aside)."""

from __future__ import annotations

import re
from pathlib import Path

from testing.cli import run_cli
from testing.repo import commit, git

README = Path(__file__).resolve().parents[1] / "README.md"
LOOKUP = ("import sqlite3\n\n\ndef coupon_percent(database: sqlite3.Connection, request):\n"
          "    code = request.args[\"code\"]\n"
          "    row = database.execute(f\"SELECT percent FROM coupons WHERE code = '{code}'\").fetchone()\n"
          "    return row[0] if row else 0\n")
LOOKUP_TEST = ("import sqlite3\nfrom types import SimpleNamespace\n\nfrom shop.discounts import coupon_percent\n\n\n"
               "def test_unknown_code():\n"
               "    database = sqlite3.connect(\":memory:\")\n"
               "    database.execute(\"CREATE TABLE coupons (code TEXT, percent INTEGER)\")\n"
               "    assert coupon_percent(database, SimpleNamespace(args={\"code\": \"none\"})) == 0\n")

def readme_sample() -> str:
    text = README.read_text(encoding="utf-8")
    assert text.startswith("# reviewgate\n\n```sh\n")
    first_command = text.split("```sh\n", 1)[1].splitlines()[0]
    assert re.search(r"reviewgate run\s+#", first_command), "the first command is a plain `reviewgate run`"
    sample = re.search(r"`reviewgate run` prints \(exit code 1\):\n\n```\n(.*?)```", text, re.DOTALL)
    assert sample is not None
    return sample.group(1)


def normalized(text: str) -> str:
    return re.sub(r"\b[0-9a-f]{12}\b", "SHA", re.sub(r"\d+\.\ds\)", "TIME)", text))


def test_the_readme_sample_is_what_the_first_run_prints(tmp_path: Path) -> None:
    repo = tmp_path / "shop"
    repo.mkdir()
    git(repo, "init", "-q", "-b", "master")
    commit(repo, {"shop/__init__.py": "", "shop/cart.py": "def total(prices):\n    return sum(prices)\n",
                  "tests/test_cart.py": "from shop.cart import total\n\n\ndef test_total():\n"
                                        "    assert total([1, 2]) == 3\n"}, "cart")
    git(repo, "checkout", "-q", "-b", "discount")
    commit(repo, {"shop/discounts.py": LOOKUP, "tests/test_discounts.py": LOOKUP_TEST}, "discounts")
    result = run_cli(repo, "run")
    assert result.returncode == 1, result.stderr
    assert normalized(result.stdout) == normalized(readme_sample())
