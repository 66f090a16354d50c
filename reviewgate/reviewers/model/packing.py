"""Several chunks in one request, and the request's answer split back into one answer per chunk.

A push's chunks that the cache cannot answer are asked together, as few requests as the input
budget allows (the system message and the answer's schema, most of a small request's cost, are
paid once per request instead of once per chunk). Each chunk keeps its own cache entry: the
request's answer is split by where its findings land, so a later push re-sends only the chunks
whose diff or context changed, and a stored chunk's findings come back rebased (rebasing.py).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Any, TypeVar

from reviewgate.reviewers.model.contract import extract_json
from reviewgate.reviewers.model.placement import InvalidPath, clean_path

Spans = Mapping[str, tuple[tuple[int, int], ...]]  # path -> (first, last) new-file line of each hunk
Item = TypeVar("Item")


def pack(items: Sequence[Item], size: Callable[[Item], int], budget: int) -> list[list[Item]]:
    """`items` in order, in consecutive groups whose sizes sum to at most `budget`; an item larger
    than the budget alone is a group of its own (the planner already keeps every chunk within
    the budget by itself, so this does not happen in a review)."""
    groups: list[list[Item]] = []
    used = 0
    for item in items:
        cost = size(item)
        if groups and used + cost <= budget:
            groups[-1].append(item)
            used += cost
        else:
            groups.append([item])
            used = cost
    return groups


def _distance(line: int, spans: tuple[tuple[int, int], ...]) -> int:
    return min((max(first - line, line - last, 0) for first, last in spans), default=0)


def owner(finding: Any, chunk_spans: Sequence[Spans]) -> int:
    """The index of the chunk a finding of the request belongs to: the one whose hunk holds its
    line in its file, else the nearest hunk of that file (placement then moves or keeps it at file
    level, as for a chunk asked alone), else the first chunk of its file (a file-level finding),
    else the first chunk (a finding on the change as a whole, or on a file no chunk holds)."""
    raw = finding.get("path") if isinstance(finding, dict) else None
    paths = {path for spans in chunk_spans for path in spans}
    try:
        path = clean_path(raw, paths)
    except InvalidPath:
        return 0  # placement drops it and says why
    holders = [index for index, spans in enumerate(chunk_spans) if path in spans]
    if not holders:
        return 0
    line = finding.get("line")
    if not isinstance(line, int) or isinstance(line, bool):
        return holders[0]
    return min(holders, key=lambda index: (_distance(line, chunk_spans[index][path or ""]), index))


def split_answer(text: str, chunk_spans: Sequence[Spans]) -> list[str]:
    """One answer per chunk from the request's answer (which passed the contract): each holds
    the findings that belong to its chunk (`owner`), and the request's verdict, summary and
    product questions (the same for every chunk; the merge shows each once)."""
    document = extract_json(text)
    findings: list[list[Any]] = [[] for _ in chunk_spans]
    for item in document.get("findings", []):
        findings[owner(item, chunk_spans)].append(item)
    return [json.dumps({**document, "findings": own}, ensure_ascii=False) for own in findings]
