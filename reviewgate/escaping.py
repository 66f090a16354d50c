"""Untrusted text (file names, diff lines, model output, config keys, the app's logs) made safe
for the sink that shows it: one function per sink, and every one masks known credential
formats first (secret_formats.py, the table the model redaction uses).

- The CI runner (stdout and stderr): ANSI escapes and control bytes removed, and no line may
  begin with `::` (a workflow command, after the runner's own trimming of leading blanks) or
  hold `##[` (the runner's older command form).
- Markdown (summary.md, the step summary, PR comments and MR notes): HTML, mentions and
  autolinks neutralised, table pipes escaped, code spans fenced so no backtick closes them early, link
  addresses percent-encoded so no character ends them early; a fenced code block's code kept
  verbatim inside a fence of our own that nothing in it can close (entities are not decoded there).
- XML 1.0 (junit.xml): the characters XML 1.0 does not allow are removed.
- SARIF's file locations: a path as a percent-encoded URI reference.
"""

from __future__ import annotations

import re
from urllib.parse import quote

from reviewgate.lazy_patterns import LazyPattern
from reviewgate.secret_formats import mask_known_formats
from reviewgate.text import printable

# ECMA-48: CSI sequences (ESC [ ... final byte), OSC strings (ESC ] ... BEL or ST), and the
# two-byte escapes; the C1 control forms of CSI/OSC (U+009B, U+009D) are caught by _CONTROL.
_ANSI = LazyPattern(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-_]?")
# C0 and C1 controls except tab, line feed and carriage return (sinks decide about those),
# and the bidirectional overrides that make text read other than it is (CVE-2021-42574).
_CONTROL = LazyPattern(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
# XML 1.0's Char production is tab, LF, CR, U+0020-U+D7FF, U+E000-U+FFFD, U+10000-U+10FFFF;
# matched here as its complement, which compiles in a tenth of the time the allowed ranges take.
NOT_XML_CHARACTERS = "\x00-\x08\x0b\x0c\x0e-\x1f\ud800-\udfff\ufffe\uffff"  # a character class's body
_NOT_XML = LazyPattern(f"[{NOT_XML_CHARACTERS}]")
_LINE_BREAK = LazyPattern(r"\r\n|\r|\n")
# What the runner would take for a command: `::` at the start of a line after white space (it
# trims any, .NET's String.TrimStart), and the `##[` form anywhere in a line. The runner reads
# lines ending at LF, CR or CRLF, so a lone CR must count as a line end too.
_COMMAND_START = LazyPattern(r"^(\s*):(?=:)", re.MULTILINE)
_LEGACY_COMMAND = "##["
# A mention (@user, @org/team) where GitHub and GitLab would link it and notify. They look for
# `@name` after the start or a non-word character (ASCII word characters) of each piece of text
# the Markdown renders to, and Markdown can end a piece right before the `@`: after the `_` that
# closes `_emphasis_`, after a code span's backtick. `@@name` mentions `name` too. So every `@`
# before a name takes a zero-width space, unless an ASCII letter or digit precedes it: an e-mail
# address (a@b), whose `@` the escape below makes plain text.
_MENTION = LazyPattern(r"(?<![A-Za-z0-9])@(?=[A-Za-z0-9_])")
# Where GitHub's and GitLab's autolinking would make prose a live link (GFM's extended autolinks),
# so that no address an untrusted title or body names becomes a link in a comment the gate signs:
# a scheme's `://`, a `www.` at a word start and the `mailto:`/`xmpp:` schemes take a zero-width
# space (before `://` and the schemes' colon, after `www`), which reads the same; an e-mail
# address's `@` a backslash escape, which shows `@` and splits the text the autolinker reads (a
# zero-width space before it would make a mention of the domain, after it a domain of other letters).
_AUTOLINK = LazyPattern(r"(?i)(?=://)|(?<=\bwww)(?=\.)|(?<=\bmailto)(?=:)|(?<=\bxmpp)(?=:)")
_EMAIL_AT = LazyPattern(r"(?<=[\w.+-])@")  # after any character an address's local part may end with
ZERO_WIDTH_SPACE = "\u200b"
# What html.escape(quote=False) replaces, without loading the html module's entity table at start-up.
_HTML_SPECIAL = str.maketrans({"&": "&amp;", "<": "&lt;", ">": "&gt;"})


def mask(text: str) -> str:
    """Known credential formats masked; what every sink applies before anything else."""
    return mask_known_formats(text)[0]


def plain(text: str) -> str:
    """Masked, valid Unicode, without ANSI escapes or control bytes (tab and line breaks kept)."""
    return _CONTROL.sub("", _ANSI.sub("", mask(printable(text))))


def one_line(text: str) -> str:
    """`plain`, with every line break shown as a space: for one line of a listing."""
    return _LINE_BREAK.sub(" ", plain(text))


# --- the CI runner: stdout and stderr ---------------------------------------------------------


def for_runner(text: str) -> str:
    """Text for the CI log, any number of lines, none of which the runner takes for a command."""
    cleaned = _COMMAND_START.sub(rf"\1:{ZERO_WIDTH_SPACE}", _LINE_BREAK.sub("\n", plain(text)))
    return cleaned.replace(_LEGACY_COMMAND, f"##{ZERO_WIDTH_SPACE}[")


def runner_line(text: str) -> str:
    """One line for the CI log (a warning, an error): line breaks in untrusted text are shown as
    `\\n`, so nothing after them can start a line of its own."""
    return for_runner(_LINE_BREAK.sub(r"\\n", text))


# --- Markdown -----------------------------------------------------------------------------------


# A run of backticks not escaped by a backslash: what opens or closes a code span.
_BACKTICKS = LazyPattern(r"(?<!\\)`+")
_PARAGRAPH_BREAK = LazyPattern(r"(\n[ \t]*\n)")


def _paired_backticks(paragraph: str) -> str:
    """The paragraph with each backtick run that closes no code span of its own escaped: left
    open, it would pair with a backtick of the markup that follows (a rule id's code span), and
    turn the rest of the line into code (CommonMark 6.1: a span ends at the next run as long)."""
    runs = list(_BACKTICKS.finditer(paragraph))
    unpaired: list[re.Match[str]] = []
    index = 0
    while index < len(runs):
        length = len(runs[index].group())
        closing = next((at for at in range(index + 1, len(runs)) if len(runs[at].group()) == length), None)
        if closing is None:
            unpaired.append(runs[index])
            index += 1
        else:
            index = closing + 1  # the runs between are the span's text
    for run in reversed(unpaired):
        paragraph = paragraph[: run.start()] + "\\`" * len(run.group()) + paragraph[run.end() :]
    return paragraph


def _markdown(text: str, literal_backslashes: bool) -> str:
    escaped = plain(text)
    if literal_backslashes:  # before the escapes below add their own
        escaped = escaped.replace("\\", "\\\\")
    if "`" in escaped:
        escaped = "".join(_paired_backticks(part) for part in _PARAGRAPH_BREAK.split(escaped))
    escaped = _MENTION.sub(f"@{ZERO_WIDTH_SPACE}", escaped.translate(_HTML_SPECIAL))
    return _EMAIL_AT.sub(r"\\@", _AUTOLINK.sub(ZERO_WIDTH_SPACE, escaped))


def markdown_text(text: str) -> str:
    """Untrusted text in Markdown prose: no HTML, no live mentions or links, line breaks kept."""
    return _markdown(text, literal_backslashes=False)


def backtick_fence(content: str, shortest: int) -> str:
    """Backticks, one more than the longest run of them in `content` and at least `shortest`: a
    fence (or a code span's delimiter) that nothing inside can close (CommonMark 4.5, 6.1)."""
    longest = max((len(run) for run in re.findall(r"`+", content)), default=0)
    return "`" * max(shortest, longest + 1)


# A fenced code block's opening line (CommonMark 4.5): up to three spaces, three or more backticks
# or tildes, an info string (no backtick after a backtick fence).
_FENCE_OPEN = LazyPattern(r"^( {0,3})(`{3,}(?=[^`]*$)|~{3,})(.*)$")
# What the info string's first word (the language) keeps: it becomes an HTML class attribute.
_NOT_LANGUAGE = LazyPattern(r"[^A-Za-z0-9+#._-]")


def _code_block(indent: int, language: str, lines: list[str]) -> list[str]:
    """Code lines verbatim (`plain` already) in a backtick fence longer than any run
    of backticks inside: no line of the code can close it, and nothing inside a fence is HTML,
    a mention, a link or an entity (CommonMark 4.5, 6.6)."""
    content = [line[min(indent, len(line) - len(line.lstrip(" "))):] for line in lines]
    fence = backtick_fence("\n".join(content), 3)
    words = language.split()
    return [f"{fence}{_NOT_LANGUAGE.sub('', words[0]) if words else ''}", *content, fence]


def markdown_body(text: str) -> str:
    """Untrusted Markdown with fenced code blocks (a finding's body, a model's explanation): the
    code inside each fence verbatim, in a fence of our own that always closes (an unclosed one
    runs to the end, as CommonMark reads it); everything outside the fences as `markdown_text`."""
    output: list[str] = []
    prose: list[str] = []
    # Fences are found in the text as shown: an escape sequence removed can leave one behind.
    lines = _LINE_BREAK.split(plain(text))
    if len(lines) > 1 and not lines[-1]:  # the break that ends the last line starts no line of its own
        lines.pop()
    index = 0
    while index < len(lines):
        opening = _FENCE_OPEN.match(lines[index])
        if opening is None:
            prose.append(lines[index])
            index += 1
            continue
        indent, fence, info = len(opening.group(1)), opening.group(2), opening.group(3)
        closing = re.compile(rf"^ {{0,3}}{re.escape(fence[0])}{{{len(fence)},}}[ \t]*$")
        end = next((at for at in range(index + 1, len(lines)) if closing.match(lines[at])), len(lines))
        if prose:
            output.append(markdown_text("\n".join(prose)))
            prose = []
        output += _code_block(indent, info, lines[index + 1 : end])
        index = end + 1
    if prose:
        output.append(markdown_text("\n".join(prose)))
    return "\n".join(output)


def markdown_cell(text: str) -> str:
    """Untrusted text in a Markdown table cell: `markdown_text` on one line, pipes escaped (GFM
    splits cells on an unescaped pipe before anything else), backslashes kept literal."""
    return _markdown(_LINE_BREAK.sub(" ", text), literal_backslashes=True).replace("|", "\\|")


def markdown_code(text: str, in_table: bool = False) -> str:
    """Untrusted text as an inline code span: fenced by one backtick more than its longest run
    of backticks, padded when it starts or ends with one (CommonMark 6.1). Nothing inside a code
    span is HTML or a mention, so only control bytes, line breaks and, in a table, pipes need care."""
    content = one_line(text)
    fence = backtick_fence(content, 1)
    if content.startswith("`") or content.endswith("`") or not content.strip():
        content = f" {content} "
    if in_table:
        content = content.replace("|", "\\|")
    return f"{fence}{content}{fence}"


def html_code(text: str) -> str:
    """Untrusted text as a `<code>` element inside an HTML block (a `<details>` block's summary),
    where Markdown is not read: HTML escaped, on one line; no mention is linked inside code."""
    return f"<code>{one_line(text).translate(_HTML_SPECIAL)}</code>"


def markdown_suggestion(replacement: str, gitlab_lines_below: int | None = None) -> str:
    """A suggested change as GitHub's ```suggestion block (one click applies it in a review
    comment; elsewhere it reads as code), or GitLab's ```suggestion:-0+N for a diff note on the
    first replaced line with N more lines below it. Fenced by more backticks than any run inside,
    so the text cannot close the block early; inside a fence nothing is HTML or a mention."""
    content = _LINE_BREAK.sub("\n", plain(replacement))
    fence = backtick_fence(content, 3)
    info = "suggestion" if gitlab_lines_below is None else f"suggestion:-0+{max(0, gitlab_lines_below)}"
    return f"{fence}{info}\n{content}\n{fence}" if content else f"{fence}{info}\n{fence}"


# What a link address keeps as it is (RFC 3986's unreserved characters, the path and fragment
# delimiters and `%` of an escape already made): anything else, `(`, `)`, `<`, `>`, a space or
# `@` among them, is percent-encoded, so untrusted text cannot end the address or start a mention.
_URL_KEPT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/:#%?=&")
_PATH_KEPT = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~/")


def _percent_encoded(text: str, kept: frozenset[str]) -> str:
    return "".join(char if char in kept else "".join(f"%{byte:02X}" for byte in char.encode("utf-8"))
                   for char in printable(text))


def url_path(text: str) -> str:
    """A file path as part of a URL: every character but letters, digits, `-._~` and `/`
    percent-encoded (`%` and `#` too, so a file name can neither escape nor end the path)."""
    return _percent_encoded(text, _PATH_KEPT)


def link_address(url: str) -> str:
    """A URL for a Markdown link's `(...)`: every character that could end it percent-encoded."""
    return _percent_encoded(url, _URL_KEPT)


def markdown_link(text: str, url: str, in_table: bool = False) -> str:
    """A Markdown link: `text` (untrusted) shown as an inline code span, which no bracket or
    emphasis inside can break out of; `url` as `link_address` makes it."""
    return f"[{markdown_code(text, in_table)}]({link_address(url)})"


# --- XML ----------------------------------------------------------------------------------------


def xml_text(text: str) -> str:
    """Text for an XML 1.0 document: masked, without the characters XML 1.0 forbids (the XML
    writer escapes markup; these it cannot write at all)."""
    return _NOT_XML.sub("", mask(printable(text)))


# --- SARIF ----------------------------------------------------------------------------------------


def uri_reference(path: str) -> str:
    """A repository path as the relative URI reference SARIF's `artifactLocation.uri` must be
    (RFC 3986): every byte but unreserved ones and `/` percent-encoded, the bytes of a name that
    is not UTF-8 included, so a space, `#`, `%` or a line break in a name keeps the file found and
    the SARIF valid (a reader unquotes it: reviewers/sarif_import.py)."""
    return quote(path.encode("utf-8", "surrogateescape"), safe="/")
