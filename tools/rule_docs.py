"""Write the rules' documentation from their declarations (each lens module's `RULES`, gathered
by reviewgate/reviewers/builtin/rules.py): docs/rules.md whole (a page per rule, with its
examples), and in docs/lenses.md the rule table and the record of the bug rules.

    python tools/rule_docs.py           # write them
    python tools/rule_docs.py --check   # exit 1 if they are not what the declarations say

In docs/lenses.md only the text between each `<!-- generated: NAME ... -->` line and its
`<!-- end: NAME -->` line is written; the rest is the writer's. tests/test_lens_docs.py runs the check.
"""

from __future__ import annotations

import argparse
import re
import sys
from collections.abc import Iterable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from reviewgate.report.sarif_rules import docs_anchor  # noqa: E402
from reviewgate.reviewers.builtin.rule import Example, File, Rule  # noqa: E402
from reviewgate.reviewers.builtin.rules import RULES  # noqa: E402

DOCS = Path(__file__).resolve().parents[1] / "docs" / "lenses.md"
RULE_PAGES = DOCS.with_name("rules.md")
COMMAND = "python tools/rule_docs.py"
RULE_PAGES_INTRO = f"""# Every builtin rule

<!-- Written by {COMMAND} from the rule declarations at the top of each lens module: edit those. -->

Each rule of the `builtin` reviewer ([lenses.md](lenses.md) says how the lenses run): what it
reports, what it leaves alone, and examples, changes that fire it and changes that do not. Every
example is reviewed by the builtin reviewer in a real repository (`tests/test_lens_docs.py`). A
rule's id is what `reviewgate: ignore[...]` and `[lenses] disable` take.
"""


def _fence(code: str) -> str:
    return "`" * max(3, 1 + max((len(run) for run in re.findall(r"`+", code)), default=0))


def _block(file: File) -> list[str]:
    code = file.code.rstrip("\n")
    fence = _fence(code)
    return [f"{fence}{file.language}", code, fence, ""]


def _files(intro: str, files: Iterable[File]) -> list[str]:
    lines: list[str] = []
    for file in files:
        lines += [f"{intro} `{file.path}`:", "", *_block(file)]
    return lines


def _example(verdict: str, example: Example, previous_base: tuple[File, ...]) -> list[str]:
    lines: list[str] = []
    if example.base and example.base == previous_base:
        lines += ["At the merge base, the same files as above.", ""]
    else:
        lines += _files("At the merge base,", example.base)
    lines += _files("The change also writes", example.branch)
    where = f"`{example.file.path}`"
    if example.branch_name != "feature":
        where += f", on a branch named `{example.branch_name}`"
    caption = f" {example.caption}" if example.caption else ""
    return [*lines, f"{verdict} ({where}):{caption}", "", *_block(example.file)]


def _severity(rule: Rule) -> str:
    if rule.by_record and not rule.earned:
        chained = f"; {rule.severity.value} {rule.chained}" if rule.chained else ""
        return f"minor until its record earns {rule.severity.value}{chained}"
    note = rule.severity_note
    return f"{rule.severity.value}{note if note.startswith(',') or not note else ' ' + note}"


def rule_page(rule: Rule) -> list[str]:
    lines = [f"## `{rule.id}`", "",
             f"**{rule.short}** ({rule.finding_class.value}, {_severity(rule)}). {rule.full}", "",
             f"Reports: {rule.fires_on}.".replace("..", "."), ""]
    if rule.not_on:
        lines += [f"Leaves alone: {rule.not_on}.".replace("..", "."), ""]
    if rule.by_record:
        lines += ["Its measured record: [lenses.md](lenses.md#record-of-the-bug-rules).", ""]
    previous: tuple[File, ...] = ()
    for index in range(max(len(rule.fires), len(rule.does_not_fire))):
        for verdict, examples in (("Fires", rule.fires), ("Does not fire", rule.does_not_fire)):
            if index < len(examples):
                lines += _example(verdict, examples[index], previous)
                previous = examples[index].base
    return lines


def rule_pages(rules: Iterable[Rule]) -> str:
    lines = [RULE_PAGES_INTRO]
    for rule in rules:
        lines += rule_page(rule)
    return "\n".join(lines).rstrip("\n") + "\n"


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def rule_table(rules: Iterable[Rule]) -> list[str]:
    lines = ["| rule | class / severity | what it reports |", "|---|---|---|"]
    for rule in rules:
        link = f"[`{rule.id}`](rules.md#{docs_anchor(rule.id)})"
        lines.append(f"| {link} | {rule.finding_class.value} / {_cell(_severity(rule))} | {_cell(rule.short)} |")
    return [*lines, ""]


def record_table(rules: Iterable[Rule]) -> list[str]:
    lines = ["| rule | findings | holding | severity | what was read |", "|---|---|---|---|---|"]
    for rule in rules:
        if not rule.by_record:
            continue
        record = rule.record
        counts = ("unmeasured", "unmeasured") if record is None else (str(record.findings), str(record.holding))
        where = "not measured yet" if record is None else _cell(record.where)
        severity = rule.reported_severity.value
        if rule.chained and not rule.earned:
            severity += f"; {rule.severity.value} {_cell(rule.chained)}"
        lines.append(f"| `{rule.id}` | {counts[0]} | {counts[1]} | {severity} | {where} |")
    return [*lines, ""]


GENERATED = {"rule-table": rule_table, "bug-rule-records": record_table}
_REGION = re.compile(r"^(?P<start><!-- generated: (?P<name>[a-z-]+) .*-->\n)(?P<body>.*?)^(?P<end><!-- end: (?P=name) -->)$",
                     re.MULTILINE | re.DOTALL)


def render(text: str, rules: tuple[Rule, ...] = RULES) -> str:
    """docs/lenses.md's `text` with each generated region written anew from `rules`."""
    found: set[str] = set()

    def write(match: re.Match[str]) -> str:
        name = match.group("name")
        if name not in GENERATED:
            raise SystemExit(f"{DOCS}: unknown generated region {name!r}")
        found.add(name)
        body = "\n".join(GENERATED[name](rules))
        return f"{match.group('start')}\n{body}\n{match.group('end')}"

    result = _REGION.sub(write, text)
    missing = sorted(set(GENERATED) - found)
    if missing:
        raise SystemExit(f"{DOCS}: no generated region {', '.join(missing)}")
    return result


def written(rules: tuple[Rule, ...] = RULES) -> dict[Path, str]:
    """Each file this writes, with what it should hold."""
    return {DOCS: render(DOCS.read_text(encoding="utf-8"), rules), RULE_PAGES: rule_pages(rules)}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the docs are not what the declarations say")
    options = parser.parse_args(argv)
    stale = []
    for path, text in written().items():
        current = path.read_text(encoding="utf-8") if path.is_file() else None
        if current == text:
            continue
        stale.append(path)
        if not options.check:
            path.write_text(text, encoding="utf-8")
            print(f"wrote {path}")
    if options.check and stale:
        print(f"{', '.join(map(str, stale))}: out of date with the rule declarations; run {COMMAND}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
