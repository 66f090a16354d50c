"""The README's quick start is true: its sample output is what `reviewgate run` prints on the
change it describes, in a clone whose default branch is `master` (commit ids and timings aside)."""

from __future__ import annotations

import re
from pathlib import Path

from testing.cli import run_cli
from testing.repo import commit, git

README = Path(__file__).resolve().parents[1] / "README.md"
LOADER = ("import json\n\n\ndef load_discounts(path):\n    try:\n        with open(path) as handle:\n"
          "            return json.load(handle)\n    except Exception:\n        pass\n")
LOADER_TEST = ("from shop.discounts import load_discounts\n\n\ndef test_missing_file(tmp_path):\n"
               "    assert load_discounts(tmp_path / \"none.json\") is None\n")


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
    commit(repo, {"shop/discounts.py": LOADER, "tests/test_discounts.py": LOADER_TEST}, "discounts")
    result = run_cli(repo, "run")
    assert result.returncode == 1, result.stderr
    assert normalized(result.stdout) == normalized(readme_sample())
