"""How good is a model as a reviewer, on evidence? One command:

    python benchmarks/model_eval.py --config eval.toml [--reviewer NAME]
    python benchmarks/model_eval.py --provider openai --model gpt-5.1 --api-key-env OPENAI_API_KEY \
        [--base-url URL] [--input-price 1.25 --output-price 10] [--cases DIR ...] [--jobs 4]
    python benchmarks/model_eval.py --stand-in

It runs one configured model reviewer (a `[reviewer.NAME]` table of a reviewgate config file, or
the flags) over labelled cases: `tests/corpus/*.toml` by default, or every `*.toml` in each
`--cases DIR` (the same format: `[[case]]` with `base` and `branch` files and the expected
findings, `[[case.expect]]` with `path` and `line`). Each case becomes a real git repository
with the branch on top of main, and the reviewer reviews it as the gate would, second look
included. It prints precision and recall of the findings that would block (blocker or major,
not dismissed, at or above `[review] min_confidence`), once for the review alone and once after
the second look, with the tokens and the cost of each.

A reported finding is true when it names the file of an expected finding and a line within
`--tolerance` lines of it (or either is file-level). The corpus labels what its cases are
about: a model's real finding outside them counts against its precision, so compare models
with each other on the same cases.

It also prints what the review sent: characters (system and user messages) and tokens (the
characters / 4) per changed line of the cases. `--stand-in` reviews with a stand-in model on
127.0.0.1 (testing/model_server.py) that reads only what it is sent: it reports a reuse finding
at the first added line of a file whose text (24 characters or more) also stands in the context
it was given or in another file's diff of the same request. It needs no key and measures what a
request gives a reviewer, not a model.
"""

from __future__ import annotations

import argparse
import re
import sys
import tempfile
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

BENCHMARKS = Path(__file__).resolve().parent
REPO_ROOT = BENCHMARKS.parent
DEFAULT_CASES = REPO_ROOT / "tests" / "corpus"

sys.path.insert(0, str(REPO_ROOT))

import testing.model_server as stand_in  # noqa: E402
from reviewgate.config import Config, ReviewerSettings, ReviewSettings, parse_config  # noqa: E402
from reviewgate.context import ReviewRequest  # noqa: E402
from reviewgate.errors import ConfigError, UsageError  # noqa: E402
from reviewgate.findings import Finding, FindingClass, Severity  # noqa: E402
from reviewgate.freeze.freeze import freeze  # noqa: E402
from reviewgate.freeze.git import TreeReader  # noqa: E402
from reviewgate.policy.confidence import apply_min_confidence  # noqa: E402
from reviewgate.reviewers import build_reviewers  # noqa: E402
from reviewgate.reviewers.base import ReviewerStatus, Usage  # noqa: E402
from reviewgate.reviewers.model.asking import usage_of  # noqa: E402
from reviewgate.reviewers.model.engine import ModelReviewer  # noqa: E402
from reviewgate.reviewers.model.prompt import Conversation  # noqa: E402
from reviewgate.reviewers.model.reply import Reply, Transport  # noqa: E402
from reviewgate.tomlfile import read_toml  # noqa: E402
from testing.repo import make_repo  # noqa: E402

BLOCKING_SEVERITIES = (Severity.BLOCKER, Severity.MAJOR)


class CountingTransport:
    """A transport that keeps every reply, so the review's and the second look's cost are apart."""

    def __init__(self, inner: Transport) -> None:
        self.inner = inner
        self.replies: list[Reply] = []
        self.characters = 0

    def run_notes(self) -> list[str]:
        return self.inner.run_notes()

    def complete(self, conversation: Conversation, key: str | None, max_output_tokens: int | None = None) -> Reply:
        reply = self.inner.complete(conversation, key, max_output_tokens)
        self.replies.append(reply)  # list.append is atomic: parallel requests are safe
        self.characters += len(conversation.system) + sum(len(message.text) for message in conversation.messages)
        return reply


@dataclass
class Score:
    reported: int = 0
    true: int = 0
    expected: int = 0

    @property
    def precision(self) -> float:
        return self.true / self.reported if self.reported else 1.0

    @property
    def recall(self) -> float:
        return self.true / self.expected if self.expected else 1.0

    def add(self, other: Score) -> None:
        self.reported, self.true, self.expected = (
            self.reported + other.reported, self.true + other.true, self.expected + other.expected)


@dataclass
class Totals:
    alone: Score = field(default_factory=Score)
    checked: Score = field(default_factory=Score)
    cases: int = 0
    blocked: list[str] = field(default_factory=list)
    changed_lines: int = 0  # added and removed lines of the cases reviewed
    characters: int = 0  # sent by the review (its second look apart)


def load_cases(directories: Iterable[Path]) -> list[dict[str, Any]]:
    cases: list[dict[str, Any]] = []
    for directory in directories:
        files = sorted(directory.glob("*.toml"))
        if not files:
            raise UsageError(f"--cases {directory}: no *.toml case files there")
        for path in files:
            cases += read_toml(path).get("case", [])
    return cases


def would_block(finding: Finding, ignore_second_look: bool) -> bool:
    """Blocker or major, not a product question, and not dismissed (the second look's own
    dismissals ignored for the review-alone score)."""
    refuted = (finding.extra.get("verification") or {}).get("verdict") == "refuted"
    dismissed = finding.dismissed is not None and not (ignore_second_look and refuted)
    return (finding.severity in BLOCKING_SEVERITIES and not dismissed
            and finding.finding_class is not FindingClass.PRODUCT_QUESTION)


def score(findings: Iterable[Finding], expected: list[dict[str, Any]], tolerance: int) -> Score:
    """True findings matched one to one with the expected ones, by path and nearby line."""
    reported = list(findings)
    unmatched = list(expected)
    true = 0
    for finding in reported:
        for item in unmatched:
            line = item.get("line")
            near = line is None or finding.line is None or abs(finding.line - int(line)) <= tolerance
            if item.get("path") == finding.path and near:
                unmatched.remove(item)
                true += 1
                break
    return Score(len(reported), true, len(expected))


def _reviewer(config: Config, name: str) -> tuple[ModelReviewer, CountingTransport, CountingTransport]:
    [reviewer] = build_reviewers(replace(config, review=replace(config.review, reviewers=(name,))))
    if not isinstance(reviewer, ModelReviewer):
        raise UsageError(f"reviewer {name!r} is not a model reviewer (provider openai, anthropic or command)")
    original = reviewer.transport
    review_counter = CountingTransport(original)
    reviewer.transport = review_counter
    reviewer.attach_review_policy(config)
    policy = reviewer.second_look
    verifier = policy.verifier
    verify_counter = CountingTransport(original)
    if verifier is not None:
        inner = original if verifier.transport is review_counter else verifier.transport
        verify_counter = CountingTransport(inner)
        reviewer.second_look = replace(policy, verifier=replace(verifier, transport=verify_counter))
    return reviewer, review_counter, verify_counter


def review_case(reviewer: ModelReviewer, case: dict[str, Any], root: Path, minimum: float, tolerance: int
                ) -> tuple[Score, Score, int] | str:
    """(score of the review alone, score after the second look, changed lines), or why the case
    was not reviewed."""
    repo = make_repo(root, case.get("base", {}), case.get("branch", {}),
                     branch_name=case.get("branch_name", "feature"), message=case.get("message", "feature work"))
    target = freeze(repo.path, base="main")
    outcome = reviewer.review(ReviewRequest(target=target, head=TreeReader(repo.path, target.head_sha)))
    if outcome.status is not ReviewerStatus.OK:
        return f"{case['name']}: {outcome.reason}"
    findings = apply_min_confidence(outcome.findings, minimum)
    expected = list(case.get("expect", []))
    alone = score((item for item in findings if would_block(item, True)), expected, tolerance)
    checked = score((item for item in findings if would_block(item, False)), expected, tolerance)
    changed = sum(1 for change in target.files for hunk in change.hunks for line in hunk.lines
                  if line.kind.value != " ")
    return alone, checked, changed


def evaluate(config: Config, name: str, cases: list[dict[str, Any]], tolerance: int, jobs: int
             ) -> tuple[Totals, Usage, Usage]:
    reviewer, review_counter, verify_counter = _reviewer(config, name)
    totals = Totals()
    with tempfile.TemporaryDirectory(prefix="reviewgate-model-eval-") as scratch:
        def run(indexed: tuple[int, dict[str, Any]]) -> tuple[Score, Score, int] | str:
            index, case = indexed
            return review_case(reviewer, case, Path(scratch) / str(index), config.review.min_confidence, tolerance)

        with ThreadPoolExecutor(max_workers=jobs) as pool:
            for result in pool.map(run, enumerate(cases)):
                totals.cases += 1
                if isinstance(result, str):
                    totals.blocked.append(result)
                    continue
                totals.alone.add(result[0])
                totals.checked.add(result[1])
                totals.changed_lines += result[2]
    totals.characters = review_counter.characters
    verifier = reviewer.second_look.verifier
    verify_options = verifier.options if verifier is not None else reviewer.options
    return totals, usage_of(review_counter.replies, reviewer.options), usage_of(verify_counter.replies, verify_options)


def _cost(usage: Usage) -> str:
    return "-" if usage.cost is None else f"{usage.cost:.4f}"


def render(title: str, totals: Totals, review: Usage, second: Usage, tolerance: int) -> str:
    reviewed = totals.cases - len(totals.blocked)
    lines = [
        f"model eval: {title}, {reviewed} of {totals.cases} case(s) reviewed, lines matched within ±{tolerance}",
        "",
        f"{'':<18} {'precision':>9} {'recall':>7} {'reported':>8} {'true':>5} {'expected':>8} "
        f"{'requests':>8} {'input':>9} {'output':>8} {'cost':>8}",
    ]
    rows = (("review alone", totals.alone, review), ("with second look", totals.checked, second))
    for label, scored, usage in rows:
        lines.append(
            f"{label:<18} {scored.precision:>9.3f} {scored.recall:>7.3f} {scored.reported:>8} {scored.true:>5} "
            f"{scored.expected:>8} {usage.requests:>8} {usage.input_tokens:>9} {usage.output_tokens:>8} "
            f"{_cost(usage):>8}"
        )
    lines.append("(the second look's row: its scores are after it; its tokens and cost are its own, added to the "
                 "review's)")
    if totals.changed_lines:
        lines.append(
            f"sent by the review: {totals.characters:,} characters (~{totals.characters // 4:,} tokens) for "
            f"{totals.changed_lines:,} changed lines: {totals.characters / totals.changed_lines:.0f} characters, "
            f"{totals.characters / 4 / totals.changed_lines:.0f} tokens per changed line")
    lines += [f"not reviewed: {reason}" for reason in totals.blocked]
    return "\n".join(lines)


_DATA_BLOCK = r"<<<DATA {nonce} BEGIN>>>\n(.*?)\n<<<DATA {nonce} END>>>"
_ADDED_LINE = re.compile(r"^\+\s*(\d+)\| (.*)$")
STAND_IN_MIN_CHARACTERS = 24


def stand_in_review(body: Any) -> stand_in.Reply | None:
    """The stand-in's answer to one review request (see the module's docstring); None for a
    request it does not read (the server's script answers)."""
    messages = body.get("messages") if isinstance(body, dict) else None
    if not isinstance(messages, list) or len(messages) < 2:
        return None
    user = str(messages[-1].get("content", ""))
    nonce = re.search(r"<<<DATA (\w+) BEGIN>>>", user)
    if nonce is None:
        return None
    blocks = re.findall(_DATA_BLOCK.format(nonce=nonce.group(1)), user, flags=re.DOTALL)
    if len(blocks) < 2:
        return None
    context = {line.split("| ", 1)[-1].strip() for line in blocks[1].splitlines()}
    added_by_path: dict[str, list[tuple[int, str]]] = {}
    path = ""
    for line in blocks[0].splitlines():
        if line.startswith("=== FILE "):
            # `=== FILE path (status) ===`, and a note after it on a file only some of whose blocks are sent
            path = line.removeprefix("=== FILE ").split(" ===", 1)[0].rsplit(" (", 1)[0]
            continue
        added = _ADDED_LINE.match(line)
        if added:
            added_by_path.setdefault(path, []).append((int(added.group(1)), added.group(2).strip()))
    found: list[dict[str, Any]] = []
    for path, added_lines in added_by_path.items():
        # What the request shows beside this file: its context, and the other files' diffs.
        elsewhere = context | {text for other, lines in added_by_path.items() if other != path for _, text in lines}
        for number, text in added_lines:
            if len(text) >= STAND_IN_MIN_CHARACTERS and text in elsewhere:
                found.append(stand_in.finding(path, number, finding_class="systematic", category="reuse",
                                              title="Repeats code the context shows", evidence=text))
                break
    return stand_in.Reply(review=stand_in.review_document(found, "request_changes" if found else "approve"))


def _config(arguments: argparse.Namespace) -> tuple[Config, str]:
    if arguments.config is not None:
        path = Path(arguments.config)
        if not path.is_file():
            raise UsageError(f"--config {arguments.config}: no such file")
        config = parse_config(read_toml(path), str(path))
        models = [name for name in config.review.reviewers if config.reviewer(name).provider != "builtin"]
        name = arguments.reviewer or (models[0] if models else None)
        if name is None:
            raise UsageError(f"--config {arguments.config}: names no model reviewer; give --reviewer NAME")
        if name not in config.reviewers:
            raise UsageError(f"--reviewer {name}: {arguments.config} has no [reviewer.{name}] table")
        return config, name
    if not arguments.provider or not arguments.model:
        raise UsageError("give --config FILE, or --provider and --model")
    options: dict[str, Any] = {}
    for key in ("input_price", "output_price"):
        if getattr(arguments, key) is not None:
            options[key] = getattr(arguments, key)
    if arguments.no_second_look:
        options["verify_findings"] = False
    settings = ReviewerSettings(name="eval", provider=arguments.provider, model=arguments.model,
                                base_url=arguments.base_url, api_key_env=arguments.api_key_env,
                                timeout=arguments.timeout, options=options, source="flags")
    return Config(review=ReviewSettings(reviewers=("eval",)), reviewers={"eval": settings}), "eval"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0] if __doc__ else None)
    parser.add_argument("--config", help="a reviewgate config file holding the [reviewer.NAME] table")
    parser.add_argument("--reviewer", help="which [reviewer.NAME] of --config (default: its first model reviewer)")
    parser.add_argument("--provider", choices=("openai", "anthropic"), help="without --config: the provider")
    parser.add_argument("--model", help="without --config: the model name")
    parser.add_argument("--base-url", help="without --config: the API's base URL")
    parser.add_argument("--api-key-env", help='without --config: the variable holding the key ("" for none)')
    parser.add_argument("--timeout", type=float, default=120.0, help="seconds per request")
    parser.add_argument("--input-price", type=float, help="per million input tokens")
    parser.add_argument("--output-price", type=float, help="per million output tokens")
    parser.add_argument("--no-second-look", action="store_true", help="without --config: verify_findings = false")
    parser.add_argument("--cases", action="append", type=Path, help="a directory of *.toml cases (repeatable)")
    parser.add_argument("--tolerance", type=int, default=3, help="lines a finding may be off (default 3)")
    parser.add_argument("--jobs", type=int, default=4, help="cases reviewed at once (default 4)")
    parser.add_argument("--stand-in", action="store_true",
                        help="review with the stand-in model on 127.0.0.1 that reads only what it is sent")
    arguments = parser.parse_args(argv)
    if arguments.stand_in:
        with stand_in.ModelServer([], responder=stand_in_review) as server:
            arguments.provider, arguments.model, arguments.base_url = "openai", "stand-in", f"{server.url}/v1"
            arguments.api_key_env, arguments.no_second_look = "", True
            return _evaluate_and_print(arguments)
    return _evaluate_and_print(arguments)


def _evaluate_and_print(arguments: argparse.Namespace) -> int:
    try:
        if arguments.jobs < 1 or arguments.tolerance < 0:
            raise UsageError("--jobs must be at least 1 and --tolerance at least 0")
        config, name = _config(arguments)
        cases = load_cases(arguments.cases or [DEFAULT_CASES])
        totals, review, second = evaluate(config, name, cases, arguments.tolerance, arguments.jobs)
    except (UsageError, ConfigError) as error:
        print(f"model_eval: {error}", file=sys.stderr)
        return 2
    settings = config.reviewers[name]
    print(render(f"{settings.provider} {settings.model or ''}".strip(), totals, review, second, arguments.tolerance))
    return 0


if __name__ == "__main__":
    sys.exit(main())
