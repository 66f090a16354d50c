"""The review stage, cancellable: reviewers run in a worker thread while the main thread, which
receives SIGTERM/SIGINT, waits and watches for the signal.

On a signal the stop is requested (stopping.py): a model request in flight is abandoned, an agent
CLI's process group killed, and the reviewers unwind, removing their temporary directories.
The main thread gives them STOP_GRACE_SECONDS to do so, then removes what is left and goes on to
publish: every reviewer that had not finished is `blocked` with the reason "cancelled by
SIGTERM". The worker thread is a daemon, so one stuck in anything else never holds the exit.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from reviewgate import stopping
from reviewgate.reviewers.base import Reviewer, ReviewerOutcome, ReviewerStatus
from reviewgate.verify.cancellation import Cancellation

POLL_SECONDS = 0.05
# Long enough for reviewers to unwind after their children are killed; short enough that the
# report is out well before the CI runner's SIGKILL (GitHub: 7.5 s after SIGINT, then 2.5 s).
STOP_GRACE_SECONDS = 3.0
# What a cancelled gate may still spend on the forge (forge/http.py Budget): the verdict and the
# check run's completion, before the runner kills the job.
CANCELLED_PUBLISH_SECONDS = 5.0


def cancelled_reason(cancellation: Cancellation) -> str:
    return f"cancelled by {cancellation.signal_name}"


def cancelled_outcomes(reviewers: Sequence[Reviewer], reason: str) -> tuple[ReviewerOutcome, ...]:
    return tuple(ReviewerOutcome(reviewer.name, ReviewerStatus.BLOCKED, reason=reason) for reviewer in reviewers)


def review_all(
    reviewers: Sequence[Reviewer],
    review_one: Callable[[Reviewer], ReviewerOutcome],
    cancellation: Cancellation,
) -> tuple[ReviewerOutcome, ...]:
    """Every reviewer's outcome, in order; those cut short by a signal are blocked."""
    finished: list[ReviewerOutcome] = []

    def work() -> None:
        for reviewer in reviewers:
            if stopping.stop_reason() is not None:
                return
            finished.append(review_one(reviewer))

    worker = threading.Thread(target=work, name="reviewgate-review", daemon=True)
    worker.start()
    while worker.is_alive() and not cancellation.cancelled:
        worker.join(POLL_SECONDS)
    if not cancellation.cancelled:
        return tuple(finished)
    reason = cancelled_reason(cancellation)
    stopping.request_stop(reason)
    worker.join(STOP_GRACE_SECONDS)
    stopping.remove_leftovers()
    done = list(finished)  # what the worker finished in time; it may still append, unread
    return (*done, *cancelled_outcomes(reviewers[len(done):], reason))
