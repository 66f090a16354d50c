"""Security where the diff creates the exposure, and committed secrets in any text file."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.secrets import SecretsLens, entropy
from testing.lenses import review_change


def _found(findings: list) -> list[tuple[str, str, int | None, str]]:  # type: ignore[type-arg]
    return sorted(
        (item.rule, item.path, item.line, item.severity.value)
        for item in findings
        if item.rule.startswith("security/")
    )


def test_python_exposures_on_added_lines(tmp_path: Path) -> None:
    source = """import os
import subprocess
import yaml


def run(cmd, cursor, name, data):
    subprocess.Popen("ls %s" % cmd, shell=True)
    os.popen("cat {}".format(name))
    cursor.executemany("DELETE FROM t WHERE id = " + name, [])
    exec(data)
    yaml.load(data, Loader=yaml.FullLoader)
    yaml.safe_load(data)
    subprocess.run("ls", shell=True)
    cursor.execute("SELECT 1")
    eval("1 + 1")
"""
    findings = review_change(tmp_path, {"m.py": "\n"}, {"m.py": source})
    assert _found(findings) == [
        ("security/eval", "m.py", 10, "major"),
        ("security/shell-injection", "m.py", 7, "major"),
        ("security/shell-injection", "m.py", 8, "major"),
        ("security/sql-injection", "m.py", 9, "major"),
        ("security/unsafe-yaml", "m.py", 11, "major"),
    ]


def test_commented_code_and_strings_do_not_fire_in_c_like(tmp_path: Path) -> None:
    source = (
        "// agent = new https.Agent({ rejectUnauthorized: false });\n"
        "export const doc = 'set rejectUnauthorized to true';\n"
    )
    assert _found(review_change(tmp_path, {"README.md": "x\n"}, {"src/a.js": source})) == []


@pytest.mark.parametrize(
    "line",
    [
        'slack = "xoxb-1234567890-abcdefghijkl"',  # fake, made up for the test
        'key = "AIzaSyA1b2C3d4E5f6G7h8I9j0KlMnOpQrStUvW"',  # fake, made up for the test
        "-----BEGIN OPENSSH PRIVATE KEY-----",  # fake, made up for the test
        'client_secret: "Zk8#pQ2!xV9$mL4&wR7"',  # fake, made up for the test
        'const apiKey = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz012345";',  # fake, made up for the test
    ],
)
def test_secret_shapes(line: str) -> None:
    assert SecretsLens()._secret_in(line) is not None


@pytest.mark.parametrize(
    "line",
    [
        'password = "correcthorse"',  # low entropy, a word
        'token = os.environ["GITHUB_TOKEN"]',
        'secret_name = "prod/database/password-v2"',
        'password = "${DB_PASSWORD_FROM_VAULT}"',
        'api_key = "<your-api-key-goes-here>"',
        'token_url = "https://auth.example.org/oauth2/token"',
        'aws_key = "AKIAIOSFODNN7EXAMPLE"',
    ],
)
def test_not_secrets(line: str) -> None:
    assert SecretsLens()._secret_in(line) is None


def test_secret_is_a_blocker_in_any_text_file_and_not_in_named_fixtures(tmp_path: Path) -> None:
    token = "ghp_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"  # fake, made up for the test
    findings = review_change(
        tmp_path,
        {"README.md": "x\n"},
        {
            ".env.example": f"GITHUB_TOKEN={token}\n",
            "tests/test_auth.py": f'FAKE_TOKEN = "{token}"\n',
            "tests/test_real.py": f'HEADERS = {{"Authorization": "{token}"}}\n',
        },
    )
    assert _found(findings) == [
        ("security/committed-secret", ".env.example", 1, "blocker"),
        ("security/committed-secret", "tests/test_real.py", 1, "blocker"),
    ]


def test_entropy() -> None:
    assert entropy("aaaaaaaa") == 0
    assert entropy("x9$Kq2!vLm7#Tz4pWr8") > 4
