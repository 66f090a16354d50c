"""A change that puts a file back as it was before its last change (a revert) brings back code the
project had, not new behaviour; and the look-alikes that still add it. Real repositories whose
history holds the undone commit: the gate reads the history and the code, never the message."""

from __future__ import annotations

from pathlib import Path

from reviewgate.findings import Finding, Severity
from reviewgate.reviewers.builtin import BuiltinReviewer
from testing.lenses import blocking_tests_findings, review_request
from testing.repo import FileContent, commit, git

# kaminari/kaminari 6534e33c36, Revert "Better way of suppressing render_partial logs": the
# paginator's `to_s` gets back the log subscriber hack that 0fcfad2030 had replaced by
# `logger.silence`, byte for byte; 0fcfad2030 changed no test.
_PAGINATOR = """module Kaminari
  module ActionViewExtension
    class Paginator
      def initialize(template, window_options)
        @template = template
        @window_options = window_options
      end

      # Redefining to_s not to log each render_partial
      def to_s
{body}      end
    end
  end
end
"""
_EARLIER_BODY = """        subscriber = ActionView::LogSubscriber.log_subscribers.detect {|ls| ls.is_a? ActionView::LogSubscriber}
        if subscriber
          unless defined? subscriber.render_partial_with_logging
            class << subscriber
              alias_method :render_partial_with_logging, :render_partial
              attr_accessor :render_without_logging
              # ugly hack to make a renderer where we can turn logging on or off
              def render_partial(event)
                render_partial_with_logging(event) unless render_without_logging
              end
            end
          end
          subscriber.render_without_logging = true
          ret = @template.render @window_options.merge :paginator => self
          subscriber.render_without_logging = false
          ret
        else
          @template.render @window_options.merge :paginator => self
        end
"""
_SIMPLER_BODY = """        if (logger = ActionView::Base.logger)
          logger.silence { @template.render @window_options.merge paginator: self }
        else
          @template.render @window_options.merge paginator: self
        end
"""
_PATH = "lib/kaminari/helpers/action_view_extension.rb"
_SPEC = "spec/helpers/action_view_extension_spec.rb"
_SPEC_TEXT = 'describe "paginate" do\n  it "renders without logging each partial" do\n  end\nend\n'
_EARLIER = _PAGINATOR.format(body=_EARLIER_BODY)
_SIMPLER = _PAGINATOR.format(body=_SIMPLER_BODY)


def _findings(root: Path, history: list[dict[str, FileContent]], branch: dict[str, FileContent]) -> list[Finding]:
    """Every finding for `branch` on top of `main`, whose commits are `history`."""
    repo = root / "repo"
    repo.mkdir(parents=True)
    git(repo, "init", "-q", "-b", "main")
    for number, files in enumerate(history):
        commit(repo, files, f"commit {number}")
    git(repo, "checkout", "-q", "-b", "revert")
    commit(repo, branch, "put it back")
    return list(BuiltinReviewer().review(review_request(repo)).findings)


def _review(root: Path, history: list[dict[str, FileContent]], branch: dict[str, FileContent]) -> list[tuple[str, str, int]]:
    return blocking_tests_findings(_findings(root, history, branch))


def test_a_file_put_back_as_before_its_last_change_is_no_new_behaviour(tmp_path: Path) -> None:
    history: list[dict[str, FileContent]] = [{_PATH: _EARLIER, "README.md": "kaminari\n"}, {_PATH: _SIMPLER}]
    findings = _findings(tmp_path / "revert", history, {_PATH: _EARLIER})
    assert blocking_tests_findings(findings) == []
    # Still reported, as worth a look, with the commit the file is put back from.
    undone = git(tmp_path / "revert" / "repo", "rev-parse", "main")[:10]
    assert [(item.severity, f"as it was before {undone}, which the change undoes" in item.body)
            for item in findings if item.rule == "tests/missing-tests"] == [(Severity.MINOR, True)]
    # The same code, with no history that held it: new behaviour.
    assert _review(tmp_path / "new", [{_PATH: _SIMPLER}], {_PATH: _EARLIER}) == [("tests/missing-tests", _PATH, 18)]


def test_a_revert_with_one_more_edit_or_an_older_state_is_read_as_new(tmp_path: Path) -> None:
    history: list[dict[str, FileContent]] = [{_PATH: _EARLIER}, {_PATH: _SIMPLER}]
    edited = _EARLIER.replace("          ret\n", "          ret.presence || ''\n")
    assert _review(tmp_path / "edited", history, {_PATH: edited}) == [("tests/missing-tests", _PATH, 18)]
    # The file as it was two changes back, not before its last one: not this rule's evidence.
    older: list[dict[str, FileContent]] = [{_PATH: _EARLIER}, {_PATH: _SIMPLER},
                                           {_PATH: _SIMPLER.replace("paginator: self }", "paginator: self } # quiet")}]
    assert _review(tmp_path / "older", older, {_PATH: _EARLIER}) == [("tests/missing-tests", _PATH, 18)]


def test_a_revert_that_leaves_out_the_tests_the_undone_commit_removed_is_read_as_new(tmp_path: Path) -> None:
    # The undone commit took the spec away with the code; the branch brings the code back alone.
    history: list[dict[str, FileContent]] = [{_PATH: _EARLIER, _SPEC: _SPEC_TEXT}, {_PATH: _SIMPLER, _SPEC: None}]
    assert _review(tmp_path / "untested", history, {_PATH: _EARLIER}) == [("tests/missing-tests", _PATH, 18)]


# jekyll/jekyll 5fa93015a6 (#7562), "Revert Utils::WinTZ upgrade and lock to TZInfo-1.x":
# `calculate` gets back the offset worked out from `Time.now`, written with ternaries (branches
# 3 -> 5), as it was before 13cbef4221 (#7521) changed it; #7521 changed no test.
_WIN_TZ = """module Jekyll
  module Utils
    module WinTZ
      extend self

      def calculate(timezone)
        External.require_with_graceful_fail("tzinfo") unless defined?(TZInfo)
{body}        hours = difference.abs.to_r / 3600
        "UTC#{{sign}}#{{hours}}"
      end
    end
  end
end
"""
_WIN_TZ_BEFORE = """        tz = TZInfo::Timezone.get(timezone)
        difference = Time.now.to_i - tz.now.to_i
        sign = difference.negative? ? "-" : "+"
        offset = sign == "-" ? "+" : "-" unless difference.zero?
"""
_WIN_TZ_UPGRADE = """        difference = TZInfo::Timezone.get(timezone).now.utc_offset
        if difference.negative?
          offset = "-"
          sign   = "+"
        else
          offset = "+"
          sign   = "-"
        end
"""


def test_a_method_put_back_with_its_earlier_branches_is_no_new_behaviour(tmp_path: Path) -> None:
    path = "lib/jekyll/utils/win_tz.rb"
    before, upgrade = _WIN_TZ.format(body=_WIN_TZ_BEFORE), _WIN_TZ.format(body=_WIN_TZ_UPGRADE)
    # Other files changed after the undone commit do not matter: only this file's last change does.
    history: list[dict[str, FileContent]] = [{path: before, "Gemfile": 'gem "tzinfo"\n'}, {path: upgrade},
                                             {"Gemfile": 'gem "tzinfo", "~> 2.0"\n'}]
    assert _review(tmp_path / "revert", history, {path: before, "Gemfile": 'gem "tzinfo", "~> 1.2"\n'}) == []
    assert _review(tmp_path / "new", [{path: upgrade}], {path: before}) == [("tests/missing-tests", path, 8)]


def test_each_file_of_one_change_is_read_against_its_own_last_change(tmp_path: Path) -> None:
    # One `git log` over every file: the paginator's last change is older than the time zone file's,
    # and only the paginator is put back; the time zone file gets code it never had.
    path = "lib/jekyll/utils/win_tz.rb"
    before, upgrade = _WIN_TZ.format(body=_WIN_TZ_BEFORE), _WIN_TZ.format(body=_WIN_TZ_UPGRADE)
    history: list[dict[str, FileContent]] = [{_PATH: _EARLIER, path: upgrade}, {_PATH: _SIMPLER},
                                             {path: upgrade.replace("extend self", "extend self # zones")}]
    assert _review(tmp_path / "two", history, {_PATH: _EARLIER, path: before}) == [("tests/missing-tests", path, 8)]
