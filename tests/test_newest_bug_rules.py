"""False-positive kinds that whole-tree scans found in the newest bug rules (an error wrapped
without its cause, a case-sensitive URL scheme check), each beside the bug it resembles, which
must still be reported. The must-find cases and look-alikes are in tests/corpus/bug-kinds.toml."""

from __future__ import annotations

from pathlib import Path

from testing.lenses import found_at, review_change

BASE = {"README.md": "project\n"}



def test_a_cause_dropped_after_its_trace_was_logged_is_not_reported(tmp_path: Path) -> None:
    logged = (
        "export function load(logger, name, requireDriver) {\n"
        "  try {\n"
        "    return requireDriver(name);\n"
        "  } catch (e) {\n"
        "    logger.error(`cannot load ${name}\\n${e.stack}`);\n"
        "    throw new Error(`cannot load ${name}: ${e.message}`);\n"
        "  }\n"
        "}\n"
    )
    dropped = logged.replace("    logger.error(`cannot load ${name}\\n${e.stack}`);\n", "    logger.error(`cannot load ${name}`);\n")
    java = (
        "package shop;\n\n"
        "public class Drivers {\n"
        "    public Object load(String name) {\n"
        "        try {\n"
        "            return Class.forName(name);\n"
        "        } catch (ClassNotFoundException e) {\n"
        "            e.printStackTrace();\n"
        '            throw new IllegalStateException("no driver " + name + ": " + e.getMessage());\n'
        "        }\n"
        "    }\n"
        "}\n"
    )
    findings = review_change(
        tmp_path, BASE, {"src/logged.js": logged, "src/dropped.js": dropped, "src/main/java/shop/Drivers.java": java}
    )
    assert found_at(findings, "correctness/error-cause-dropped") == [("src/dropped.js", 6)]


def test_a_scheme_check_that_routes_a_url_is_not_reported_one_that_judges_it_is(tmp_path: Path) -> None:
    python = (
        "def route(url, path, value):\n"
        '    if url.startswith("file://"):\n'
        "        return 1\n"
        '    if value.startswith(("http://", "https://", "/")):\n'
        "        return 2\n"
        '    if path.startswith("http:") or path.startswith("https:"):\n'
        "        return 3\n"
        '    if url.startswith("https://"):\n'
        "        return 4\n"
        '    if url.split(":")[0] in ("javascript", "data"):\n'
        "        return 5\n"
        '    return url.split("://", 1)[0] in {"http", "https", "file"}\n'
    )
    javascript = (
        "export function route(url) {\n"
        '  if (url.startsWith("data:")) return 1;\n'
        '  if (url.startsWith("http:") || url.startsWith("https:")) return 2;\n'
        "  if (/^https?:\\/\\//.test(url)) return 3;\n"
        "  if (/^javascript:/.test(url)) return 4;\n"
        '  if (url.startsWith("https:")) return 5;\n'
        "  return /^data:[^,]+,/.exec(url);\n"
        "}\n"
    )
    go = (
        'package web\n\nimport "strings"\n\nfunc route(u string) int {\n'
        '\tif strings.HasPrefix(u, "file://") {\n\t\treturn 1\n\t}\n'
        '\tif strings.HasPrefix(u, "https://") {\n\t\treturn 2\n\t}\n\treturn 0\n}\n'
    )
    test = 'def test_url(url):\n    assert url.startswith("https://")\n'
    findings = review_change(
        tmp_path, BASE, {"app/route.py": python, "src/route.js": javascript, "web/route.go": go, "tests/test_url.py": test}
    )
    # Judged: a web scheme (is it secure, is it external), a block list naming `javascript`. Routed:
    # a file or data URL, an absolute URL or path (web schemes beside "/"); a test's assertion.
    assert found_at(findings, "correctness/case-sensitive-scheme") == [
        ("app/route.py", 6), ("app/route.py", 8), ("app/route.py", 10), ("app/route.py", 12),
        ("src/route.js", 3), ("src/route.js", 4), ("src/route.js", 5), ("src/route.js", 6), ("web/route.go", 9),
    ]


def test_a_value_as_a_format_with_nothing_to_format_is_reported_in_go_java_and_csharp(tmp_path: Path) -> None:
    go = (
        'package chi\n\nimport (\n\t"fmt"\n\t"testing"\n)\n\nconst greeting = "hi %s"\n\n'
        "func TestGet(t *testing.T) {\n"
        "\tbody := get()\n"
        "\tt.Fatalf(body)\n"  # 12
        '\tt.Fatalf("got %s", body)\n'
        "\tt.Fatal(body)\n"
        "\tt.Logf(greeting)\n"
        "\tfmt.Fprintf(w, body)\n"  # 16
        "\tt.Errorf(fmt.Sprintf(\"%d\", 1))\n"  # 17
        "}\n"
    )
    java = (
        "package a;\n\nimport java.util.Locale;\n\nclass A {\n"
        '    static final String TEMPLATE = "x %s";\n'
        "    String f(String message) {\n"
        "        String a = String.format(Locale.ROOT, message);\n"  # 8
        '        String b = String.format("%s", message);\n'
        "        String c = String.format(TEMPLATE);\n"
        "        return message.formatted();\n"  # 11
        "    }\n}\n"
    )
    csharp = 'class A {\n    string F(string text) {\n        var b = string.Format("{0}", text);\n        return string.Format(text);\n    }\n}\n'
    findings = review_change(
        tmp_path, BASE, {"get_test.go": go, "src/main/java/a/A.java": java, "src/A.cs": csharp}
    )
    assert found_at(findings, "correctness/non-constant-format") == [
        ("get_test.go", 12), ("get_test.go", 16), ("get_test.go", 17),
        ("src/A.cs", 4), ("src/main/java/a/A.java", 8), ("src/main/java/a/A.java", 11),
    ]
    assert all(item.severity.value == "minor" for item in findings if item.rule == "correctness/non-constant-format")


def test_a_jwt_read_unverified_to_find_its_key_is_not_reported_where_the_module_verifies(tmp_path: Path) -> None:
    # flask-jwt-extended and sanic-jwt: the claims read unverified to pick the key, the token then
    # verified with the algorithms pinned through a helper (or in another function of the module).
    delegated = (
        "import jwt\n\nfrom app.tokens import decode_checked\n\n\n"
        "def claims_of(token, keys, config):\n"
        '    unverified = jwt.decode(token, algorithms=config.algorithms, options={"verify_signature": False})\n'
        '    kwargs = {"algorithms": config.algorithms, "secret": keys[unverified["iss"]]}\n'
        "    return decode_checked(token, **kwargs)\n"
    )
    elsewhere = (
        "import jwt\n\n\n"
        "def issuer_of(token):\n"
        '    return jwt.decode(token, options={"verify_signature": False})["iss"]\n\n\n'
        "def verified(token, key):\n"
        '    return jwt.decode(token, key, algorithms=["RS256"])\n'
    )
    trusted = 'import jwt\n\n\ndef user_of(token):\n    return jwt.decode(token, options={"verify_signature": False})["sub"]\n'
    positional = 'from jose import jwt\n\n\ndef user_of(token, key):\n    return jwt.decode(token, key, ["HS256"])["sub"]\n'
    in_test = 'import jwt\n\n\ndef test_token(client):\n    assert jwt.decode(client.token(), options={"verify_signature": False})["sub"]\n'
    spread = (
        "const jwt = require('jsonwebtoken');\n\n"
        "module.exports = (...args) => new Promise((resolve, reject) => {\n"
        "  jwt.verify(...args, (error, decoded) => (error ? reject(error) : resolve(decoded)));\n"
        "});\n"
    )
    unpinned = spread.replace("jwt.verify(...args,", "jwt.verify(args[0], args[1],")
    findings = review_change(tmp_path, BASE, {
        "app/delegated.py": delegated, "app/elsewhere.py": elsewhere, "app/trusted.py": trusted,
        "app/positional.py": positional, "tests/test_token.py": in_test, "lib/spread.js": spread,
        "lib/unpinned.js": unpinned,
    })
    assert found_at(findings, "security/jwt-algorithm-unpinned") == [("app/trusted.py", 5), ("lib/unpinned.js", 4)]
