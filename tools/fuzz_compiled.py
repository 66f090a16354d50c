"""Fuzz the builtin reviewer's compiled parts under AddressSanitizer and UndefinedBehaviorSanitizer. One command:

    python tools/fuzz_compiled.py --seconds 120 [--seed N]

Builds `_normalize.c`, `_runs.c` and `_walk.c` with `-fsanitize=address,undefined` into a temporary
copy of the package, then feeds them, for the given time, random files (openings and closings of
comments and strings, escapes, newlines, byte-order marks, invalid UTF-8, long lines, raw random
bytes) in every comment family, random, often inconsistent, arrays to the places loop (files and
offsets out of range, ends past the texts), and the syntax trees of random Python statements to the
grouped walk, the names of random texts, from random lines, to the renaming share, random bytes
and offsets (some with no whole window) to the window hashes, and random regions of random text
against itself with lines swapped to the growth over reordered lines, the line-by-line pairing,
both renaming checks in one call, and those with the region's size in added lines first; and the
random files' lines to the pass over their definitions, and their text to its line starts. The
normalization's, the walk's, the window hashes', the growth's, the pairing's, the renaming checks',
the definitions' and the line starts' answers are compared with their Python paths'; the places
loop, the renaming share and the window hashes must answer or refuse with ValueError. A sanitizer
report aborts the run with its stack; the command exits 0 when none came. Needs gcc and its sanitizer runtimes (libasan, libubsan).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGE = ROOT / "reviewgate"
BUILTIN = ROOT / "reviewgate" / "reviewers" / "builtin"
EXTENSIONS = [BUILTIN / "lenses" / "duplication" / "_normalize.c", BUILTIN / "lenses" / "duplication" / "_runs.c",
              BUILTIN / "_walk.c"]


def run_cases(seed: int, seconds: float) -> None:
    """Random files and arrays through the compiled parts until `seconds` pass (in the sanitized
    interpreter: cases per second matter, so it is plain)."""
    import ast
    import random
    import time
    from array import array
    from itertools import accumulate

    from reviewgate.reviewers.builtin import _walk, python_walk
    compiled_walk = python_walk.compiled_walk
    from reviewgate.reviewers.builtin.language_table import Language
    from reviewgate.reviewers.builtin.lenses.duplication import (
        _normalize,
        _runs,
        duplicates,
        fingerprints,
        hashes,
        reordering,
        rules,
        runs,
    )
    from reviewgate.text import decode_text

    rng = random.Random(seed)
    deadline = time.time() + seconds
    languages = {0: Language.RUST, 1: Language.PYTHON, 2: Language.JAVASCRIPT}
    pieces = [b"#", b"//", b"/*", b"*/", b"*", b"/", b'"', b"'", b"`", b'"""', b"'''", b"\\", b"\\\n", b"\n", b"\r\n", b" ",
              b"\t", b"a", b"_b", b"$", b"$x", b"1", b"1.5", b".", b"(", b")", b"import", b"from", b"export{", b"}from",
              b"if", b"self", b"\xef\xbb\xbf", b"\xc3\xa9", b"\xff", b"\x00", b"\x01", b"x" * 500, b"+" * 401]
    simple = ["x = 1", "return {**a, 'b': [c for c in d if c]}", "yield f'{x!r:>{w}}'", "f = lambda z=1, *, w: z",
              "global g", "await x", "pass", "a[1:2, ...] = not b", "del a, b", "assert a, b", "raise E from e",
              "import a.b as c", "x: int = 3", "print(*a, **{'k': v} if a else None)", "b = {k: v for k, v in c}"]
    compound = ["def f(a, /, b=2, *c, d, **e) -> g:", "class C(B, metaclass=M):", "if a:", "for i in range(3):",
                "while x:", "with a as (b, c), d():", "async def h():", "@decorate(k=1)\n{0}def k():", "try:",
                "match v:"]

    def block(depth: int) -> list[str]:
        """Random statements that parse: a compound statement's body indented under it."""
        indent, lines = "    " * depth, []
        for _ in range(rng.randint(1, 4)):
            if depth < 4 and rng.random() < 0.4:
                header = rng.choice(compound)
                lines.append(indent + header.format(indent))
                if header == "match v:":
                    lines += [indent + "    case [1, *r] | {'k': _}:", *block(depth + 2)]
                else:
                    lines += block(depth + 1)
                if header == "try:":
                    lines += [indent + "except E as e:", *block(depth + 1), indent + "finally:", *block(depth + 1)]
            else:
                lines.append(indent + rng.choice(simple))
        return lines

    cases = 0
    while time.time() < deadline:
        data = b"".join(rng.choice(pieces) for _ in range(rng.randint(0, 300)))
        if rng.random() < 0.2:
            data = bytes(rng.randrange(256) for _ in range(rng.randint(0, 200)))
        text = decode_text(data)
        for family, language in languages.items():
            digests = _normalize.anchor_hashes(data, family)
            answer = _normalize.normalize(text, family)
            blanked = fingerprints._blank(text, language)
            assert answer is not None and answer[0] == blanked, (family, data)
            if answer[1] is not None:
                assert answer[1] == fingerprints._normalized_blanked(blanked), (family, data)
                assert digests is not None
        normalized = fingerprints.Normalized.of(text, rng.choice(list(languages.values())))
        side = normalized._names_side(0, len(normalized.text))
        if side is not None:
            blanked, starts, kept, _line, _skip, left = side
            line, skip = rng.randint(0, len(kept) + 2), rng.randint(0, 5)
            if rng.random() < 0.3:  # line starts that are not the text's: out of it, going back
                starts = type(starts)(starts.typecode, [rng.randint(0, len(blanked) + 9) for _ in starts])
            try:
                _normalize.renaming_share(blanked, starts, kept, line, skip, left + rng.randint(0, 50),
                                          *side, rng.random(), rng.randint(0, left + 3))
            except ValueError:
                pass
        source = "\n".join(block(0))
        tree = ast.parse(source)
        odd = rng.random() < 0.1
        if odd:  # fields unset or holding what ast.parse never puts there
            tree.body += [ast.Return(), ast.Expr(value=ast.Dict(keys=[None, ast.Name(id="y")], values=(ast.Name(id="x"), None)))]
        grouped = _walk.grouped_nodes(tree, python_walk.compiled_walk_plans())
        assert grouped is not None or odd, source  # what ast.parse makes, the compiled walk reads
        python_walk.compiled_walk = lambda: None  # type: ignore[assignment]  # the Python path, as the definition
        assert grouped is None or list(python_walk.Walk(tree)._grouped.items()) == list(grouped.items()), source
        python_walk.compiled_walk = compiled_walk
        files = rng.randint(1, 6)
        codes = bytes(rng.randrange(4) for _ in range(rng.randint(0, 400)))
        starts = array("q", sorted(rng.randrange(max(1, len(codes))) for _ in range(files)))
        ends = array("q", [min(len(codes), start + rng.randint(0, 200)) for start in starts])
        if rng.random() < 0.1:
            shift = rng.randint(-500, 500)
            ends = array("q", [end + shift for end in ends])
        table_hashes = array("I", sorted({rng.randrange(8) for _ in range(rng.randint(0, 30))}))
        first = array("q", accumulate((rng.randint(0, 5) for _ in table_hashes), initial=0))
        places = first[-1]
        owners = array("q", [rng.randrange(-1 if rng.random() < 0.05 else 0, files + (rng.random() < 0.05))
                             for _ in range(places)])
        offsets = array("q", [rng.randint(-3 if rng.random() < 0.05 else 0, 250) for _ in range(places)])
        windows = rng.randint(0, 40)
        window_hashes = array("I", [rng.randrange(8) for _ in range(windows)])
        window_offsets = array("I", [rng.randint(0, 250) for _ in range(windows)])
        lines = array("I", sorted(rng.randint(0, 300) for _ in range(rng.randint(1, 20))))
        lines[0] = 0
        try:
            found = _runs.regions_found(rng.randrange(files), window_hashes, window_offsets, table_hashes, first, owners, offsets,
                                        codes, starts, ends, lines, rng.randint(0, 300), rng.choice([1, 10, 50]),
                                        rng.choice([1, 3, 50]))
            _runs.longest_disjoint(found, rng.choice([1, 10, 50]))
        except ValueError:
            pass
        # The hashes two sides share and the table of places: the Python definitions' (runs.py), or
        # refused when the counts do not add up to the hashes given.
        left = array("I", [rng.randrange(16) if rng.random() < 0.7 else rng.randrange(1 << 32) for _ in range(rng.randint(0, 60))])
        right = array("I", [rng.randrange(16) if rng.random() < 0.7 else rng.randrange(1 << 32) for _ in range(rng.randint(0, 60))])
        assert _runs.shared_hashes(left, right) == array("I", sorted(set(left) & set(right))).tobytes(), (left, right)
        split = sorted(rng.randint(0, len(left)) for _ in range(rng.randint(0, 4)))
        counts = array("q", [end - start for start, end in zip([0, *split], [*split, len(left)], strict=True)])
        if rng.random() < 0.1:
            counts.append(rng.randint(-3, 3))
        for compiled in (_runs.place_table, _runs.windows_kept):
            try:
                compiled(left, array("I", range(len(left))), counts, array("I", sorted(set(right))))
            except ValueError:
                assert sum(counts) != len(left) or min(counts, default=0) < 0
        # The window hashes of random bytes, at offsets some of which have no whole window: the
        # compiled ones are those of the prefix sums, or refused.
        data = codes + bytes(rng.randrange(256) for _ in range(rng.randint(0, 100)))
        at = array("I", [rng.randint(0, len(data)) for _ in range(rng.randint(0, 20))])
        try:
            digests = _normalize.window_hashes(data, at)
        except ValueError:
            assert any(offset > len(data) - fingerprints.WINDOW for offset in at)
        else:  # the prefix sums, as the definition
            assert digests == hashes.window_hashes(data, at, fingerprints.WINDOW, None).tobytes(), (data, at)
        # A region's growth over reordered lines and its line-by-line pairing: the Python
        # definitions' answers (reordering.py), on random text against itself with lines swapped.
        reordered_lines = text.split("\n")
        for _ in range(rng.randint(0, 3)):
            at = rng.randrange(len(reordered_lines))
            swapped = reordered_lines[at : at + rng.randint(2, 4)]
            rng.shuffle(swapped)
            reordered_lines[at : at + len(swapped)] = swapped
        other = fingerprints.Normalized.of("\n".join(reordered_lines), Language.PYTHON)
        normalized = fingerprints.Normalized.of(text, Language.PYTHON)
        start = rng.choice([*normalized.line_starts, rng.randint(0, len(normalized.text) + 2)])
        end = rng.randint(start, len(normalized.text) + 2)
        other_start = rng.choice([*other.line_starts, rng.randint(0, len(other.text) + 2)])
        region = runs.Region("other", start, end, other_start)
        try:
            growth: object = reordering._growth(region, normalized, other)
        except IndexError:
            growth = None
        assert _runs.reordered_growth(normalized.lines, normalized.line_starts, other.lines, other.line_starts, start, end,
                                      other_start) == growth, (text, reordered_lines, region)
        below = rng.choice([0.0, 0.85, 1.0])
        their_range = (other_start, other_start + end - start)
        paired = _normalize.paired_renaming_share(*normalized.pairing_side(start, end), *other.pairing_side(*their_range),
                                                  below, normalized.text.count(fingerprints.IDENTIFIER_MARK, start, end))
        compiled_pairing, reordering._compiled_pairing = reordering._compiled_pairing, None
        try:
            expected: object = reordering.paired_renaming_share(normalized, (start, end), other, their_range, below=below)
        except (IndexError, ValueError):
            expected = NotImplemented
        reordering._compiled_pairing = compiled_pairing
        assert paired is NotImplemented or paired == expected, (text, reordered_lines, region)
        # Both renaming checks in one call, reading the offsets itself: the Python path's answer.
        judged = _normalize.renamed_consistently(*normalized.judging_side, *other.judging_side, start, end, *their_range,
                                                 below)
        compiled_judging, reordering._compiled_judging = reordering._compiled_judging, None
        try:
            expected = reordering.renamed_consistently(normalized, (start, end), other, their_range, below=below)
        except (IndexError, ValueError):
            expected = NotImplemented
        reordering._compiled_judging = compiled_judging
        assert judged is NotImplemented or judged == expected, (text, reordered_lines, region)
        # With the region's size in added lines first (a range, a set, or a range with a step).
        count = len(normalized.lines)
        added = rng.choice([range(rng.randint(-2, count), rng.randint(0, count + 3)),
                            {rng.randint(0, count + 1) for _ in range(rng.randint(0, count))},
                            range(rng.randint(0, 3), count + 1, rng.randint(1, 3))])
        sized = _normalize.sized_and_renamed(*normalized.judging_side, *other.judging_side, start, end, *their_range,
                                             duplicates.MIN_CONSISTENT_RENAMING, added, duplicates.MIN_LINES)
        compiled_sized, duplicates.compiled_sized_and_renamed = duplicates.compiled_sized_and_renamed, None
        try:
            expected = duplicates.sized_and_renamed(normalized, region, added, other)
        except (IndexError, ValueError):
            expected = NotImplemented
        duplicates.compiled_sized_and_renamed = compiled_sized
        assert sized is NotImplemented or sized == expected, (text, reordered_lines, region, added)
        # A file's definitions (the families' members) from random source lines: the Python pass's.
        source_lines = text.split("\n")
        language = rng.choice([Language.PYTHON, Language.JAVASCRIPT, Language.GO, Language.KOTLIN])
        members = rules._members(source_lines, language)
        compiled_members, rules._compiled_members = rules._compiled_members, None
        assert members == rules._members(source_lines, language), (text, language)
        rules._compiled_members = compiled_members
        # Where each line of the random text starts: as summed from its lines.
        assert _normalize.line_starts(text) == array("I", accumulate((len(line) + 1 for line in text.split("\n")),
                                                                      initial=0)).tobytes(), text
        low = rng.randint(0, 300)
        high = rng.randint(0, 300)
        assert _normalize.consecutive_offsets(low, high) == array("I", range(low, high)).tobytes()
        cases += 1
    print(f"{cases} cases, no sanitizer report")


def sanitizer_runtime(name: str) -> str:
    found = subprocess.run(["gcc", f"-print-file-name={name}"], capture_output=True, text=True, check=True).stdout.strip()
    if not Path(found).is_absolute():
        sys.exit(f"fuzz_compiled: gcc has no {name} here (install its sanitizer runtimes)")
    return found


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--seconds", type=float, default=60, help="how long to fuzz (default 60)")
    parser.add_argument("--seed", type=int, default=0, help="the random seed (default 0)")
    parser.add_argument("--cases-here", action="store_true", help=argparse.SUPPRESS)  # inside the sanitized run
    options = parser.parse_args()
    if options.cases_here:
        run_cases(options.seed, options.seconds)
        return 0
    if shutil.which("gcc") is None:
        sys.exit("fuzz_compiled: needs gcc")
    include = sysconfig.get_paths()["include"]
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    with tempfile.TemporaryDirectory() as scratch:
        copy = Path(scratch) / "reviewgate"
        shutil.copytree(PACKAGE, copy, ignore=shutil.ignore_patterns("*.so", "__pycache__"))
        for source in EXTENSIONS:
            target = copy / source.relative_to(PACKAGE).with_suffix(suffix)
            subprocess.run(["gcc", "-g", "-O1", "-fsanitize=address,undefined", "-fno-sanitize-recover=undefined",
                            "-fno-omit-frame-pointer", "-fPIC", "-shared", f"-I{include}", str(source),
                            "-o", str(target)], check=True)
        environment = {
            **os.environ,
            "PYTHONPATH": scratch,
            "PYTHONMALLOC": "malloc",  # every buffer through malloc, where the sanitizer sees its bounds
            "ASAN_OPTIONS": "detect_leaks=0",  # the interpreter's own allocations at exit are not ours
            "LD_PRELOAD": f"{sanitizer_runtime('libasan.so')} {sanitizer_runtime('libubsan.so')}",
        }
        completed = subprocess.run([sys.executable, __file__, "--cases-here", "--seed", str(options.seed),
                                    "--seconds", str(options.seconds)], env=environment, cwd=scratch, check=False)
        return completed.returncode


if __name__ == "__main__":
    sys.exit(main())
