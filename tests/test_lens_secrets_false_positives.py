"""Committed-secret look-alikes that whole-tree scans of released projects found, each beside a
real-looking key that must still be reported."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.reviewers.builtin.lenses.secrets import SecretsLens
from testing.lenses import review_change

# A made-up key body, assembled so no scanner takes this file for a leak.
_BODY = "MIIEow" + "IBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun"
_HEADER = "-----BEGIN RSA " + "PRIVATE KEY-----"
_FOOTER = "-----END RSA " + "PRIVATE KEY-----"
_PEM = f"{_HEADER}\n{_BODY}\n{_BODY[:40]}\n{_FOOTER}\n"


def _secrets(findings: list) -> list[tuple[str, int | None, str]]:  # type: ignore[type-arg]
    return sorted(
        (item.path, item.line, item.severity.value) for item in findings if item.rule == "security/committed-secret"
    )


def test_a_private_key_header_without_a_body_is_the_encoder_not_a_key(tmp_path: Path) -> None:
    encoder = (
        "package tls\n\nfun StringBuilder.pem(encoded: String) {\n"
        f'    append("{_HEADER}\\n")\n    append(encoded)\n    append("{_FOOTER}\\n")\n}}\n'
    )
    inline = f'KEY = "{_HEADER}\\n{_BODY}\\n{_FOOTER}"\n'
    findings = review_change(
        tmp_path,
        {"README.md": "x\n"},
        {"src/main/kotlin/tls/Pem.kt": encoder, "app/deploy.pem": _PEM, "app/keys.py": inline},
    )
    assert _secrets(findings) == [("app/deploy.pem", 1, "blocker"), ("app/keys.py", 1, "blocker")]


def test_a_private_key_in_test_or_example_code_is_minor_and_in_product_code_blocks(tmp_path: Path) -> None:
    base = {"README.md": "x\n", "pyproject.toml": '[project]\nname = "app"\n[tool.pytest.ini_options]\ntestpaths = ["t/unit"]\n'}
    findings = review_change(
        tmp_path,
        base,
        {
            "examples/ssl/server.key": _PEM,
            "t/unit/security/__init__.py": f'KEY1 = """{_PEM}"""\n',
            "app/server.key": _PEM,
            "app/settings.py": 'GITHUB_TOKEN = "gh' + 'p_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"\n',
            "examples/client.py": 'GITHUB_TOKEN = "gh' + 'p_1a2B3c4D5e6F7g8H9i0JkLmNoPqRsTuVwXyZ"\n',
        },
    )
    assert _secrets(findings) == [
        ("app/server.key", 1, "blocker"),
        ("app/settings.py", 1, "blocker"),
        ("examples/client.py", 1, "blocker"),  # a token in an issuer's format may be live anywhere
        ("examples/ssl/server.key", 1, "minor"),
        ("t/unit/security/__init__.py", 1, "minor"),
    ]


def test_a_generic_value_in_example_code_is_minor(tmp_path: Path) -> None:
    line = 'token = "ER34gsSGGS34XCBKd7u"\n'  # made up for the test
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"examples/fake_server.py": line, "app/client.py": line})
    assert _secrets(findings) == [("app/client.py", 1, "blocker"), ("examples/fake_server.py", 1, "minor")]


@pytest.mark.parametrize(
    "line",
    [
        'requires_csrf_token.__name__ = "requires_csrf_token"',
        'const MODULE_REFERENCE_TOKEN = "__WEBPACK_MODULE_REFERENCE__";',
        '"xox' + 'p-XXXXXXXXXX-XXXXXXXXXX-XXXXXXXXXXX-XXXXXXXXXXXXXXXXXXXXXXXXXXXXXXXX",',
        'aws_key = "AKIA' + '0' * 16 + '"',
        'refresh_token="demo_refresh_token_12345",',
        'api_key = "fake-Zq8VxT2mLk5NwR7y"',
        'secret_key.__name__ = "secret_key_setting"',  # the value names the object, not a secret
        'password_reset_view = "password_reset_confirm"',  # a view's name, words of its variable's
        # mongodb 7.9.1 `src/constants.ts:80` and typeorm 1.1.3 `driver/mongodb/typings.d.ts:1077`: an event's name
        "export const RESUME_TOKEN_CHANGED = 'resumeTokenChanged' as const;",
        # botocore 1.44.18's paginators and examples: a field's name, a path to one, an elided value
        '"input_token": "ExclusiveStartShardId",',  # `dynamodb/2012-08-10/paginators-1.json:4` has ...BackupArn
        '"output_token": "DistributionList.NextMarker",',  # `cloudfront/2020-05-31/paginators-1.json:12`
        '"output_token": "StreamDescription.Shards[-1].ShardId",',  # `kinesis/2013-12-02/paginators-1.json`: indexed
        '"PurchaseToken": "eyJ2IjoiMSIsInMiOjEsImMiOi...",',  # `ec2/2016-11-15/examples-1.json:2801`
        # paramiko 5.1.0 `paramiko/common.py:166`: a message's name in kebab case
        'MSG_USERAUTH_GSSAPI_TOKEN: "userauth-gssapi-token",',
        '"PasswordLastUsed": "2016-09-08T21:47:36Z",',  # botocore `iam/2010-05-08/examples-1.json:1155`
        # a Rails application's translations (`config/locales/th.yml`, `ja.yml`): a sentence, no key
        '    reset_password: "ตั้งรหัสผ่านใหม่"',
        '    instructions_to_reset_password: "下のフォームを入力してからパスワードの再設定方法の説明がメールで送信されます。"',
    ],
)
def test_identifiers_and_placeholders_are_not_secrets(line: str) -> None:
    assert SecretsLens()._secret_in(line) is None


@pytest.mark.parametrize(
    "line",
    [
        'csrf_token = "requires_Csrf_token9"',  # made up: mixed case and a digit, not an identifier
        '"xox' + 'p-1234567890-abcdefghijkl",',  # made up for the test
        'aws_key = "AKIA' + 'Q7XZ2M4N6P8R3T5V' + '"',  # made up for the test
        'refresh_token = "Zq8VxT2mLk5NwR7yBc3H"',  # made up for the test
        'SMTP_PASSWORD = "tangerine_elephant_violin_cactus"',  # made up: a passphrase of words
        'passphrase = "purple_monkey_dishwasher"',  # made up for the test
        'DB_PASSWORD = "purpleMonkeyDishwasher"',  # made up: camelCase words under a password's name
        "const RESUME_TOKEN = 'resumeToken7Changed';",  # made up: a digit among the words
        'api_token = "KqZtVbNmRwXyPlDs"',  # made up: letters alone, cases alternating in ones and twos
        'token = "KqZtVb.NmRwXyPlDs"',  # made up: the same around a dot
        'SMTP_PASSWORD = "tangerine-elephant-violin-cactus"',  # made up: a passphrase of words, hyphened
        'session_token = "Zq8VxT2mLk5NwR7yBc3H.."',  # made up: two dots are no elision
        'api_key = "2016-09-08T21:47:36Zq8VxT2mLk"',  # made up: a date followed by more is no date
        '    reset_password: "Zq8VxT2mLk5NwR7yBc3H"',  # made up: the same name with an ASCII key
    ],
)
def test_look_alikes_with_a_key_shape_still_fire(line: str) -> None:
    assert SecretsLens()._secret_in(line) is not None


def test_a_private_key_in_test_support_code_only_tests_import_is_minor(tmp_path: Path) -> None:
    # urllib3 2.8.0 `dummyserver/certs/server.key` and `cacert.key`: its test server's keys, the
    # server's package imported by `test/with_dummyserver/test_https.py` and other tests only.
    branch = {
        "dummyserver/certs/server.key": _PEM,
        "dummyserver/testcase.py": "from test import LONG_TIMEOUT\n\n\nclass HTTPSDummyServerTestCase:\n    timeout = LONG_TIMEOUT\n",
        "test/__init__.py": "LONG_TIMEOUT = 10\n",
        "test/with_dummyserver/test_https.py": "from dummyserver.testcase import HTTPSDummyServerTestCase\n",
        # The look-alikes: a server package the product imports too, a key beside no code.
        "server/certs/server.key": _PEM,
        "server/app.py": "def serve():\n    return None\n",
        "main.py": "from server.app import serve\n\nserve()\n",
        "tests/test_server.py": "from server.app import serve\n",
        "certs/ca.key": _PEM,
    }
    findings = review_change(tmp_path, {"README.md": "x\n"}, branch)
    assert _secrets(findings) == [
        ("certs/ca.key", 1, "blocker"),
        ("dummyserver/certs/server.key", 1, "minor"),
        ("server/certs/server.key", 1, "blocker"),
    ]


def test_a_value_under_an_example_key_of_a_data_file_is_minor(tmp_path: Path) -> None:
    # botocore 1.44.18 `botocore/data/waf/2015-08-24/examples-1.json:7`: its API examples, 89
    # blockers of made-up change tokens before; an OpenAPI document's example response.
    # botocore's examples run 1,500 lines below their key: 200 operations come first here.
    earlier = "".join(f'    "Operation{index}": [\n      {{}}\n    ],\n' for index in range(200))
    examples = (
        '{\n  "version": "1.0",\n  "examples": {\n' + earlier + '    "CreateRule": [\n      {\n        "input": {\n'
        '          "ChangeToken": "abcd12f2-46da-4fdb-b8d5-fbd4c466928f",\n          "Name": "rule"\n'
        "        }\n      }\n    ]\n  }\n}\n"
    )
    token_line = examples.splitlines().index('          "ChangeToken": "abcd12f2-46da-4fdb-b8d5-fbd4c466928f",') + 1
    openapi = (
        "paths:\n  /token:\n    post:\n      responses:\n        '200':\n          content:\n"
        "            application/json:\n              examples:\n                issued:\n"
        "                  value:\n                    access_token: \"Zq8VxT2mLk5NwR7yBc3H\"\n"
    )
    # The same values where a service reads them: not under an example key, they block.
    config_json = '{\n  "service": {\n    "ChangeToken": "abcd12f2-46da-4fdb-b8d5-fbd4c466928f"\n  }\n}\n'
    config_yaml = "deploy:\n  credentials:\n    access_token: \"Zq8VxT2mLk5NwR7yBc3H\"\n"
    findings = review_change(tmp_path, {"README.md": "x\n"}, {
        "data/waf/examples-1.json": examples, "api/openapi.yaml": openapi,
        "config/service.json": config_json, "config/deploy.yml": config_yaml,
    })
    assert _secrets(findings) == [
        ("api/openapi.yaml", 11, "minor"),
        ("config/deploy.yml", 3, "blocker"),
        ("config/service.json", 3, "blocker"),
        ("data/waf/examples-1.json", token_line, "minor"),
    ]
