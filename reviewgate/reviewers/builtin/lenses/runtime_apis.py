"""The releases that brought the APIs `correctness/api-newer-than-runtime` knows (runtime_minimum.py):
Node's globals and methods, Go's standard packages and calls, Python's modules, names, methods and
keyword arguments; and the words a file must hold before it is searched for any of them."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from reviewgate.reviewers.builtin.lenses.target_manifest import Version

# Node: (what, the pattern that finds a use in code, the release that brought it).
NODE_APIS: tuple[tuple[str, str, Version], ...] = (
    ("the global `fetch`", r"(?<![\w$.])fetch\s*\(", (18, 0, 0)),
    ("`structuredClone`", r"(?<![\w$.])structuredClone\s*\(", (17, 0, 0)),
    ("`AbortSignal.timeout`", r"\bAbortSignal\s*\.\s*timeout\s*\(", (17, 3, 0)),
    ("`AbortSignal.any`", r"\bAbortSignal\s*\.\s*any\s*\(", (18, 17, 0)),  # 20.3, and 18.17 by a backport
    ("`Object.hasOwn`", r"\bObject\s*\.\s*hasOwn\s*\(", (16, 9, 0)),
    ("`Array.prototype.at`", r"\.\s*at\s*\(\s*-\s*\d+\s*\)", (16, 6, 0)),
    ("`Array.prototype.findLast`", r"\.\s*findLast(?:Index)?\s*\(", (18, 0, 0)),
    ("`Array.prototype.toSorted`", r"\.\s*(?:toSorted|toReversed|toSpliced)\s*\(", (20, 0, 0)),
    ("`Object.groupBy`", r"\b(?:Object|Map)\s*\.\s*groupBy\s*\(", (21, 0, 0)),
    ("`Promise.withResolvers`", r"\bPromise\s*\.\s*withResolvers\s*\(", (22, 0, 0)),
    ("`Array.fromAsync`", r"\bArray\s*\.\s*fromAsync\s*\(", (22, 0, 0)),
    ("`String.prototype.replaceAll`", r"\.\s*replaceAll\s*\(", (15, 0, 0)),
    ("`Promise.any`", r"\bPromise\s*\.\s*any\s*\(", (15, 0, 0)),
    ("logical assignment (`??=`, `||=`, `&&=`)", r"\?\?=|\|\|=|&&=", (15, 0, 0)),
    ("`crypto.randomUUID`", r"\bcrypto\s*\.\s*randomUUID\s*\(", (14, 17, 0)),
    ("`import.meta.dirname`", r"\bimport\s*\.\s*meta\s*\.\s*(?:dirname|filename)\b", (20, 11, 0)),
    ("`process.loadEnvFile`", r"\bprocess\s*\.\s*loadEnvFile\s*\(", (20, 12, 0)),
    ("the `node:test` runner", r"""(?:from\s*|require\s*\(\s*)['"]node:test['"]""", (18, 0, 0)),
)
# Go: packages imported and calls of the standard library, with the release that brought them (the
# builtins `min`, `max` and `clear` are left out: a module may define its own of those names).
GO_PACKAGES: dict[str, Version] = {
    "slices": (1, 21, 0), "maps": (1, 21, 0), "cmp": (1, 21, 0), "log/slog": (1, 21, 0), "iter": (1, 23, 0),
    "unique": (1, 23, 0), "math/rand/v2": (1, 22, 0), "crypto/ecdh": (1, 20, 0), "net/netip": (1, 18, 0),
}  # fmt: skip
GO_CALLS: tuple[tuple[str, str, Version], ...] = (
    ("`errors.Join`", r"\berrors\.Join\(", (1, 20, 0)),
    ("`strings.CutPrefix`/`CutSuffix`", r"\b(?:strings|bytes)\.Cut(?:Prefix|Suffix)\(", (1, 20, 0)),
    ("`strings.Cut`", r"\b(?:strings|bytes)\.Cut\(", (1, 18, 0)),
    ("`context.WithoutCancel`", r"\bcontext\.WithoutCancel\(", (1, 21, 0)),
    ("`context.AfterFunc`", r"\bcontext\.AfterFunc\(", (1, 21, 0)),
    ("`context.WithCancelCause`", r"\bcontext\.With(?:Cancel|Deadline|Timeout)Cause\(", (1, 20, 0)),
    ("`sync.OnceFunc`", r"\bsync\.Once(?:Func|Value|Values)\b", (1, 21, 0)),
    ("`http.NewResponseController`", r"\bhttp\.NewResponseController\(", (1, 20, 0)),
    ("`atomic.Int64` and the other atomic types", r"\batomic\.(?:Int32|Int64|Uint32|Uint64|Uintptr|Bool|Pointer)\b", (1, 19, 0)),
    ("`time.DateOnly`/`time.DateTime`", r"\btime\.(?:DateOnly|DateTime|TimeOnly)\b", (1, 20, 0)),
)

# Python: dotted names (a module attribute, or a name imported from it) and the release that brought them.
PYTHON_NAMES: dict[str, Version] = {
    "tomllib": (3, 11, 0), "datetime.UTC": (3, 11, 0), "itertools.batched": (3, 12, 0),
    "itertools.pairwise": (3, 10, 0), "zoneinfo": (3, 9, 0), "graphlib": (3, 9, 0), "functools.cache": (3, 9, 0),
    "math.lcm": (3, 9, 0), "asyncio.to_thread": (3, 9, 0), "random.randbytes": (3, 9, 0),
    "asyncio.TaskGroup": (3, 11, 0), "asyncio.timeout": (3, 11, 0), "enum.StrEnum": (3, 11, 0),
    "typing.Self": (3, 11, 0), "typing.override": (3, 12, 0), "typing.TypeAlias": (3, 10, 0),
    "typing.ParamSpec": (3, 10, 0), "contextlib.chdir": (3, 11, 0), "hashlib.file_digest": (3, 11, 0),
    "typing.assert_never": (3, 11, 0), "typing.LiteralString": (3, 11, 0), "operator.call": (3, 11, 0),
    "ExceptionGroup": (3, 11, 0), "BaseExceptionGroup": (3, 11, 0), "anext": (3, 10, 0), "aiter": (3, 10, 0),
}  # fmt: skip
PYTHON_BUILTINS = frozenset({"ExceptionGroup", "BaseExceptionGroup", "anext", "aiter"})
# Methods of built-in types: the method name, and the release that brought it.
PYTHON_METHODS: dict[str, tuple[str, Version]] = {
    "removeprefix": ("str.removeprefix", (3, 9, 0)), "removesuffix": ("str.removesuffix", (3, 9, 0)),
    "bit_count": ("int.bit_count", (3, 10, 0)), "is_relative_to": ("PurePath.is_relative_to", (3, 9, 0)),
}  # fmt: skip
# Keyword arguments of built-ins that arrived later.
PYTHON_KEYWORDS: dict[tuple[str, str], Version] = {
    ("zip", "strict"): (3, 10, 0), ("dataclass", "slots"): (3, 10, 0), ("dataclass", "kw_only"): (3, 10, 0),
}  # fmt: skip
# The last name of each dotted table entry, and the called names a use may have: which nodes may be
# a use, before the table is asked.
ATTRIBUTE_LEAVES = frozenset(name.rpartition(".")[2] for name in PYTHON_NAMES if "." in name)
CALL_LEAVES = frozenset({*PYTHON_METHODS, *(called for called, _keyword in PYTHON_KEYWORDS)})
GO_NEEDLES = ('"slices"', '"maps"', '"cmp"', '"log/slog"', '"iter"', '"unique"', '"math/rand/v2"', '"crypto/ecdh"',
               '"net/netip"', "errors.Join", ".Cut", "context.", "sync.Once", "NewResponseController", "atomic.",
               "time.Date", "time.TimeOnly")
NODE_NEEDLES = ("fetch", "structuredClone", "AbortSignal", "hasOwn", ".at(", "findLast", "toSorted", "toReversed",
                 "toSpliced", "groupBy", "withResolvers", "fromAsync", "replaceAll", "Promise.any", "??=", "||=",
                 "&&=", "randomUUID", "import.meta", "loadEnvFile", "node:test")
PYTHON_NEEDLES = ("tomllib", "UTC", "batched", "pairwise", "zoneinfo", "graphlib", "cache", "lcm", "to_thread",
                   "randbytes", "TaskGroup", "timeout", "StrEnum", "Self", "override", "TypeAlias", "ParamSpec",
                   "chdir", "file_digest", "assert_never", "LiteralString", "operator", "ExceptionGroup", "anext",
                   "aiter", "removeprefix", "removesuffix", "bit_count", "is_relative_to", "strict", "slots",
                   "kw_only", "match ", "except*")  # fmt: skip
# A JavaScript regular expression literal where an expression starts (Prism's grammars hold `||=`, `??=` and
# `fetch(` as text to match: `'operator': /--|\+\+|&&=?|\|\|=?/`), not code that runs.
JS_REGEX_LITERAL = (r"(?:(?<=[(,=:\[!&|?{};])|(?<=\breturn)|(?<=^))\s*/(?![/*])"
                    r"(?:\\.|\[(?:\\.|[^\]\\\n])*\]|[^/\\\n\[])+/[dgimsuvy]*")
