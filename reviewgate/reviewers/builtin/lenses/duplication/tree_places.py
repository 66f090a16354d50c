"""The DRY search's tree side: every place of the repository at head that shares a window with
the added code (added_code.py), found through the stored index of each file's fingerprints
(index.py): a run reads and normalizes only files it has not seen and files sharing a fingerprint
with the added code.
"""

from __future__ import annotations

from array import array
from collections.abc import Iterator
from dataclasses import dataclass

from reviewgate.context import ReviewRequest
from reviewgate.reviewers.builtin.language_table import language_of
from reviewgate.reviewers.builtin.lenses.duplication import runs
from reviewgate.reviewers.builtin.lenses.duplication.added_code import Query
from reviewgate.reviewers.builtin.lenses.duplication.candidate_files import MAX_FILE_BYTES, is_product_candidate
from reviewgate.reviewers.builtin.lenses.duplication.fingerprints import Normalized, anchor_hashes_of
from reviewgate.reviewers.builtin.lenses.duplication.hashes import HASH_TYPECODE, Hashes
from reviewgate.reviewers.builtin.lenses.duplication.index import BlobIndex
from reviewgate.text import decode_text

# Files whose bytes are read from git at once for the index: a git process costs a few
# milliseconds, 200 files of a repository a few megabytes.
READ_BATCH_FILES = 200


@dataclass(frozen=True)
class Places:
    """Every place of the tree a window of the added code shares, and the texts of the files they
    are in, by file number (runs.py)."""

    table: runs.PlaceTable
    texts: runs.Texts
    paths: list[str]  # by file number
    numbers: dict[str, int]


def anchors_of(normalized: Normalized) -> tuple[Hashes, Hashes]:
    """A file's line-start windows, offsets and hashes: 4 bytes each while the tree is read."""
    offsets = normalized.anchor_offsets()
    return array(HASH_TYPECODE, offsets), normalized.anchor_hashes(offsets)


def read_in_batches(request: ReviewRequest, blobs: dict[str, str]) -> Iterator[tuple[str, bytes]]:
    """Each blob's path and bytes, in order, read READ_BATCH_FILES at a time: a cold run reads
    every file of the repository, and all of their bytes at once (twice over while git's output is
    split) were the largest allocation of a large change's search."""
    paths = list(blobs)
    for first in range(0, len(paths), READ_BATCH_FILES):
        yield from request.head.read_blob_ids({path: blobs[path] for path in paths[first : first + READ_BATCH_FILES]}).items()


def places_of(request: ReviewRequest, queries: dict[str, Query]) -> tuple[Places, dict[str, Normalized], dict[str, str]]:
    """Fingerprints of the whole head tree, keeping only those the added code has. A file whose
    content an earlier run indexed (the stored hashes of its blob) is read only when it shares
    a hash with the added code.

    Two passes: every file's distinct hashes first (stored, or computed and then let go of
    with the file), then only the files sharing one of them with the added code are read for
    their places. What the added code and the tree share is known before any place is kept,
    so no set of every hash of the added code (a Python number each: 53 MB for 2.4 million
    windows at +300k lines, where 50,000 are shared) is built when the tree holds fewer."""
    stored = BlobIndex.for_request(request)
    blobs = {path: blob for path, blob in request.head.blob_ids(None, max_bytes=MAX_FILE_BYTES).items()
             if is_product_candidate(request, path)}
    digests = {path: stored.load(blob) for path, blob in blobs.items()}  # None: not stored
    unseen = {path: blob for path, blob in blobs.items() if digests[path] is None}
    # A changed file's line-start windows, computed once: 4-byte arrays while the tree is read.
    anchors: dict[str, tuple[Hashes, Hashes]] = {}
    for path in unseen.keys() & queries.keys():
        anchors[path] = anchors_of(queries[path].normalized)
        digests[path] = stored.add(unseen[path], anchors[path][1])
    for path, data in read_in_batches(request, {path: unseen[path] for path in unseen if path not in queries}):
        digests[path] = stored.add(unseen[path], anchor_hashes_of(data, language_of(path)))
    stored.save()
    known = {path: values for path, values in digests.items() if values is not None}
    shared = runs.shared_of([query.hashes for query in queries.values()], list(known.values()))
    known_paths = list(known)
    matching = [known_paths[number] for number in runs.holding(list(known.values()), shared)]
    del digests, known, known_paths
    kept = runs.shared_windows([query.hashes for query in queries.values()], [query.offsets for query in queries.values()], shared)
    for changed, (hashes, offsets) in zip(queries.values(), kept, strict=True):
        changed.hashes, changed.offsets = hashes, offsets
    normalized: dict[str, Normalized] = {}
    sources: dict[str, str] = {}  # whole texts: split into lines only for the few findings
    matching_anchors: list[tuple[Hashes, Hashes]] = []
    read = read_in_batches(request, {path: blobs[path] for path in matching if path not in queries})
    for path in matching:
        query = queries.get(path)
        if query is not None:
            # A changed file's text is the one its query holds (its normalized offsets are of
            # that text), not read nor decoded a second time.
            text, file_normalized = query.source, query.normalized
        else:
            read_path, data = next(read)
            assert read_path == path, "the matching files are read in the order asked"
            text = decode_text(data)
            file_normalized = Normalized.of(text, language_of(path))
        matching_anchors.append(anchors.pop(path) if path in anchors else anchors_of(file_normalized))
        normalized[path] = file_normalized
        sources[path] = text
    table = runs.PlaceTable.of(matching_anchors, shared)
    del matching_anchors
    # File numbers: the matching files in the table's order, then the changed files that have
    # no place in the tree (too large to index) but may still repeat one.
    paths = matching + [path for path in queries if path not in normalized]
    texts = runs.Texts.of([normalized[path].text if path in normalized else queries[path].normalized.text for path in paths])
    return Places(table, texts, paths, {path: number for number, path in enumerate(paths)}), normalized, sources
