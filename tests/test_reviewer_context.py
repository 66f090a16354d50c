"""What the model reviewer reads beside the diff: the call sites of every symbol the change
touches, checked on the requests a real local stand-in server records for a real repository."""

from __future__ import annotations

import re
from pathlib import Path

from reviewgate.config import ReviewerSettings
from reviewgate.reviewers import openai
from reviewgate.reviewers.base import ReviewerStatus
from reviewgate.reviewers.model.context_collector import (
    ASK_WITH_TOOLS,
    DEFINITION_LINES_WITH_TOOLS,
    INLINE_SITES_WITH_TOOLS,
    MAX_NAMED_FILES,
    NOT_SHOWN,
    ContextItem,
    merged_context,
)
from testing.model_repo import chunk_store, review_request
from testing.model_server import ModelServer, Recorded, Reply, review_document
from testing.repo import commit, make_repo

HELPER = (
    "import re\n\n_INT = re.compile(r'^[0-9]+$')\n\n\n"
    "def parse_number(text):\n    if not _INT.match(text):\n        raise ValueError(text)\n    return int(text)\n"
)
# The body's regex widened: no line of the diff names a caller.
WIDENED = HELPER.replace("r'^[0-9]+$'", "r'^[0-9_]+$'").replace("return int(text)", "return int(text, 10)")
FILLER = "".join(f"SETTING_{index} = {index}\n" for index in range(8))


def _caller(index: int) -> str:
    """A module that imports the helper at its top and calls it far below the import."""
    imports = ("from lib.numbers import (\n    parse_number,\n)\n" if index % 2
               else "from lib.numbers import parse_number\n")
    return f"{imports}\n{FILLER}\n\ndef read_{index}(raw):\n    return parse_number(raw) + {index}\n"


def _settings(server: ModelServer, **options: object) -> ReviewerSettings:
    return ReviewerSettings(name="llm", provider="openai", model="test-model", base_url=f"{server.url}/v1",
                            api_key_env="", timeout=5.0, options={"retries": 0, "verify_findings": False, **options})


def _context(post: Recorded) -> str:
    user = str(post.body["messages"][1]["content"])
    nonce = re.search(r"<<<DATA (\w+) BEGIN>>>", user)
    assert nonce is not None
    blocks = re.findall(rf"<<<DATA {nonce.group(1)} BEGIN>>>\n(.*?)\n<<<DATA {nonce.group(1)} END>>>", user,
                        flags=re.DOTALL)
    return str(blocks[1])


def _contexts_with_and_without_tools(repo: Path) -> dict[bool, str]:
    """The context sent for the checked-out branch, with the tools (True) and without."""
    contexts = {}
    for tools in (True, False):
        with ModelServer([Reply(review=review_document())]) as server:
            outcome = openai.build(_settings(server, tools=tools)).review(review_request(repo))
            [post] = server.posts()
        assert outcome.status is ReviewerStatus.OK, outcome.reason
        contexts[tools] = _context(post)
    return contexts


def _review(tmp_path: Path, callers: int, **options: object) -> tuple[str, str]:
    """The context and system message sent for a change to the helper's body, with `callers` callers."""
    base = {"lib/numbers.py": HELPER, **{f"app/module_{index}.py": _caller(index) for index in range(callers)}}
    repo = make_repo(tmp_path, base, {"lib/numbers.py": WIDENED})
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_settings(server, **options)).review(review_request(repo.path))
        posts = server.posts()
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert len(posts) == 1
    return _context(posts[0]), str(posts[0].body["messages"][0]["content"])


def _calls_shown(context: str, callers: int) -> set[int]:
    return {index for index in range(callers) if f"return parse_number(raw) + {index}" in context}


def test_an_edited_body_brings_every_caller_and_no_import(tmp_path: Path) -> None:
    """A two-line change inside a helper called from twelve modules: each call site is sent
    (the edited function is a touched symbol, its budget set by its callers, not by the diff's
    length), and no import of it is sent as a use."""
    context, _ = _review(tmp_path, 12)
    assert _calls_shown(context, 12) == set(range(12))
    assert "import parse_number" not in context
    assert not re.search(r"\|\s+parse_number,$", context, flags=re.MULTILINE)  # a parenthesised import's name


def test_context_chars_caps_the_call_sites_and_names_those_left_out(tmp_path: Path) -> None:
    """Forty callers, context_chars 1,500: the context stays within it, and the call sites that
    did not fit are named, so the reviewer knows what it did not read; at 40,000 all are sent."""
    small, _ = _review(tmp_path / "small", 40, context_chars=1500)
    assert len(small) <= 1500
    shown = _calls_shown(small, 40)
    assert 3 <= len(shown) < 40
    named = re.search(r"(\d+) call site\(s\) of parse_number:\n((?:  .*\n?)+)", small)
    assert named is not None and int(named.group(1)) == 40 - len(shown)
    listed = {int(index) for index in re.findall(r"app/module_(\d+)\.py: \d+", named.group(2))}
    assert listed <= set(range(40)) - shown and len(listed) >= 5
    large, _ = _review(tmp_path / "large", 40, context_chars=40_000)
    assert _calls_shown(large, 40) == set(range(40))
    assert "call site(s) of parse_number" not in large


def test_with_tools_a_few_callers_are_inline_and_the_rest_named_for_the_model_to_ask(tmp_path: Path) -> None:
    """The same twelve callers with the tool loop on: only INLINE_SITES_WITH_TOOLS are shown, the
    others are counted and the first MAX_NAMED_FILES of their files named (`callers` gives them
    all, with their lines), and the context tells the model to ask `callers` for them; with the
    tools off every caller is still shown and nothing is asked for."""
    context, _ = _review(tmp_path / "on", 12, tools=True)
    shown = _calls_shown(context, 12)
    assert len(shown) == INLINE_SITES_WITH_TOOLS
    named = re.search(r"(\d+) call site\(s\) of parse_number in: (.*)", context)
    assert named is not None and int(named.group(1)) == 12 - INLINE_SITES_WITH_TOOLS
    listed = {int(index) for index in re.findall(r"app/module_(\d+)\.py", named.group(2))}
    assert len(listed) == MAX_NAMED_FILES and listed <= set(range(12)) - shown
    assert named.group(2).endswith(f", … {12 - INLINE_SITES_WITH_TOOLS - MAX_NAMED_FILES} more files"), named.group(2)
    assert not re.search(r"module_\d+\.py: \d", context)  # no line numbers: `callers` returns them
    assert "`callers`" in context
    off, _ = _review(tmp_path / "off", 12, tools=False)
    assert _calls_shown(off, 12) == set(range(12))
    assert "call site(s) of parse_number" not in off and "`callers`" not in off


def test_with_tools_a_name_the_change_calls_brings_its_definition_and_none_of_its_uses(tmp_path: Path) -> None:
    """`definition` and `callers` answer the rest when the model asks: the uses of a called helper,
    and its body past DEFINITION_LINES_WITH_TOOLS lines, are sent only with the tools off."""
    helper = "def scale(value):\n" + "".join(f"    step_{index} = value\n" for index in range(8)) + "    return value * 2\n"
    uses = {f"app/use_{index}.py": f"from lib.shapes import scale\n\nRESULT_{index} = scale({index})\n"
            for index in range(3)}
    repo = make_repo(tmp_path, {"lib/shapes.py": helper, **uses},
                     {"app/new.py": "from lib.shapes import scale\n\n\ndef doubled(items):\n"
                                    "    return [scale(item) for item in items]\n"})
    contexts = _contexts_with_and_without_tools(repo.path)
    for context in contexts.values():
        assert "=== CONTEXT lib/shapes.py (definition of scale) ===" in context
    assert "RESULT_" not in contexts[True]
    assert "RESULT_" in contexts[False]
    assert f"step_{DEFINITION_LINES_WITH_TOOLS - 2} =" in contexts[True]
    assert f"step_{DEFINITION_LINES_WITH_TOOLS - 1} =" not in contexts[True]
    assert "step_7 =" in contexts[False]


def test_the_not_shown_entry_is_keyed_without_the_line_numbers_it_names() -> None:
    """A push that only shifts a caller's lines does not make the chunks naming it miss the cache;
    a caller that moves to another file does."""
    def entry(*lines: str) -> ContextItem:
        return ContextItem(NOT_SHOWN, "call sites not shown inline", ("2 call site(s) of parse:", *lines))

    assert entry("  app/a.py: 6, 40").key_text() == entry("  app/a.py: 9, 52").key_text()
    assert entry("  app/a.py: 6, 40").key_text() != entry("  app/b.py: 6, 40").key_text()
    assert entry("  app/a.py: 6, 40").render() != entry("  app/a.py: 9, 52").render()


def test_the_system_message_says_the_context_is_partial_and_how_to_say_so(tmp_path: Path) -> None:
    _, system = _review(tmp_path, 2)
    assert "partial" in system
    assert "not shown:" in system


def test_the_system_message_defines_each_severity_and_the_scope_of_correctness(tmp_path: Path) -> None:
    """One line per severity saying what it means for merging, and the scope rule."""
    _, system = _review(tmp_path, 1)
    for severity in ("blocker", "major", "minor", "nit"):
        assert len(re.findall(rf"^- {severity}: .*merg", system, flags=re.MULTILINE)) == 1 or severity == "nit"
    assert re.search(r"^- nit: .*never blocks", system, flags=re.MULTILINE)
    assert re.search(r"^Scope: a correctness, security or performance finding is about what this change did",
                     system, flags=re.MULTILINE)


def test_an_agent_cli_is_told_it_may_open_the_snapshot_to_read_call_sites(tmp_path: Path) -> None:
    """The `command` provider shares the prompt: the agent reads, in it, that it may open the
    snapshot's files to read the call sites of what the change touches, and it can (the
    snapshot holds the caller)."""
    import json

    from reviewgate.reviewers import command
    from testing.agent_clis import shared_with_the_agent
    from testing.verify_app import python_for_the_verify

    base = {"lib/numbers.py": HELPER, "app/module_0.py": _caller(0)}
    repo = make_repo(tmp_path / "repo", base, {"lib/numbers.py": WIDENED})
    # As root the agent runs as a uid of its own: its script and what it reports live where it can reach.
    with shared_with_the_agent() as shared:
        seen = shared / "out" / "seen.json"
        agent = shared / "agent.py"
        agent.write_text(
            "import json, sys\nprompt = sys.stdin.read()\n"
            f"json.dump({{'prompt': prompt, 'caller': open('app/module_0.py').read()}}, open({str(seen)!r}, 'w'))\n"
            f"print({json.dumps(json.dumps(review_document()))})\n", encoding="utf-8")
        agent.chmod(0o644)
        settings = ReviewerSettings(name="agent", provider="command", timeout=10.0,
                                    options={"command": [python_for_the_verify(), str(agent)], "verify_findings": False})
        outcome = command.build(settings).review(review_request(repo.path))
        assert outcome.status is ReviewerStatus.OK, outcome.reason
        facts = json.loads(seen.read_text(encoding="utf-8"))
    assert "inside a read-only snapshot of the\n  repository (an agent), open the files to read the call sites" in facts["prompt"]
    assert "return parse_number(raw) + 0" in facts["caller"]


def test_an_edited_javascript_body_brings_its_callers_through_tree_sitter(tmp_path: Path) -> None:
    """Outside Python the lenses' tree-sitter parse finds the edited function: its callers are
    sent, its `require` is not."""
    helper = "function parseNumber(text) {\n  return Number(text);\n}\n\nmodule.exports = { parseNumber };\n"
    caller = ("const {{ parseNumber }} = require('../lib/numbers');\n\n\n\n\n"
              "function read{index}(raw) {{\n  return parseNumber(raw) + {index};\n}}\n")
    base = {"lib/numbers.js": helper, **{f"app/reader_{index}.js": caller.format(index=index) for index in range(4)}}
    repo = make_repo(tmp_path, base, {"lib/numbers.js": helper.replace("Number(text)", "Number(text.trim())")})
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_settings(server)).review(review_request(repo.path))
        [post] = server.posts()
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    context = _context(post)
    assert all(f"return parseNumber(raw) + {index};" in context for index in range(4))
    assert "require(" not in context


def test_call_sites_are_chosen_after_leaving_out_those_the_diff_shows(tmp_path: Path) -> None:
    """Eight callers, six of which the branch edits too: the diff shows those six, and the two
    others are sent as context (not crowded out by sites the diff already shows)."""
    base = {"lib/numbers.py": HELPER, **{f"app/module_{index}.py": _caller(index) for index in range(8)}}
    branch = {"lib/numbers.py": WIDENED, **{f"app/module_{index}.py": _caller(index).replace(
        f"+ {index}\n", f"+ {index} * 1\n") for index in range(6)}}
    repo = make_repo(tmp_path, base, branch)
    with ModelServer([Reply(review=review_document())]) as server:
        outcome = openai.build(_settings(server)).review(review_request(repo.path))
        posts = server.posts()
    assert outcome.status is ReviewerStatus.OK, outcome.reason
    assert len(posts) == 1
    context = _context(posts[0])
    assert "return parse_number(raw) + 6\n" in context + "\n" and "return parse_number(raw) + 7" in context
    assert "* 1" not in context  # the edited callers are in the diff, not repeated


def _files_asked(post: Recorded) -> set[str]:
    return set(re.findall(r"=== FILE (\S+)", str(post.body["messages"][1]["content"])))


def test_with_tools_a_push_that_changes_only_which_files_hold_the_callers_not_shown_reuses_the_answer(
        tmp_path: Path) -> None:
    """The helper's edited body has six callers: two inline, four named by file for `callers`.
    A push that changes a named caller's call (its site joins the diff, so the entry names one
    file fewer) asks for that caller's file alone: the helper's answer is reused. A push that
    changes a line an inline excerpt shows asks for the helper's block again, with it."""
    base = {"lib/numbers.py": HELPER, **{f"app/module_{index}.py": _caller(index) for index in range(6)}}
    repo = make_repo(tmp_path / "repo", base, {"lib/numbers.py": WIDENED})
    store = chunk_store(tmp_path / "cache", "llm")
    with ModelServer([Reply(review=review_document())]) as server:
        reviewer = openai.build(_settings(server, tools=True))

        def push(files: dict[str, str]) -> list[Recorded]:
            if files:
                commit(repo.path, files)
            start = len(server.posts())
            outcome = reviewer.review(review_request(repo.path), store)
            assert outcome.status is ReviewerStatus.OK, outcome.reason
            return server.posts()[start:]

        [first] = push({})
        named = push({"app/module_5.py": _caller(5).replace("parse_number(raw) + 5", "parse_number(raw) + 50")})
        inline = push({"app/module_0.py": _caller(0).replace("def read_0(raw):", "def read_0(raw, strict=False):")})
    assert _files_asked(first) == {"lib/numbers.py"}
    assert "4 call site(s) of parse_number in: " in _context(first)
    assert [_files_asked(post) for post in named] == [{"app/module_5.py"}]
    assert [_files_asked(post) for post in inline] == [{"lib/numbers.py", "app/module_0.py"}]
    assert "3 call site(s) of parse_number in: " in _context(inline[0])


def test_the_not_shown_entry_with_the_tools_is_keyed_on_the_symbols_it_names() -> None:
    """With the tools the entry points at what `callers` returns: its counts and files are not part
    of the key, the symbols it names are."""
    def entry(*lines: str) -> ContextItem:
        return ContextItem(NOT_SHOWN, "call sites not shown inline", (ASK_WITH_TOOLS, *lines))

    assert (entry("4 call site(s) of parse in: app/a.py (3), app/b.py").key_text()
            == entry("3 call site(s) of parse in: app/a.py (3)").key_text())
    assert (entry("4 call site(s) of parse in: app/a.py (3), app/b.py").key_text()
            != entry("4 call site(s) of format in: app/a.py (3), app/b.py").key_text())
    assert (entry("4 call site(s) of parse in: app/a.py (3), app/b.py").render()
            != entry("3 call site(s) of parse in: app/a.py (3)").render())


def test_a_request_names_each_symbol_left_out_once_under_one_request_to_ask() -> None:
    """Two chunks asked together both name `parse`'s callers: the request says to ask `callers`
    once and names `parse` once (the first chunk's entry), `format` once."""
    def entry(*lines: str) -> ContextItem:
        return ContextItem(NOT_SHOWN, "call sites not shown inline", (ASK_WITH_TOOLS, *lines))

    excerpt = ContextItem("lib/a.py", "a use of parse", ("parse(1)",), 7)
    merged = merged_context([entry("4 call site(s) of parse in: app/a.py (3), app/b.py"), excerpt,
                             entry("3 call site(s) of parse in: app/a.py (3)",
                                   "2 call site(s) of format in: app/c.py (2)")], {})
    assert merged.count(ASK_WITH_TOOLS) == 1, merged
    assert merged.count("call site(s) of parse") == 1 and "4 call site(s) of parse" in merged, merged
    assert merged.count("call site(s) of format") == 1, merged
    assert merged.index("call site(s) of format") < merged.index("lib/a.py"), merged


def test_with_tools_a_call_site_is_shown_one_line_either_side(tmp_path: Path) -> None:
    """`callers` gives the model each site with more lines: inline, the call and a line either side."""
    caller = ("from lib.numbers import parse_number\n\nFAR_ABOVE = 1\nJUST_ABOVE = 2\n"
              "TOTAL = parse_number('4')\nJUST_BELOW = 3\nFAR_BELOW = 4\n")
    repo = make_repo(tmp_path, {"lib/numbers.py": HELPER, "app/caller.py": caller}, {"lib/numbers.py": WIDENED})
    contexts = _contexts_with_and_without_tools(repo.path)
    assert all(name in contexts[True] for name in ("JUST_ABOVE", "TOTAL = parse_number", "JUST_BELOW")), contexts[True]
    assert "FAR_ABOVE" not in contexts[True] and "FAR_BELOW" not in contexts[True], contexts[True]
    assert "FAR_ABOVE" in contexts[False] and "FAR_BELOW" in contexts[False], contexts[False]


def test_with_tools_a_called_name_defined_in_several_places_brings_no_definition(tmp_path: Path) -> None:
    """Which of two `scale` definitions the call reaches is a guess: with the tools neither is sent
    (`definition` lists both); a name defined once still brings its definition."""
    helpers = {"lib/shapes.py": "def scale(value):\n    return value * 2\n\n\ndef shift(value):\n    return value + 1\n",
               "lib/sizes.py": "def scale(size):\n    return size * 3\n"}
    repo = make_repo(tmp_path, helpers, {"app/new.py": "from lib.shapes import scale, shift\n\n\ndef moved(items):\n"
                                                      "    return [shift(scale(item)) for item in items]\n"})
    contexts = _contexts_with_and_without_tools(repo.path)
    assert "(definition of shift)" in contexts[True], contexts[True]
    assert "(definition of scale)" not in contexts[True], contexts[True]
    assert "(definition of scale)" in contexts[False], contexts[False]


def test_with_tools_a_call_site_the_shorter_diff_leaves_out_is_in_the_context(tmp_path: Path) -> None:
    """The helper's file also calls it two lines below another change: git's hunk holds that
    call, the diff as sent with the tools (one unchanged line either side) does not, so the
    context shows it."""
    twice = "\n\ndef twice(text):\n    value = 1\n    check = value\n    return parse_number(text) * check\n"
    filler = "".join(f"LIMIT_{index} = {index}\n" for index in range(20))
    base = {"lib/numbers.py": HELPER + "\n\n" + filler + twice}
    branch = {"lib/numbers.py": WIDENED + "\n\n" + filler + twice.replace("value = 1", "value = 2")}
    repo = make_repo(tmp_path, base, branch)
    contexts = _contexts_with_and_without_tools(repo.path)
    assert "return parse_number(text) * check" in contexts[True], contexts[True]


def test_with_tools_no_directory_is_listed_beside_the_changed_files(tmp_path: Path) -> None:
    """The names beside the changed file are in the context without the tools; with them, `read`
    lists a directory when the model wants it, and no request pays for the names unasked."""
    repo = make_repo(tmp_path, {"lib/numbers.py": HELPER, "lib/strings.py": "def upper(text):\n    return text\n"},
                     {"lib/numbers.py": WIDENED})
    contexts = _contexts_with_and_without_tools(repo.path)
    assert "=== CONTEXT lib/ (the names of the files beside the changed ones) ===\nstrings.py" in contexts[False]
    assert "strings.py" not in contexts[True] and "beside the changed ones" not in contexts[True], contexts[True]


def test_a_python_docstring_that_says_class_name_defines_nothing(tmp_path: Path) -> None:
    """`the registry class scale is kept` in a docstring is prose, not a second definition of
    `scale` (with the tools, a name defined in two places brings no definition), and `class
    sorted` in one does not make the builtin a name of the repository whose lines are sent."""
    helpers = {"lib/shapes.py": "def scale(value):\n    return value * 2\n",
               "lib/notes.py": '"""How shapes grow.\n\nThe registry class scale is kept apart; the class sorted\n'
                               'order is kept too.\n"""\n\nLIMIT = 3\n'}
    repo = make_repo(tmp_path, helpers, {"app/new.py": "from lib.shapes import scale\n\n\ndef grown(items):\n"
                                                      "    return sorted(scale(item) for item in items)\n"})
    contexts = _contexts_with_and_without_tools(repo.path)
    assert "(definition of scale)" in contexts[True] and "return value * 2" in contexts[True], contexts[True]
    assert "lib/notes.py" not in contexts[True], contexts[True]
    assert all("of sorted" not in context for context in contexts.values()), contexts[False]


ROUTER = "def route(path, methods):\n    return (path, tuple(methods))\n"
# `get`'s docstring names `route` before the line that calls it: prose, then the call site.
VIEWS = ('def get(path):\n    """A GET handler.\n\n    Options are passed on to `route` unchanged, so the wrappers of\n'
         '    the family read the same.\n    """\n' + "\n" * 6 + '    return route(path, ["GET"])\n' + "\n" * 8
         + '# route stays the one place methods are named\ndef head(path):\n    return route(path, ["HEAD"])\n')
FORMS = "from lib.router import route\n\n\ndef post(path):\n    return route(path, ['POST'])\n"


def test_a_mention_in_a_docstring_or_a_comment_is_no_call_site(tmp_path: Path) -> None:
    """`route`'s body changes; `app/a_views.py` names it in `get`'s docstring and in a comment
    before the lines that call it. With the tools (two sites of a symbol inline) the two calls are
    shown and the third named, the prose neither shown nor counted; `callers` returns the three
    calls and no prose."""
    from reviewgate.reviewers.model.prompt import ToolCall
    from reviewgate.reviewers.model.tools import ReadTools

    repo = make_repo(tmp_path, {"lib/router.py": ROUTER, "app/a_views.py": VIEWS, "app/b_forms.py": FORMS},
                     {"lib/router.py": ROUTER.replace("tuple(methods)", "tuple(sorted(methods))")}).path
    context = _contexts_with_and_without_tools(repo)[True]
    assert 'return route(path, ["GET"])' in context and 'return route(path, ["HEAD"])' in context, context
    assert "passed on to `route`" not in context and "the one place methods" not in context, context
    assert "1 call site(s) of route in: app/b_forms.py" in context, context
    answer = ReadTools(review_request(repo)).run(ToolCall("1", "callers", {"symbol": "route"}))
    assert answer.count("(a use of route)") == 3 and "passed on to" not in answer, answer


# `route`'s three callers: under `get`'s docstring, under a comment, and between lines of code
# with a comment after the function.
WRAPPERS = ('def get(path):\n    """A GET handler.\n\n    Options go to the router unchanged.\n    """\n'
            '    return route(path, ["GET"])\n\n\n'
            'def head(path):\n    # the one place methods are named\n    return route(path, ["HEAD"])\n\n\n'
            'def post(path):\n    checked = path.strip()\n    return route(checked, ["POST"])\n'
            '    # kept for the next wrapper\n')


def _numbered_lines(context: str, path: str) -> list[int]:
    """The line numbers the context shows of `path` (its excerpts follow one heading)."""
    part = context.split(f"=== CONTEXT {path} ", 1)[1].split("\n\n=== CONTEXT", 1)[0]
    return [int(line.split("|", 1)[0]) for line in part.split("\n")[1:] if line.split("|", 1)[0].isdigit()]


def _wrappers_repo(tmp_path: Path) -> Path:
    return make_repo(tmp_path, {"lib/router.py": ROUTER, "app/views.py": WRAPPERS},
                     {"lib/router.py": ROUTER.replace("tuple(methods)", "tuple(sorted(methods))")}).path


def test_a_call_sites_window_stops_at_a_docstring_or_a_comment_beside_it(tmp_path: Path) -> None:
    """A window shows the code around a call: `get`'s docstring (lines 4-5) above its call, the
    comment above `head`'s call (with the tools: one line either side) and the comment after
    `post`'s are left out; a window whose neighbours are code (`post`'s lines 14-15), or that
    holds a comment between lines of code (without the tools, line 10), is as it was."""
    contexts = _contexts_with_and_without_tools(_wrappers_repo(tmp_path))
    assert _numbered_lines(contexts[True], "app/views.py") == [6, 7, 11, 12], contexts[True]
    assert _numbered_lines(contexts[False], "app/views.py") == list(range(6, 17)), contexts[False]
    assert all("Options go to" not in context and "kept for the next" not in context
               for context in contexts.values()), contexts


def test_the_callers_tool_and_the_second_look_show_code_around_each_call(tmp_path: Path) -> None:
    """`callers` and the second look's callers of `route` show the same windows: code lines, a
    comment between two of them kept, the docstring and the trailing comment left out."""
    from reviewgate.reviewers.model.excerpts import callers_excerpt
    from reviewgate.reviewers.model.prompt import ToolCall
    from reviewgate.reviewers.model.tools import ReadTools

    request = review_request(_wrappers_repo(tmp_path))
    answer = ReadTools(request).run(ToolCall("1", "callers", {"symbol": "route"}))
    second_look = callers_excerpt(request, "lib/router.py", 2).text
    for text in (answer, second_look):
        assert re.findall(r"app/views\.py lines (\d+-\d+)", text) == ["6-8", "9-13", "14-16"], text
        assert "Options go to" not in text and "kept for the next" not in text, text
        assert "# the one place methods are named" in text, text


# `scale`'s definition (lines 1-6, its docstring its own), then a comment on what follows it.
SHAPES = ('def scale(value):\n    """Grow `value`.\n\n    Twice as large, never smaller.\n    """\n'
          '    return value * 2\n\n\n# The shrinking side is kept apart from growth: a caller names\n'
          '# the direction it wants, and the two never share a factor.\n# (See shrink.)\n\n\n'
          'def shrink(value):\n    return value / 2\n')


def test_a_definitions_window_keeps_its_docstring_and_leaves_out_the_prose_past_its_end(tmp_path: Path) -> None:
    """A name the change calls brings its definition: without the tools its 12 lines would end in
    the comment on `shrink` (lines 9-11) and the blank lines before it, which are left out; with
    them, its first 6 lines are its signature, its docstring and its body, all shown."""
    repo = make_repo(tmp_path, {"lib/shapes.py": SHAPES},
                     {"app/new.py": "from lib.shapes import scale\n\n\ndef grown(item):\n    return scale(item) + 1\n"})
    contexts = _contexts_with_and_without_tools(repo.path)
    for tools, context in contexts.items():
        assert _numbered_lines(context, "lib/shapes.py") == list(range(1, 7)), (tools, context)
        assert "Twice as large" in context and "kept apart" not in context, (tools, context)
