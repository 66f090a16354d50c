"""Security where the diff creates the exposure, and committed secrets in any text file."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.lenses.secrets import SecretsLens, entropy
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
    # No request input reaches the shell, SQL and eval sinks here: found, minor (request_chain.py).
    assert _found(findings) == [
        ("security/eval", "m.py", 10, "minor"),
        ("security/shell-injection", "m.py", 7, "minor"),
        ("security/shell-injection", "m.py", 8, "minor"),
        ("security/sql-injection", "m.py", 9, "minor"),
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


@pytest.mark.parametrize(
    "line",
    [
        'const tokenAlphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"',
        'TOKEN_CHARS = "0123456789abcdef"',
        'secret_charset = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567"',  # base32
        'apiKeyAlphabet := "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz"',  # base58
        'private_key_table = "zyxwvutsrqponmlkjihgfedcba"',
        'secret_value = "0123456789abcdef0123456789ABCDEF"',  # hex digits of both cases: runs, with repeats
        'api_key_value = "[A-Za-z0-9_-]{32}"',  # a regular expression's character class
        "token_value = 'A-Za-z0-9+/='",  # ranges
        # A shuffled table: 64 distinct characters, no runs; a random key that long repeats some.
        'secretTable = "Xq7Lm2Zp9Rt4Wv8Ks1Nb6Hc3Jd5Fg0Ya-Ue_QiOoPrEfTuIwSxAyBzCnDkGlMhVj"',
    ],
)
def test_alphabets_charsets_and_tables_are_not_secrets(line: str) -> None:
    assert SecretsLens()._secret_in(line) is None


_BASE64URL = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
# The same alphabets and tables as each language declares them: a constant, a struct field, a
# byte string, a character array, a regular expression's class, hex digits of both cases.
_ALPHABET_FILES = {
    "token/alphabet.go": f'package token\n\nconst tokenAlphabet = "{_BASE64URL}"\n\nvar secretChars = `{_BASE64URL}`\n'
    'var SecretHexTable = "0123456789abcdef0123456789ABCDEF"\n',
    "app/tokens.py": f'TOKEN_ALPHABET = "{_BASE64URL}"\nSECRET_CHARSET = "[A-Za-z0-9_-]{{32}}"\n'
    'token_digits = "0123456789abcdef0123456789ABCDEF"\n',
    "src/tokens.js": f'export const TOKEN_ALPHABET = "{_BASE64URL}";\nexport const config = {{ secretCharset: "A-Za-z0-9_-" }};\n',
    "src/main/java/app/Tokens.java": "package app;\n\nclass Tokens {\n"
    f'    private static final char[] TOKEN_CHARS = "{_BASE64URL}".toCharArray();\n'
    '    private static final String SECRET_PATTERN_CLASS = "[a-zA-Z0-9]{40}";\n}\n',
    "src/tokens.rs": f'pub const TOKEN_ALPHABET: &str = "{_BASE64URL}";\nstatic SECRET_TABLE: &[u8; 64] = b"{_BASE64URL}";\n'
    'pub const TOKEN_HEX: &str = "0123456789abcdef0123456789ABCDEF";\n',
}


def test_alphabets_in_every_language_are_not_committed_secrets(tmp_path: Path) -> None:
    findings = review_change(tmp_path, {"README.md": "x\n"}, _ALPHABET_FILES)
    assert [item for item in findings if item.rule == "security/committed-secret"] == []


def test_a_random_key_beside_the_alphabets_still_blocks(tmp_path: Path) -> None:
    key = "q8Zr2LpX9vKm4TwY7nBd3HsJ6fGc1RxQ"  # fake, made up for the test: random, repeats Q/x
    branch = {**_ALPHABET_FILES, "token/key.go": f'package token\n\nconst apiKey = "{key}"\n'}
    findings = review_change(tmp_path, {"README.md": "x\n"}, branch)
    assert _found(findings) == [("security/committed-secret", "token/key.go", 3, "blocker")]


@pytest.mark.parametrize(
    "line",
    [
        'api_key = "q8Zr2LpX9vKm4TwY7nBd3HsJ6fGc1RxQ"',  # fake, made up for the test: random, repeats Q/x
        'secret = "Ab3xK9mP2qL7vN4w"',  # fake, made up for the test: distinct, but random order
        'token = "ABCDEFGHJ4kq9ZxP7mW2bT8vL3nR6sY1"',  # fake, made up for the test: an alphabet prefix, then noise
    ],
)
def test_random_keys_that_look_like_alphabets_still_fire(line: str) -> None:
    assert SecretsLens()._secret_in(line) is not None


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


def test_generic_values_where_examples_live_are_minor_and_provider_formats_block(tmp_path: Path) -> None:
    generic = "5f352379324c22463451387a0aec5d2f"  # made up for the test: hex, no issuer's format
    token = "ghp_Zq8VxT2mLk5NwR7yBc3HdF9gJs1PaE4uKo6W"  # fake, made up for the test
    findings = review_change(
        tmp_path,
        {"README.md": "x\n"},
        {
            "docs/deploy.rst": f'    export APP_SECRET_KEY="{generic}"\n',
            "guide/setup.md": f"    export GITHUB_TOKEN={token}\n",
            "tests/test_client.py": f'AUTH_TOKEN = "{generic}"\n',
            "app/settings.py": f'# SECRET_KEY = "{generic}"\nSECRET_KEY = "{generic}"\n',
        },
    )
    assert _found(findings) == [
        ("security/committed-secret", "app/settings.py", 1, "minor"),
        ("security/committed-secret", "app/settings.py", 2, "blocker"),
        ("security/committed-secret", "docs/deploy.rst", 1, "minor"),
        ("security/committed-secret", "guide/setup.md", 1, "blocker"),
        ("security/committed-secret", "tests/test_client.py", 1, "minor"),
    ]
    for finding in findings:
        assert generic not in finding.body and token[4:] not in finding.body  # evidence, never the value
        assert "Matched:" in finding.body


def test_sql_needs_a_statement_not_a_method_named_query(tmp_path: Path) -> None:
    script = """export async function a(http, db, term, id) {
  await http.query(`${base}/search?q=${term}`);
  await db.query(`select the best ${term}`);
  await db.query(`
    DELETE FROM sessions
    WHERE user_id = ${id}`);
}
"""
    python = """def b(cursor, name, client):
    client.execute(f"with {name} in mind")
    cursor.execute(f"DROP TABLE {name}")
"""
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/a.js": script, "app/b.py": python})
    assert _found(findings) == [
        ("security/sql-injection", "app/b.py", 3, "minor"),
        ("security/sql-injection", "src/a.js", 4, "minor"),
    ]
    assert all("the formatted text is a statement" in item.body for item in findings if item.rule.endswith("sql-injection"))
