"""A JSON Web Token decoded without pinning its algorithm, or with `none` allowed (Python,
JavaScript/TypeScript, Go): PyJWT's or python-jose's `jwt.decode(token, key)` without
`algorithms=`, with `options={"verify_signature": False}` or with `"none"` in `algorithms`;
jsonwebtoken's `jwt.verify(token, key)` without an `algorithms` option; golang-jwt's
`jwt.Parse(raw, keyFunc)` whose key function never looks at `token.Method` and whose options
hold no `jwt.WithValidMethods`.

The token says which algorithm checks it (its `alg` header), and the token is what the sender
wrote: left to choose, it picks `none` (no signature), or HS256 with the server's public RSA key
as the HMAC secret, and signs its own claims. Not reported: a pinned list (`algorithms=["RS256"]`,
`{ algorithms: ['RS256'] }`, a key function that checks `token.Method`), and an unverified decode
that only reads the claims to find the key, when the same module decodes with `algorithms` pinned
(there, or through a helper given them), and test files (tokens the test made itself).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator
from typing import TYPE_CHECKING

from reviewgate.findings import Finding, FindingClass, Severity
from reviewgate.lazy_patterns import LazyPattern
from reviewgate.reviewers.builtin.bug_lens import TwoReaderLens, bug_finding, code_line, matched
from reviewgate.reviewers.builtin.file_kinds import is_test_file
from reviewgate.reviewers.builtin.language_table import Language
from reviewgate.reviewers.builtin.python_walk import nodes_of
from reviewgate.reviewers.builtin.rule import Example, File, Record, Rule

JWT_ALGORITHM_UNPINNED = Rule(
    id="security/jwt-algorithm-unpinned",
    finding_class=FindingClass.CORRECTNESS,
    severity=Severity.MAJOR,
    short="JWT accepted without pinning its algorithm",
    full=(
        "A JSON Web Token decoded without a fixed list of algorithms, with `none` in the list, or with the "
        "signature check off: the token names its own algorithm, so its sender can choose `none` or HS256 "
        "keyed with the public key and sign their own claims. Pass the algorithms the issuer uses."
    ),
    tags=("security", "correctness", "external/cwe/cwe-347"),
    precision="high",
    fires_on=(
        "Python: PyJWT's or python-jose's `jwt.decode(token, key)` without `algorithms=`, with `\"none\"` in "
        "it, with `options={\"verify_signature\": False}` or `verify=False`; JS/TS (a file that imports "
        "`jsonwebtoken`): `jwt.verify(token, key)` or with a callback or an options object without "
        "`algorithms`, or with `'none'` in it; Go (golang-jwt, jwt-go): `jwt.Parse`/`jwt.ParseWithClaims` "
        "whose key function never looks at `token.Method` and with no `jwt.WithValidMethods`. The finding "
        "names the token and where it came from (`request.headers[…]` at line 5) and the decode it reaches"
    ),
    not_on=(
        "a pinned list (`algorithms=[\"RS256\"]`, a constant, the third argument, `{ algorithms: ['RS256'] }`); "
        "an unverified decode that only reads the claims to pick a key, when the same module decodes with "
        "`algorithms` pinned (there, or through a helper given `algorithms`); options passed as a variable, "
        "`**kwargs` or a spread (`jwt.verify(...args, done)`: cannot tell); authlib's `jwt` (its algorithms are "
        "fixed where it is made); `jwt.sign`; test files (tokens the test made)"
    ),
    fires=(
        Example(file=File("app/auth.py", "python", """\
import jwt


def user_of(request, key):
    token = request.headers["Authorization"].removeprefix("Bearer ")
    return jwt.decode(token, key)["sub"]
""")),
    ),
    does_not_fire=(
        Example(file=File("app/auth.py", "python", """\
import jwt


def user_of(request, key):
    token = request.headers["Authorization"].removeprefix("Bearer ")
    return jwt.decode(token, key, algorithms=["RS256"], audience="shop")["sub"]
""")),
    ),
    by_record=True,
    record=Record(
        findings=0,
        holding=0,
        where=(
            "the whole trees of the tuning half's 20 projects, of 25 PyPI and npm packages and of 30 more where JWTs "
            "are decoded, cookies written or a runtime floor declared (2026-12-06; each tree's package.json, "
            "pyproject.toml, setup.cfg, setup.py and go.mod at the base): none. Not one since (76 first read, none "
            "held): test files 72 (python-jose 46, social-auth-core 11, PyJWT 9, django-allauth 6: tokens the test "
            "made, or tests of the library's own refusal); an unverified read of the claims to pick the key in a "
            "module that verifies with the algorithms pinned (flask-jwt-extended `jwt_manager.py:535`, sanic-jwt "
            "`authentication.py:254`, social-auth-core `backends/azuread.py:264`); koa-jwt `verify.js:5`, "
            "`jwt.verify(...args, done)` (the caller's options)"
            "; none in the tuning half's ten Rust and Ruby projects added since (axum, clap, reqwest, tower, rack, "
            "faraday, grape, kaminari, doorkeeper, paper_trail) or in 98 more PyPI and npm packages (2026-12-07)"
        ),
    ),
)

RULES = (JWT_ALGORITHM_UNPINNED,)
RULE_JWT_ALGORITHM_UNPINNED = JWT_ALGORITHM_UNPINNED.id

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.languages.javascript_source import JsSource

_LANGUAGES = frozenset({Language.PYTHON, Language.JAVASCRIPT, Language.TYPESCRIPT, Language.GO})
_NEEDLES = ("jwt", "jose", "jsonwebtoken")
_PYTHON_DECODERS = frozenset({"jwt.decode", "jose.jwt.decode"})
_JS_LIBRARY = LazyPattern(r"""(?:require\s*\(\s*|from\s+)['"]jsonwebtoken['"]""")
_JS_VERIFY = LazyPattern(r"(?<![\w$.])(?:(?P<module>jwt|jsonwebtoken|JWT)\s*\.\s*)?verify\s*\(")
# `verify` taken out of the module by name: `import { verify } from 'jsonwebtoken'`.
_JS_NAMED_VERIFY = LazyPattern(r"""\{[^{}]*\bverify\b[^{}]*\}\s*(?:from\s*|=\s*require\s*\(\s*)['"]jsonwebtoken['"]""")
_GO_LIBRARY = LazyPattern(r'"github\.com/(?:golang-jwt/jwt|dgrijalva/jwt-go|form3tech-oss/jwt-go)')
_GO_PARSE = LazyPattern(r"\bjwt\.(?P<call>Parse|ParseWithClaims)\s*\(")
_GO_METHOD_CHECK = LazyPattern(r"\.Method\b|SigningMethod|Header\[\s*\"alg\"\s*\]|WithValidMethods\(")
_NONE = LazyPattern(r"""(?i)['"]none['"]""")


def _finding(path: str, text: str, line: int, sink: str, token: str, problem: str, language: Language) -> Finding:
    code = code_line(text, line)
    advice = {
        Language.PYTHON: "Pass the algorithms the issuer uses: `jwt.decode(token, key, algorithms=[\"RS256\"])`",
        Language.GO: "Check the method in the key function (`if _, ok := t.Method.(*jwt.SigningMethodRSA); !ok "
                     "{ return nil, ... }`) or pass `jwt.WithValidMethods([]string{\"RS256\"})`",
    }.get(language, "Pass the algorithms the issuer uses: `jwt.verify(token, key, { algorithms: ['RS256'] })`")
    return bug_finding(
        rule=RULE_JWT_ALGORITHM_UNPINNED,
        category="security",
        title="JWT accepted without pinning its algorithm",
        body=(
            f"{matched(code)}: {token} reaches `{sink}`, which {problem}. The token names its own algorithm in its "
            "header, so its sender chooses how it is checked: `none` (no signature) or HS256 with the public key "
            f"as the secret lets them sign their own claims. {advice}, never `none`."
        ),
        path=path,
        line=line,
        code=code,
    )


# Python ------------------------------------------------------------------------------------------


def _python_problem(call: ast.Call, scope: ast.AST | None = None) -> str | None:
    """What is wrong with a decode call, or None when it pins a list without `none`."""
    keywords = {keyword.arg: keyword.value for keyword in call.keywords}
    if None in keywords:
        return None  # `**options`: cannot tell
    options = keywords.get("options")
    if isinstance(options, ast.Dict):
        for key, value in zip(options.keys, options.values, strict=True):
            if (isinstance(key, ast.Constant) and key.value == "verify_signature"
                    and isinstance(value, ast.Constant) and value.value is False):
                return "skips the signature check (`verify_signature: False`)"
    verify = keywords.get("verify")
    if isinstance(verify, ast.Constant) and verify.value is False:
        return "skips the signature check (`verify=False`)"
    # `jwt.decode(token, key, ["RS256"])`: the third argument of PyJWT's and python-jose's decode.
    algorithms = keywords.get("algorithms", call.args[2] if len(call.args) >= 3 else None)
    if algorithms is None or (isinstance(algorithms, ast.Constant) and algorithms.value is None):
        return "is given no `algorithms`: the token's own `alg` header decides"
    if _from_the_token(algorithms, scope):
        return "is given the algorithm the token's own header names (`get_unverified_header(...)[\"alg\"]`): the sender chooses it"
    if any(isinstance(item, ast.Constant) and isinstance(item.value, str) and item.value.lower() == "none"
           for item in ast.walk(algorithms)):
        return "allows the `none` algorithm (no signature at all)"
    return None


def _from_the_token(node: ast.expr, scope: ast.AST | None) -> bool:
    """The algorithms read from the token being checked: `get_unverified_header(token)["alg"]`,
    directly or through a name assigned from it in the same function."""
    names = {item.id for item in ast.walk(node) if isinstance(item, ast.Name)}
    values: list[ast.AST] = [node]
    if scope is not None:
        values += [
            assignment.value
            for assignment in _own_nodes(scope)
            if isinstance(assignment, ast.Assign)
            and any(isinstance(target, ast.Name) and target.id in names for target in assignment.targets)
        ]
    return any(
        isinstance(item, ast.Attribute) and item.attr in {"get_unverified_header", "get_unverified_headers"}
        for value in values
        for item in ast.walk(value)
    )


def _python_decoders(tree: ast.Module) -> tuple[set[str], bool]:
    """The names a decode is called by (`jwt.decode`, or `decode` imported from jwt), and whether
    `jwt` is authlib's (whose `decode` takes no `algorithms`: they are fixed where it is made)."""
    names = set(_PYTHON_DECODERS)
    authlib = False
    for node in nodes_of(tree, ast.ImportFrom):
        module = node.module or ""
        if module.startswith("authlib"):
            authlib = True
        if module in {"jwt", "jose.jwt"}:
            names.update(alias.asname or alias.name for alias in node.names if alias.name == "decode")
    return names, authlib


def _verifies_pinned(tree: ast.Module, names: set[str]) -> bool:
    """The module checks a token with its algorithms pinned: a decode given them with the signature
    checked, or a helper given `algorithms` (`_decode_jwt(**{"algorithms": ..., "secret": key})`,
    `verify(token, key, algorithms=...)`)."""
    from reviewgate.reviewers.builtin.languages.python_flow import call_name

    for call in nodes_of(tree, ast.Call):
        if call_name(call) in names:
            if _python_problem(call) is None:
                return True
        elif any(keyword.arg == "algorithms" for keyword in call.keywords):
            return True
    return any(isinstance(key, ast.Constant) and key.value == "algorithms"
               for dictionary in nodes_of(tree, ast.Dict) for key in dictionary.keys)


def _python(tree: ast.Module, text: str, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.python_flow import call_name

    names, authlib = _python_decoders(tree)
    if authlib or is_test_file(path):
        return
    verified_here: bool | None = None  # asked once, of a module with an unverified decode
    for scope in (tree, *nodes_of(tree, ast.FunctionDef), *nodes_of(tree, ast.AsyncFunctionDef)):
        calls = [node for node in _own_nodes(scope) if isinstance(node, ast.Call) and call_name(node) in names]
        for call in calls:
            problem = _python_problem(call, scope)
            if problem is None or call.lineno not in added:
                continue
            if "signature check" in problem:
                verified_here = _verifies_pinned(tree, names) if verified_here is None else verified_here
                if verified_here:
                    continue  # the claims read unverified to find the key; the module verifies with them pinned
            token = _python_token(scope, call)
            yield _finding(path, text, call.lineno, call_name(call), token, problem, Language.PYTHON)


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of a module or function, not those of the functions nested in it."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        yield node
        stack.extend(ast.iter_child_nodes(node))


def _python_token(scope: ast.AST, call: ast.Call) -> str:
    """"the token `token` (from `request.headers[...]` at line 5)": where the decoded value came from."""
    if not call.args:
        return "the token"
    argument = call.args[0]
    shown = ast.unparse(argument)
    if isinstance(argument, ast.Name):
        for node in _own_nodes(scope):
            if (isinstance(node, ast.Assign) and node.lineno < call.lineno
                    and any(isinstance(target, ast.Name) and target.id == argument.id for target in node.targets)):
                origin = ast.unparse(node.value)
                origin = origin if len(origin) <= 70 else origin[:69] + "…"
                return f"the token `{shown}` (from `{origin}` at line {node.lineno})"
    return f"the token `{shown if len(shown) <= 70 else shown[:69] + '…'}`"


# JavaScript, TypeScript, Go -----------------------------------------------------------------------


def _text(text: str, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.javascript_source import read_js

    if is_test_file(path):
        return
    source = read_js(text)
    if language is Language.GO:
        if _GO_LIBRARY.search(text):
            yield from _go(source, path, added)
    elif _JS_LIBRARY.search(text):
        yield from _js(source, path, added, language)


def _argument(source: JsSource, span: tuple[int, int]) -> str:
    text = " ".join(source.text[span[0] : span[1]].split())
    return text if len(text) <= 70 else text[:69] + "…"


def _js(source: JsSource, path: str, added: dict[int, str], language: Language) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments

    text, masked = source.text, source.masked
    named = _JS_NAMED_VERIFY.search(text) is not None
    for match in _JS_VERIFY.finditer(masked):
        line = source.line_of(match.start())
        if line not in added or (match.group("module") is None and not named):
            continue
        arguments = call_arguments(source, match.end() - 1)
        if len(arguments) < 2 or any(text[start:end].lstrip().startswith("...") for start, end in arguments):
            continue  # a spread (`jwt.verify(...args, done)`): the options are the caller's, unseen here
        problem = None
        options = text[slice(*arguments[2])].strip() if len(arguments) >= 3 else ""
        if not options or "=>" in options or options.startswith(("function", "async")):
            problem = "is given no `algorithms` option: the token's own `alg` header decides"
        elif options.startswith("{"):
            if not re.search(r"\balgorithms\b", options):
                problem = "is given options without `algorithms`: the token's own `alg` header decides"
            elif _NONE.search(options):
                problem = "allows the `none` algorithm (no signature at all)"
            elif re.search(r"\balgorithms\s*:\s*\[[^\]]*\bheader\s*\.\s*alg\b", options):
                problem = "is given the algorithm the token's own header names (`header.alg`): the sender chooses it"
        if problem is not None:
            token = f"the token `{_argument(source, arguments[0])}`"
            yield _finding(path, text, line, "jwt.verify", token, problem, language)


def _go(source: JsSource, path: str, added: dict[int, str]) -> Iterator[Finding]:
    from reviewgate.reviewers.builtin.languages.expression_spans import call_arguments

    text = source.text
    for match in _GO_PARSE.finditer(source.masked):
        line = source.line_of(match.start())
        if line not in added:
            continue
        arguments = call_arguments(source, match.end() - 1)
        key_index = 2 if match.group("call") == "ParseWithClaims" else 1
        if len(arguments) <= key_index:
            continue
        call_text = text[arguments[0][0] : arguments[-1][1]]
        key_function = text[slice(*arguments[key_index])].strip()
        if re.fullmatch(r"[\w.]+", key_function):
            named = re.search(rf"\bfunc\s+(?:\([^)]*\)\s*)?{re.escape(key_function.rsplit('.', 1)[-1])}\s*\(", text)
            if named is None:
                continue  # defined elsewhere: cannot tell
            opener = source.masked.find("{", named.end())
            call_text += text[opener : source.pairs.get(opener, opener)]
        if _GO_METHOD_CHECK.search(call_text):
            continue
        token = f"the token `{_argument(source, arguments[0])}`"
        yield _finding(path, text, line, f"jwt.{match.group('call')}", token,
                       "is given a key function that never checks `token.Method`, and no `jwt.WithValidMethods`",
                       Language.GO)


JWT_ALGORITHM_LENS = TwoReaderLens(
    RULE_JWT_ALGORITHM_UNPINNED, _LANGUAGES, _NEEDLES, _python, _text,
    lambda tree, added: any(
        isinstance(node, ast.Call) and node.lineno in added and getattr(node.func, "attr", getattr(node.func, "id", "")) == "decode"
        for node in nodes_of(tree, ast.Call)
    ),
)

# What the registry (reviewers/builtin/rules.py) runs of this module.
LENSES = (JWT_ALGORITHM_LENS,)
