"""JavaScript and TypeScript failures that nobody hears: unhandled rejections, catches that return a
default around a security check, and deliberate fallbacks whose comment says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from reviewgate.findings import Finding
from reviewgate.reviewers.builtin.lenses.security.fallback import security_check
from testing.lenses import review_change


def _found(findings: list[Finding], rule: str) -> list[tuple[int | None, str]]:
    return sorted((item.line, item.severity.value) for item in findings if item.rule == rule)


UNHANDLED = "correctness/unhandled-rejection"

PROMISES = """async function load(url: string): Promise<string> {
  const response = await fetch(url);
  return response.text();
}

async function quiet(): Promise<void> {
  try {
    await load('/a');
  } catch (error) {
    console.error(error);
  }
}

export class Cache {
  async refresh(): Promise<void> {
    await load('/b');
  }

  start(schema: { safeParse(value: unknown): unknown }): Promise<string> {
    void this.refresh();
    void this.refresh().catch((error) => console.error(error));
    void load('/c').then(render, report);
    this.refresh();
    quiet();
    void quiet();
    void schema.safeParse({ v: 'x' });
    void fetch('/ping');
    void (async () => {
      await load('/d');
    })();
    void saveAsync();
    const pending = this.refresh();
    this.refresh() || other();
    return load('/e');
  }
}

main();
void main();
"""


def test_unhandled_rejection_needs_evidence_of_a_promise(tmp_path: Path) -> None:
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/cache.ts": PROMISES})
    assert _found(findings, UNHANDLED) == [
        (20, "major"),  # void of a method declared async in the file
        (23, "major"),  # the same method called and left floating
        (27, "major"),  # fetch is awaited elsewhere in the file
        (28, "major"),  # an async arrow called in place
        (31, "minor"),  # only the name says it is a promise
    ]
    first = next(item for item in findings if item.rule == UNHANDLED)
    assert "`refresh` is declared `async` at line 15" in first.body
    assert "Matched `void this.refresh();`" in first.body


def test_unhandled_rejection_only_on_added_lines(tmp_path: Path) -> None:
    base = "export async function a(): Promise<void> {}\nexport function b(): void {\n  void a();\n}\n"
    findings = review_change(tmp_path, {"src/a.ts": base}, {"src/a.ts": base + "export const c = 1;\n"})
    assert _found(findings, UNHANDLED) == []


SECURITY = """export async function isValid(token, verifyToken) {
  try {
    await verifyToken(token);
    return true;
  } catch (error) {
    return false;
  }
}

export function claims(token, key) {
  try {
    return jwt.verify(token, key);
  } catch {
    return true;
  }
}

export function allowed(user) {
  return hasPermission(user, 'admin').catch(() => false);
}

export function items(text) {
  try {
    return JSON.parse(nextToken(text));
  } catch {
    return [];
  }
}

export function shape(jwt) {
  try {
    return jwt.split('.').length === 3;
  } catch {
    return false;
  }
}

export function checked(token) {
  try {
    return checkAuth(token);
  } catch (error) {
    if (error instanceof Expired) return false;
    throw error;
  }
}
"""


def test_catch_returning_a_default_around_a_security_check(tmp_path: Path) -> None:
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/auth.js": SECURITY})
    assert _found(findings, "correctness/swallowed-exception") == [(5, "major"), (13, "major"), (19, "major")]
    bodies = [item.body for item in findings if item.rule == "correctness/swallowed-exception"]
    assert "`verifyToken(...)`" in bodies[0] and "return `false`" in bodies[0]
    assert "lets every caller through" in bodies[1]


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("verifyToken", True),
        ("jwt.verify", True),
        ("hasPermission", True),
        ("validate_csrf", True),
        ("checkAuth", True),
        ("validateToken", True),
        ("nextToken", False),
        ("tokenize", False),
        ("jwt.split", False),
        ("setAuthor", False),
    ],
)
def test_security_check_names(name: str, expected: bool) -> None:
    assert security_check(name) is expected


FALLBACKS = """export function cancel(body?: ReadableStream): void {
  // Ignore cancellation failures from already-locked or already-consumed streams.
  void body?.cancel().catch(() => undefined);
}

export function message(value: unknown): string {
  let text = 'Non-error value was thrown';
  try {
    text = String((value as Error).message);
  } catch {
    // Use default message if accessing properties throws
  }
  return text;
}

export function load(storage: Storage): string[] {
  try {
    storage.setItem('seen', JSON.parse(storage.getItem('k') ?? '[]'));
  } catch {
    // ignore
  }
  // Read the cached items back
  try {
    storage.setItem('k', '[]');
  } catch {}
  try { storage.clear(); } catch (e) { /* TODO: handle this properly later on */ }
  return [];
}

export function recursive(schema: unknown): boolean {
  // Walking the graph reads getters that may throw: treat "can't tell" as recursive.
  let result = true;
  try {
    result = walk(schema);
  } catch {}
  return result;
}
"""


def test_a_fallback_whose_comment_says_why_is_minor(tmp_path: Path) -> None:
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/fallbacks.ts": FALLBACKS})
    assert _found(findings, "correctness/empty-catch") == [
        (3, "minor"),
        (10, "minor"),
        (19, "major"),  # "ignore" is not a reason
        (25, "major"),  # the comment above the try says what, not why
        (26, "major"),  # a to-do is not a reason
        (35, "minor"),  # the reason is above the line that sets the fallback value
    ]
    minor = next(item for item in findings if item.line == 10)
    assert "Use default message if accessing properties throws" in minor.body
    major = next(item for item in findings if item.line == 19)
    assert 'only "ignore"' in major.body


def test_a_catch_inside_the_arguments_does_not_handle_the_chain(tmp_path: Path) -> None:
    source = """async function send(job: () => Promise<void>): Promise<void> {
  await job();
}

export function schedule(queue: Promise<void>): void {
  void send(() => queue.catch(() => undefined));
  void send(job).then(done, failed);
  void send(job).then(done,);
}
"""
    findings = review_change(tmp_path, {"README.md": "x\n"}, {"src/jobs.ts": source})
    assert _found(findings, UNHANDLED) == [(6, "major"), (8, "major")]
