"""The review flow every model reviewer shares: chunk, prompt, ask, check, place, merge.

A provider supplies only a Transport (one conversation in, one reply out). Whatever goes
wrong ends as a `blocked` outcome with its reason, never as approval (DESIGN.md, Principles).
With a chunk store (review_cache.py), a chunk whose prompt was answered before (the same
text and context, line numbers aside) is not asked again: its stored answer, its lines moved
with their hunks (rebasing.py), is placed on this head like a fresh one. The chunks the store
cannot answer are asked together, in as few requests as max_input_tokens allows, and each
request's answer is split back and stored per chunk (packing.py).
"""

from __future__ import annotations

import json
import os
import time
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from dataclasses import astuple, replace
from typing import Any

from reviewgate.cache_keys import cache_key, now_text, text_digest
from reviewgate.chunk_store import ChunkStore
from reviewgate.config import Config, ReviewerSettings
from reviewgate.context import ReviewRequest
from reviewgate.findings import Finding, sort_key
from reviewgate.policy.instructions import PathInstruction, instructions_for
from reviewgate.reviewers.base import ChunkReuse, ReviewerOutcome, ReviewerStatus, Usage
from reviewgate.reviewers.model.answered import (
    answered_fingerprints,
    keep_earlier_ids,
    mark_answered,
    record_places,
)
from reviewgate.reviewers.model.asking import AskFailed, ask_with_repair, usage_of
from reviewgate.reviewers.model.chunk_work import (
    ChunkResult,
    Prepared,
    chunk_material,
    context_budget_for,
    request_shares,
)
from reviewgate.reviewers.model.chunking import DIFF_CONTEXT_LINES_WITH_TOOLS, Chunk, plan_chunks, request_diff
from reviewgate.reviewers.model.context_collector import (
    INLINE_SITES_WITH_TOOLS,
    collect_context,
    merged_context,
)
from reviewgate.reviewers.model.contract import ContractError, ParsedReview, parse_review, wire_schema
from reviewgate.reviewers.model.deadline import chunk_deadline
from reviewgate.reviewers.model.options import ModelOptions, settings_identity
from reviewgate.reviewers.model.packing import pack, split_answer
from reviewgate.reviewers.model.placement import place_all
from reviewgate.reviewers.model.prompt import (
    Conversation,
    build_conversation,
    prompt_version,
    render_rules,
    review_system,
)
from reviewgate.reviewers.model.push_cadence import PrefixCadence
from reviewgate.reviewers.model.rebasing import rebase_findings
from reviewgate.reviewers.model.rendering import CHARACTERS_PER_TOKEN, estimate_tokens
from reviewgate.reviewers.model.reply import Reply, Transport
from reviewgate.reviewers.model.suggestions import check_suggestions
from reviewgate.reviewers.model.tool_loop import ToolBounds, ToolingTransport
from reviewgate.reviewers.model.tools import ReadTools, replayed, transcript_text
from reviewgate.reviewers.model.verification import SecondLookPolicy, take_second_look
from reviewgate.reviewers.model.withheld import withheld_reason
from reviewgate.text import printable

PROMPT_MARGIN_TOKENS = 500  # headroom for the estimate being rough and for the repair turn
MIN_DIFF_BUDGET = 200  # below this not even one small hunk fits: the configuration is wrong
def missing_key_message(name: str, variable: str) -> str:
    return (
        f"the API key variable ${variable} is not set, so reviewer {name!r} cannot run. In a pull request "
        "from a fork, GitHub withholds secrets: set on-missing-key to 'skip' (reviewer option "
        "on_missing_key, flag --on-missing-key) to skip this reviewer there instead of blocking"
    )


class ModelReviewer:
    """A reviewer backed by a model; `transport` speaks one provider's wire format."""

    # A shard (`run --shard`) reviews its own files' chunks; the context it reads still sees
    # every path the branch changes.
    reviews_by_file = True

    def __init__(
        self,
        settings: ReviewerSettings,
        options: ModelOptions,
        transport: Transport,
        key_variable: str | None,
    ) -> None:
        self.name = settings.name
        self.settings = settings
        self.options = options
        self.transport = transport
        self.key_variable = key_variable or None
        self.second_look = SecondLookPolicy.own_model(self)

    def attach_review_policy(self, config: Config) -> None:
        """What the reviewer needs from the whole config: `[review] min_confidence` and the
        reviewer `verifier` names (another configured model)."""
        self.second_look = SecondLookPolicy.from_config(self, config, _model_reviewer)

    def cache_identity(self) -> dict[str, Any]:
        return {
            "reviewer": self.name,
            **settings_identity(self.settings),
            "prompt": prompt_version(),
            "second_look": self.second_look.identity(),
            "tools": list(astuple(ToolBounds.of(self.options))) if self.options.tools else None,
        }

    def chunk_key_extra(self, request: ReviewRequest) -> dict[str, Any]:
        """What else a chunk's answer depends on beyond the prompt sent (an agent that reads
        the whole tree adds the tree)."""
        return {}

    def _ask(self, conversation: Conversation, key: str | None, result: ChunkResult,
             transport: Transport | None = None) -> tuple[ParsedReview, str] | None:
        """One request, and one repair request when the answer does not match the contract;
        the review and the reply text it was read from."""
        # The tool loop's rounds have their own bound (tool_seconds); the answer after them still
        # gets chunk_timeout.
        seconds = self.options.chunk_timeout + (self.options.tool_seconds if transport is not None else 0.0)
        try:
            with chunk_deadline(seconds):
                return ask_with_repair(transport or self.transport, conversation, key,
                                       lambda text: (parse_review(text), text), result.usage, notes=result.notes)
        except AskFailed as error:
            result.blocked = str(error)
            return None

    def _answer_key(self, request: ReviewRequest, store: ChunkStore, material: dict[str, Any],
                    result: ChunkResult) -> str | None:
        """Where the chunk's answer is stored. With the tools, the key holds every call the answer
        was made with and a digest of what each returned: the calls stored under the chunk's key
        are made again on this tree, and the answer is reused only if each returns the same."""
        if not self.options.tools:
            return cache_key(material)
        transcript = store.load(cache_key({**material, "part": "tool calls"}))
        if transcript is None:
            return None
        try:
            calls = json.loads(transcript.text)
        except ValueError:
            return None
        if not isinstance(calls, list):
            return None
        again = replayed(request, [call for call in calls if isinstance(call, dict)])
        result.tool_calls = [{**call, "reused": True} for call in again]
        return cache_key({**material, "tool calls": text_digest(transcript_text(again))})

    def _save(self, store: ChunkStore, material: dict[str, Any], answer: str, share: Usage,
              spans: dict[str, tuple[tuple[int, int], ...]], calls: list[dict[str, Any]] | None) -> str | None:
        """The answer stored (with the tools: under its calls, which are stored under the chunk's
        key); a problem saving it, or None."""
        if calls is None:
            return store.save(cache_key(material), material, answer, share, spans)
        problem = store.save(cache_key({**material, "part": "tool calls"}), material,
                             json.dumps([{"tool": call["tool"], "arguments": call["arguments"]} for call in calls]),
                             Usage())
        keyed = {**material, "tool calls": text_digest(transcript_text(calls))}
        return problem or store.save(cache_key(keyed), keyed, answer, share, spans)

    def _stored(self, request: ReviewRequest, store: ChunkStore | None, material: dict[str, Any], chunk: Chunk,
                result: ChunkResult) -> ParsedReview | None:
        """The chunk's stored answer, read through the contract again (an entry the contract no
        longer accepts is a miss), its lines moved to where the chunk's hunks stand now."""
        answer_key = self._answer_key(request, store, material, result) if store is not None else None
        stored = store.load(answer_key) if store is not None and answer_key is not None else None
        if stored is None:
            result.tool_calls = []
            return None
        try:
            parsed = parse_review(stored.text)
        except ContractError:
            return None
        result.reused = Reply("", stored.input_tokens, stored.output_tokens, stored.requests)
        rebased = rebase_findings(parsed.findings, stored.spans, chunk.spans)
        result.moved += rebased.unplaced
        return replace(parsed, findings=rebased.findings)

    def _prepare(
        self, request: ReviewRequest, chunk: Chunk, context_budget: int,
        store: ChunkStore | None = None, key_extra: dict[str, Any] | None = None,
    ) -> Prepared:
        """The chunk's context, rules and cache key, and its stored answer when there is one."""
        result = ChunkResult(redactions=list(chunk.redactions))
        branch_paths = {change.path for change in request.target.files}
        context = collect_context(request, chunk.files, context_budget_for(chunk, context_budget), branch_paths,
                                  context_budget, INLINE_SITES_WITH_TOOLS if self.options.tools else None)
        result.redactions += context.redactions
        paths = {change.path for change in chunk.files}
        # Only the rejections on this chunk's files: an answer on another file changes nothing
        # here, and so does not make this chunk's cached answer miss.
        rejections = tuple(item for item in request.rejections if item.path in paths)
        instructions = instructions_for(request.instructions, sorted(paths))
        material = chunk_material(self.cache_identity(), chunk.key_text, context.key_texts(), review_system(),
                                  [render_rules(instructions), request.reproduction or "",
                                   *(f"{item.path}\0{item.line}\0{item.reason}" for item in rejections)])
        material.update(key_extra or {})
        prepared = Prepared(chunk, context, rejections, instructions, material, result)
        prepared.stored = self._stored(request, store, material, chunk, result)
        return prepared

    def _ask_together(self, request: ReviewRequest, pieces: list[Prepared], key: str | None,
                      store: ChunkStore | None, blocks: Counter[str], sharing: int = 1,
                      recent: bool = False) -> None:
        """One request for chunks the cache could not answer; its answer split back into one per
        chunk, each stored under the chunk's own key. When it fails, every one of its chunks is
        not reviewed, with the reason."""
        first = pieces[0].result  # carries the request's cost, notes and the forge text's redactions
        rejections = tuple(dict.fromkeys(item for piece in pieces for item in piece.rejections))
        spans: dict[str, tuple[tuple[int, int], ...]] = {}
        for piece in pieces:
            for path, hunks in piece.chunk.spans.items():
                spans[path] = spans.get(path, ()) + hunks
        context = merged_context((item for piece in pieces for item in piece.context.items), spans)
        conversation = replace(build_conversation(request_diff((piece.chunk for piece in pieces), blocks), context,
                                                  request.reproduction, rejections, pieces[0].instructions),
                               prefix_requests=sharing, prefix_recent=recent)
        first.redactions += conversation.redactions
        tools = ReadTools(request) if self.options.tools else None
        transport = ToolingTransport(self.transport, tools, ToolBounds.of(self.options)) if tools else None
        asked = self._ask(conversation, key, first, transport)
        first.tool_calls = list(tools.calls) if tools is not None else []
        if asked is None:
            for piece in pieces[1:]:
                piece.result.blocked = first.blocked
            return
        answers = split_answer(asked[1], [piece.chunk.spans for piece in pieces])
        shares = request_shares(self._usage(first.usage), [piece.tokens() for piece in pieces])
        for piece, answer, share in zip(pieces, answers, shares, strict=True):
            if store is not None:  # only answers that passed the contract are stored
                problem = self._save(store, piece.material, answer, share, piece.chunk.spans,
                                     tools.calls if tools is not None else None)
                if problem is not None:
                    first.notes.append(problem)
            piece.stored = parse_review(answer)  # a part of an answer that passed: it passes

    def _finish(self, request: ReviewRequest, piece: Prepared) -> ChunkResult:
        """The chunk's answer placed on this head."""
        result, parsed = piece.result, piece.stored
        if parsed is None or result.blocked:
            return result
        placement = place_all(self.name, request.target, request.head, parsed.findings)
        result.findings = check_suggestions(placement.findings, request.target, request.head)
        result.dropped = [*parsed.drop_reasons, *placement.dropped]
        result.moved += placement.moved
        result.summary, result.verdict = parsed.summary, parsed.verdict
        result.product_questions = list(parsed.product_questions)
        result.notes += parsed.notes
        return result

    def _usage(self, replies: list[Reply]) -> Usage:
        return usage_of(replies, self.options)

    def review(self, request: ReviewRequest, store: ChunkStore | None = None) -> ReviewerOutcome:
        started = time.monotonic()
        key: str | None = None
        if self.key_variable is not None:
            key = os.environ.get(self.key_variable) or None
            if key is None:
                skip = self.options.on_missing_key == "skip"
                return ReviewerOutcome(
                    reviewer=self.name,
                    status=ReviewerStatus.SKIPPED if skip else ReviewerStatus.BLOCKED,
                    reason=missing_key_message(self.name, self.key_variable),
                )
        branch_paths = {change.path for change in request.target.files}
        withheld = [(change, withheld_reason(change.path, branch_paths))
                    for change in request.target.files if request.in_scope(change.path)]
        shown = [change for change, reason in withheld if reason is None]
        notes = [
            f"not shown to the reviewer: {printable(change.path)}: {reason}"
            for change, reason in withheld
            if reason
        ]
        # The rules go in each chunk's user message; all of them are counted, to be safe. The
        # answer's schema goes with every request too (response_format, tool), outside the margin.
        system_tokens = estimate_tokens(review_system() + render_rules(request.instructions)
                                        + json.dumps(wire_schema()))
        context_tokens = self.options.context_chars // CHARACTERS_PER_TOKEN
        diff_budget = self.options.max_input_tokens - system_tokens - context_tokens - PROMPT_MARGIN_TOKENS
        if diff_budget < MIN_DIFF_BUDGET:
            return ReviewerOutcome(
                self.name,
                ReviewerStatus.BLOCKED,
                reason=(
                    f"max_input_tokens {self.options.max_input_tokens} leaves no room for the diff after the "
                    f"instructions (~{system_tokens} tokens) and context_chars {self.options.context_chars} "
                    f"(~{context_tokens} tokens)"
                ),
            )
        plan = plan_chunks(shown, diff_budget, DIFF_CONTEXT_LINES_WITH_TOOLS if self.options.tools else None)
        key_extra = self.chunk_key_extra(request) if store is not None else {}
        with ThreadPoolExecutor(max_workers=self.options.concurrency) as pool:
            pieces = list(pool.map(
                lambda chunk: self._prepare(request, chunk, self.options.context_chars, store, key_extra),
                plan.chunks,
            ))
            # What the cache could not answer, packed into as few requests as the window allows
            # (every chunk fits alone: its diff within diff_budget, its context within context_chars).
            # Only chunks under the same repository rules share a request: a rule is shown to the
            # chunks of the files it covers, as each chunk's cache key says.
            room = self.options.max_input_tokens - system_tokens - PROMPT_MARGIN_TOKENS
            by_rules: dict[tuple[PathInstruction, ...], list[Prepared]] = {}
            for piece in pieces:
                if piece.stored is None:
                    by_rules.setdefault(piece.instructions, []).append(piece)
            asks = [together for group in by_rules.values() for together in pack(group, Prepared.tokens, room)]
            blocks = Counter(path for chunk in plan.chunks for path in chunk.spans)
            for number, together in enumerate(asks):
                for piece in together:
                    piece.result.request = number
            # With more than one request, the others read the prefix the first wrote to the provider's
            # cache; after a recent run, this one's requests read it or write it for the next.
            cadence = PrefixCadence.read(store, self.settings, self.options)
            list(pool.map(lambda together: self._ask_together(request, together, key, store, blocks, len(asks),
                                                              cadence.recent), asks))
        problem = cadence.record(store, any(not piece.result.blocked for together in asks for piece in together))
        notes += [problem] if problem else []
        results = [self._finish(request, piece) for piece in pieces]
        outcome = self._merge(results, plan.not_reviewed, notes, time.monotonic() - started)
        outcome = outcome._replace(notes=(*outcome.notes, *self.transport.run_notes()))
        if store is not None:
            answered = answered_fingerprints(request.rejections, store)
            findings = keep_earlier_ids(outcome.findings, store, request.head)
            findings = tuple(sorted(mark_answered(findings, answered, request.head), key=sort_key))
            problems = record_places(findings, store, request.head, now_text())
            outcome = outcome._replace(findings=findings, notes=(*outcome.notes, *problems))
        # After the answered ones are set aside: a finding a person already answered is not asked about.
        return take_second_look(self, request, outcome, key, started, store)

    def _reuse(self, results: list[ChunkResult]) -> tuple[ChunkReuse, str]:
        """The counts, and the note the summary shows."""
        reused = [result.reused for result in results if result.reused is not None]
        failed = sum(1 for result in results if result.blocked)  # asked, but not reviewed
        saved = self._usage(reused)
        counts = ChunkReuse(reviewed=len(results) - len(reused) - failed, reused=len(reused), saved=saved)
        note = f"{counts.reviewed} chunk(s) reviewed, {counts.reused} reused from the cache"
        if failed:
            note += f", {failed} failed"
        if reused:
            note += (f", which saved {saved.requests} request(s), {saved.input_tokens:,} input and "
                     f"{saved.output_tokens:,} output tokens")
            if saved.cost is not None:
                note += f" (about ${saved.cost:.4f})"
        return counts, note

    def _merge(
        self, results: list[ChunkResult], not_reviewed: tuple[str, ...], notes: list[str], duration: float
    ) -> ReviewerOutcome:
        counts, reuse_note = self._reuse(results)
        notes = [*([reuse_note] if results else []), *notes, *(note for result in results for note in result.notes)]
        findings: dict[str, Finding] = {}
        for result in results:
            for finding in result.findings:
                findings.setdefault(finding.id, finding)
        questions = list(
            dict.fromkeys(question for result in results for question in result.product_questions)
        )
        dropped = [reason for result in results for reason in result.dropped]
        redactions = list(
            dict.fromkeys(found.describe() for result in results for found in result.redactions)
        )
        notes += redactions
        if dropped:
            notes.append(
                f"dropped {len(dropped)} finding(s) the reviewer returned: " + "; ".join(dropped[:10])
            )
        moved = sum(result.moved for result in results)
        if moved:
            notes.append(f"moved {moved} finding(s) to the nearest changed line or to file level")
        verdicts = sorted({result.verdict for result in results if result.verdict})
        if verdicts:
            notes.append(
                f"the reviewer's own verdict: {', '.join(verdicts)} "
                "(the gate decides from the recorded severities)"
            )
        if len(results) > 1:
            asked = [result.request for result in results if result.request >= 0]
            notes.append(f"the diff was reviewed in {len(results)} chunks"
                         + (f", {len(asked)} of them asked in {len(set(asked))} request(s)" if asked else ""))
        # One reason per failed request: the chunks it held share it.
        blocked = list(dict.fromkeys((result.request, result.blocked) for result in results if result.blocked))
        reason = ""
        if blocked:
            reason = blocked[0][1] + (
                f" (and {len(blocked) - 1} more request(s) failed)" if len(blocked) > 1 else ""
            )
        elif not_reviewed:
            # Said in the reason even when policy lets it pass: the summary shows reasons, and a
            # partially reviewed change is never approved silently.
            reason = (
                f"{len(not_reviewed)} part(s) of the change were too large to review and were not reviewed: "
                + "; ".join(not_reviewed)
            )
        is_blocked = bool(blocked) or (bool(not_reviewed) and self.options.on_unreviewed == "blocked")
        return ReviewerOutcome(
            reviewer=self.name,
            status=ReviewerStatus.BLOCKED if is_blocked else ReviewerStatus.OK,
            findings=tuple(sorted(findings.values(), key=sort_key)),
            reason=reason,
            product_questions=tuple(questions),
            # The chunks of one request share its summary: shown once.
            summary="\n\n".join(dict.fromkeys(result.summary for result in results if result.summary)),
            usage=self._usage([reply for result in results for reply in result.usage]),
            duration_seconds=duration,
            dropped=len(dropped),
            not_reviewed=not_reviewed,
            notes=tuple(notes),
            cached=bool(results) and counts.reused == len(results),
            chunks=counts,
            tool_calls=tuple(call for result in results for call in result.tool_calls),
        )


def _model_reviewer(settings: ReviewerSettings) -> ModelReviewer:
    """The reviewer a `verifier = NAME` names, built from its `[reviewer.NAME]` settings (an API
    model: verification.verifier_settings checked its provider). The registry is imported here:
    it imports the providers' modules, which import this one, on use."""
    from reviewgate.reviewers import providers

    other = providers[settings.provider](settings)
    assert isinstance(other, ModelReviewer), f"{settings.provider} builds a model reviewer"
    return other
