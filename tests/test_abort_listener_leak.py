"""`correctness/listener-leak` on an `AbortSignal` the caller passed in: an `abort` listener added
on every call and never removed, beside the look-alikes that use the function's own controller,
`{ once: true }`, `removeEventListener` or `AbortSignal.any`."""

from __future__ import annotations

from pathlib import Path

from testing.lenses import found_at, review_change

BASE = {"README.md": "project\n"}
RULE = "correctness/listener-leak"

CLIENT = """\
export class Client {
  constructor(options) {
    this._options = options;
  }

  async request(url) {
    this.abortController = new AbortController();
    const originalSignal = this._options.signal;
    originalSignal?.addEventListener('abort', () => {
      this.abortController.abort(originalSignal.reason);
    });
    this.abortController.signal.addEventListener('abort', () => this.log('aborted'));
    return fetch(url, {signal: this.abortController.signal});
  }
}

export async function withParameter(url, signal) {
  signal.addEventListener("abort", () => console.log(url));
  return fetch(url);
}

export async function once(url, {signal}) {
  signal.addEventListener('abort', () => console.log(url), {once: true});
  return fetch(url, {signal});
}

export async function removed(url, signal) {
  const onAbort = () => console.log(url);
  signal.addEventListener('abort', onAbort);
  try {
    return await fetch(url);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}

export async function combined(url, options) {
  const own = new AbortController();
  const signal = AbortSignal.any([options.signal, own.signal]);
  signal.addEventListener('abort', () => own.abort());
  return fetch(url, {signal});
}
"""


def test_an_abort_listener_on_the_callers_signal_is_reported_its_look_alikes_are_not(tmp_path: Path) -> None:
    findings = review_change(tmp_path, BASE, {"source/client.js": CLIENT, "test/client.js": CLIENT})
    assert found_at(findings, RULE) == [("source/client.js", 9), ("source/client.js", 18)]
    assert all(item.severity.value == "minor" for item in findings if item.rule == RULE)
