"""Kinds of change that read as new behaviour without being any, and their look-alikes that are:
each judged on a real repository, blocking findings only (major or worse)."""

from __future__ import annotations

from pathlib import Path

import pytest

from testing.lenses import blocking_tests_findings, review_change

_LIB = "pub fn derive(input: u8) -> u8 {\n    input\n}\n"
_IMPL = (
    "\nimpl{trait} {kind} {{\n    {visibility}fn to_tokens(&self, tokens: &mut Stream) {{\n"
    "        tokens.append(self.ident());\n    }}\n}}\n"
)


def _rust_type(visibility: str, trait: str = " ToTokens for", method: str = "") -> str:
    return _LIB + f"\n{visibility}struct Marker;\n" + _IMPL.format(trait=trait, kind="Marker", visibility=method)


def test_rust_methods_of_a_private_type_are_no_public_api(tmp_path: Path) -> None:
    base = {"derive/src/lib.rs": _LIB}
    for name, visibility, trait, method in [
        ("trait-impl", "", " ToTokens for", ""),
        ("pub-method", "", "", "pub "),
        ("crate-type", "pub(crate) ", "", "pub "),
    ]:
        branch = {"derive/src/lib.rs": _rust_type(visibility, trait, method)}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [], name
    # The same impls of a public type are public API: new, untested, they block.
    for name, trait, method in [("public-trait-impl", " ToTokens for", ""), ("public-method", "", "pub ")]:
        branch = {"derive/src/lib.rs": _rust_type("pub ", trait, method)}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [
            ("tests/missing-tests", "derive/src/lib.rs", 8)
        ], name


_BLANKET = (
    "{visibility}trait CloneBox {{\n    fn clone_box(&self) -> Box<dyn CloneBox>;\n}}\n\n"
    "impl<T: Clone + 'static> CloneBox for T {{\n    fn clone_box(&self) -> Box<dyn CloneBox> {{\n"
    "        Box::new(self.clone())\n    }}\n}}\n"
)


@pytest.mark.parametrize(("visibility", "blocks"), [("", False), ("pub(crate) ", False), ("pub ", True)])
def test_a_rust_impl_of_a_private_trait_is_no_public_api(tmp_path: Path, visibility: str, blocks: bool) -> None:
    """A blanket impl's type is a type parameter, which the file cannot place: the trait decides."""
    branch = {"derive/src/lib.rs": _LIB + "\n" + _BLANKET.format(visibility=visibility)}
    expected = [("tests/missing-tests", "derive/src/lib.rs", 10)] if blocks else []
    assert blocking_tests_findings(review_change(tmp_path / "rust", {"derive/src/lib.rs": _LIB}, branch)) == expected


def test_a_rust_impl_of_another_modules_trait_is_public_whatever_the_file_declares(tmp_path: Path) -> None:
    """`impl fmt::Display` names the standard trait, not the file's private `Display`."""
    declared = "trait Display {\n    fn show(&self);\n}\n\npub struct Marker;\n"
    base = {"derive/src/lib.rs": _LIB + "\n" + declared}
    shown = (
        "\nimpl fmt::Display for Marker {\n    fn fmt(&self, out: &mut fmt::Formatter) -> fmt::Result {\n"
        "        out.write_str(self.name())\n    }\n}\n"
    )
    branch = {"derive/src/lib.rs": _LIB + "\n" + declared + shown}
    assert blocking_tests_findings(review_change(tmp_path / "rust", base, branch)) == [("tests/missing-tests", "derive/src/lib.rs", 12)]


_CHAIN = (
    "pub fn visible(fields: &[Field]) -> Vec<Stream> {{\n{body}\n}}\n"
)


def test_an_iterator_chain_written_out_as_a_loop_makes_the_same_decisions(tmp_path: Path) -> None:
    chain = "    fields\n        .iter()\n        .filter(|field| !field.skipped())\n        .map(|field| field.tokens())\n        .collect()"
    loop = (
        "    let mut out = Vec::new();\n    for field in fields {\n        if field.skipped() {\n            continue;\n"
        "        }\n        out.push(field.tokens());\n    }\n    out"
    )
    base = {"derive/src/ser.rs": _CHAIN.format(body=chain)}
    assert blocking_tests_findings(review_change(tmp_path / "rust", base, {"derive/src/ser.rs": _CHAIN.format(body=loop)})) == []
    script = {"src/fields.js": "export function visible(fields) {\n  return fields.filter((f) => !f.skipped).map((f) => f.tokens);\n}\n"}
    written_out = {"src/fields.js": (
        "export function visible(fields) {\n  const out = [];\n  for (const f of fields) {\n    if (f.skipped) {\n"
        "      continue;\n    }\n    out.push(f.tokens);\n  }\n  return out;\n}\n"
    )}
    assert blocking_tests_findings(review_change(tmp_path / "js", script, written_out)) == []
    # A loop that decides more than the chain did (two conditions the chain never made) is new behaviour.
    stricter = (
        "    let mut out = Vec::new();\n    for field in fields {\n        if field.skipped() {\n            continue;\n"
        "        }\n        if field.flattened() {\n            out.extend(field.inner());\n        }\n"
        "        if field.renamed() {\n            out.push(field.alias());\n        }\n        out.push(field.tokens());\n    }\n    out"
    )
    assert blocking_tests_findings(review_change(tmp_path / "stricter", base, {"derive/src/ser.rs": _CHAIN.format(body=stricter)})) == [
        ("tests/missing-tests", "derive/src/ser.rs", 2)
    ]


_CONTEXT = (
    "import os\n\n\ndef create_context(verify=True, cert=None):\n    if verify is True:\n"
    "{marked}"
    "        context = default_context()\n    else:\n        context = verify\n"
    "{cert}"
    "    return context\n"
)
_FROM_ENVIRONMENT = (
    "        if os.environ.get('SSL_CERT_FILE'):{pragma}\n            context = default_context(os.environ['SSL_CERT_FILE'])\n"
    "            return context\n"
    "        elif os.environ.get('SSL_CERT_DIR'):{pragma}\n            context = default_context(os.environ['SSL_CERT_DIR'])\n"
    "            return context\n"
)
_CERT = (
    "    if cert:{pragma}\n        if isinstance(cert, str):\n            context.load_cert_chain(cert)\n"
    "        else:\n            context.load_cert_chain(*cert)\n"
)


def test_branches_marked_no_cover_are_declared_untested(tmp_path: Path) -> None:
    base = {"pkg/config.py": _CONTEXT.format(marked="", cert="")}

    def branch(pragma: str) -> dict[str, str]:
        return {"pkg/config.py": _CONTEXT.format(
            marked=_FROM_ENVIRONMENT.format(pragma=pragma), cert=_CERT.format(pragma=pragma)
        )}

    for name, pragma in [("spaced", "  # pragma: no cover"), ("joined", "  # pragma: nocover")]:
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch(pragma))) == [], name
    # The same branches unmarked are new decisions a test must pin down.
    assert blocking_tests_findings(review_change(tmp_path / "unmarked", base, branch(""))) == [("tests/missing-tests", "pkg/config.py", 6)]


_MANAGER = "namespace Acme.Resources;\n\npublic class LanguageManager {\n  public string Culture() => \"en\";\n}\n"
_LANGUAGE = (
    "namespace Acme.Resources;\n\n{visibility}class KazakhLanguage {{\n  public const string Culture = \"kk\";\n\n"
    "  public static string GetTranslation(string key) => key switch {{\n{rows}    _ => null,\n  }};\n}}\n"
)
_ROWS = "".join(f'    "{name}Validator" => "\'{{PropertyName}}\' {name} text.",\n' for name in
                ("Email", "Length", "NotNull", "NotEmpty", "Equal", "Regex"))


def test_a_translation_class_of_constant_rows_is_data(tmp_path: Path) -> None:
    base = {"src/Acme/Resources/LanguageManager.cs": _MANAGER}
    for visibility in ("internal ", "public "):
        branch = {**base, "src/Acme/Resources/Languages/KazakhLanguage.cs": _LANGUAGE.format(visibility=visibility, rows=_ROWS)}
        assert blocking_tests_findings(review_change(tmp_path / visibility.strip(), base, branch)) == [], visibility
    # Rows that call or format decide: the same class is new behaviour.
    deciding = _ROWS.replace("=> \"'{PropertyName}' Email text.\"", "=> Format(key, \"Email\")").replace(
        "=> \"'{PropertyName}' Length text.\"", "=> Lengths.Describe(key)")
    branch = {**base, "src/Acme/Resources/Languages/KazakhLanguage.cs": _LANGUAGE.format(visibility="public ", rows=deciding)}
    assert blocking_tests_findings(review_change(tmp_path / "deciding", base, branch)) == [
        ("tests/missing-tests", "src/Acme/Resources/Languages/KazakhLanguage.cs", 6)
    ]


def test_csharp_internal_is_no_public_api(tmp_path: Path) -> None:
    method = (
        "\n  {visibility} bool TryGetPropertyValue(object instance, out object value) {{\n"
        "    value = Read(instance);\n    return value != null;\n  }}\n"
    )
    base = {"src/Acme/Rule.cs": "namespace Acme;\n\n{kind}class Rule {{\n  public string Name => \"rule\";\n}}\n"}
    for name, kind, visibility in [("internal-type", "internal ", "public"), ("internal-method", "public ", "internal")]:
        before = {"src/Acme/Rule.cs": base["src/Acme/Rule.cs"].format(kind=kind)}
        after = {"src/Acme/Rule.cs": before["src/Acme/Rule.cs"].replace(
            "\"rule\";\n", "\"rule\";\n" + method.format(visibility=visibility))}
        assert blocking_tests_findings(review_change(tmp_path / name, before, after)) == [], name
    before = {"src/Acme/Rule.cs": base["src/Acme/Rule.cs"].format(kind="public ")}
    after = {"src/Acme/Rule.cs": before["src/Acme/Rule.cs"].replace("\"rule\";\n", "\"rule\";\n" + method.format(visibility="public"))}
    assert blocking_tests_findings(review_change(tmp_path / "public", before, after)) == [("tests/missing-tests", "src/Acme/Rule.cs", 6)]


_MANIFEST = "[package]\nname = \"derive\"\nversion = \"1.0.0\"\n{lib}\n[dependencies]\nsyn = \"2\"\n"
_NAME = "\npub struct Name {\n    pub value: String,\n}\n"
_ORDER = (
    "\nimpl Ord for Name {\n    fn cmp(&self, other: &Self) -> Ordering {\n        Ord::cmp(&self.value, &other.value)\n"
    "    }\n}\n\nimpl Name {\n    pub fn spanned(&self) -> Span {\n        self.span.resolved_at(self.call_site())\n    }\n}\n"
)


def test_a_proc_macro_crate_exports_only_its_macros(tmp_path: Path) -> None:
    for name, lib, blocks in [("proc-macro", "[lib]\nproc-macro = true\n", False), ("library", "", True)]:
        base = {"derive/Cargo.toml": _MANIFEST.format(lib=lib), "derive/src/internals/name.rs": _NAME}
        branch = {**base, "derive/src/internals/name.rs": _NAME + _ORDER}
        found = blocking_tests_findings(review_change(tmp_path / name, base, branch))
        # `cmp` forwards one call of references (plain): `spanned`, two calls, is the strong one.
        assert found == ([("tests/missing-tests", "derive/src/internals/name.rs", 13)] if blocks else []), name


_WORKSPACE = '[workspace]\nmembers = [\n    "core",\n    "precompiled/bin",\n]\n'
_CRATE = "[package]\nname = \"{name}\"\nversion = \"0.1.0\"\n{publish}"
_BUILD_STEP = (
    "\npub fn build(args: &[String]) -> u8 {\n    let mut code = 0;\n    for arg in args {\n"
    "        if arg.is_empty() {\n            code = 2;\n        } else if arg.starts_with('-') {\n            code = 1;\n"
    "        }\n    }\n    code\n}\n"
)


def test_an_unpublished_crate_beside_published_ones_is_build_tooling(tmp_path: Path) -> None:
    def repository(core_publish: str) -> dict[str, str]:
        return {
            "Cargo.toml": _WORKSPACE,
            "core/Cargo.toml": _CRATE.format(name="core", publish=core_publish),
            "core/src/lib.rs": "pub fn version() -> u8 {\n    1\n}\n",
            "precompiled/bin/Cargo.toml": _CRATE.format(name="precompile", publish="publish = false\n"),
            "precompiled/bin/main.rs": "fn main() {}\n",
        }

    base = repository("")
    tooling = {**base, "precompiled/bin/main.rs": base["precompiled/bin/main.rs"] + _BUILD_STEP}
    assert blocking_tests_findings(review_change(tmp_path / "tooling", base, tooling)) == []
    # The same code in the published crate is product code.
    product = {**base, "core/src/lib.rs": base["core/src/lib.rs"] + _BUILD_STEP}
    assert blocking_tests_findings(review_change(tmp_path / "product", base, product)) == [("tests/missing-tests", "core/src/lib.rs", 5)]
    # In a workspace that publishes nothing (an application), `publish = false` says nothing.
    application = repository("publish = false\n")
    branch = {**application, "precompiled/bin/main.rs": application["precompiled/bin/main.rs"] + _BUILD_STEP}
    assert blocking_tests_findings(review_change(tmp_path / "application", application, branch)) == [
        ("tests/missing-tests", "precompiled/bin/main.rs", 3)
    ]


_FACTORY = (
    "package app;\n\npublic final class OptionalFactory {{\n  OptionalFactory() {{}}\n\n"
    "  public String name() {{\n    return \"optional\";\n  }}\n{added}}}\n"
)


@pytest.mark.parametrize(("name", "added", "blocks"), [
    ("factory", "\n  public static OptionalFactory create() {\n    return new OptionalFactory();\n  }\n", False),
    ("setter", "\n  public OptionalFactory label(String label) {\n    this.label = label;\n    return this;\n  }\n", False),
    ("delegate", "\n  public Call send(Request request) {\n    return client.send(request);\n  }\n", False),
    # A setter that validates, a delegate that prepares what it passes on, a method that decides.
    ("validating", "\n  public OptionalFactory label(String label) {\n"
     "    this.label = Objects.requireNonNull(label, \"label\");\n    return this;\n  }\n", True),
    ("preparing", "\n  public Call send(Request request) {\n    return client.send(prepare(request));\n  }\n", True),
    ("deciding", "\n  public Call send(Request request) {\n    if (request == null) {\n      return null;\n    }\n"
     "    return retries > 0 ? client.retry(request) : client.send(request);\n  }\n", True),
])
def test_a_setter_a_delegate_or_a_factory_passes_through(tmp_path: Path, name: str, added: str, blocks: bool) -> None:
    path = "src/main/java/app/OptionalFactory.java"
    base = {path: _FACTORY.format(added="")}
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _FACTORY.format(added=added)}))
    assert found == ([("tests/missing-tests", path, 10)] if blocks else []), name


def test_a_python_setter_or_delegate_passes_through(tmp_path: Path) -> None:
    base = {"pkg/client.py": "class Client:\n    def __init__(self, inner):\n        self._inner = inner\n"}
    passing = (
        "\n    def with_timeout(self, timeout):\n        self._timeout = timeout\n        return self\n"
        "\n    def send(self, request, *, stream=False):\n        return self._inner.send(request, stream=stream)\n"
    )
    assert blocking_tests_findings(review_change(tmp_path / "passing", base, {"pkg/client.py": base["pkg/client.py"] + passing})) == []
    validating = "\n    def with_timeout(self, timeout):\n        self._timeout = float(timeout)\n        return self\n"
    assert blocking_tests_findings(review_change(tmp_path / "validating", base, {"pkg/client.py": base["pkg/client.py"] + validating})) == [
        ("tests/missing-tests", "pkg/client.py", 5)
    ]


_SCRIPT = (
    "function show(type) {\n  var count = 0;\n  for (var key in methods) {\n    var row = document.getElementById(key);\n"
    "    if ((methods[key] & type) != 0) {\n      row.style.display = '';\n      count++;\n    } else {\n"
    "      row.style.display = 'none';\n    }\n  }\n  updateTabs(type);\n}\n"
)


def test_a_script_javadoc_writes_beside_its_indexes_is_generated(tmp_path: Path) -> None:
    base = {"lib/src/main/java/app/Api.java": "package app;\n\npublic final class Api {}\n"}
    site = {
        **base,
        # javadoc's banner: the review leaves its pages out as generated, and still sees the directory.
        "website/1.x/lib/allclasses-frame.html": "<!DOCTYPE HTML>\n<!-- Generated by javadoc (1.8.0) -->\n<html></html>\n",
        "website/1.x/lib/package-list": "app\n",
        "website/1.x/lib/script.js": _SCRIPT,
    }
    assert blocking_tests_findings(review_change(tmp_path / "javadoc", base, site)) == []
    # The same script in a site's own code is code the site runs.
    own = {**base, "website/app/script.js": _SCRIPT}
    assert blocking_tests_findings(review_change(tmp_path / "site", base, own)) == [("tests/missing-tests", "website/app/script.js", 1)]


_FORMS = (
    "pub fn deserialize(params: &Params, form: {kind}) -> Stream {{\n{body}\n}}\n"
)


def test_an_if_chain_rewritten_as_a_match_makes_the_same_decisions(tmp_path: Path) -> None:
    chains = (
        "    let path = if let Some(variant) = variant {\n        quote!(#variant)\n    } else if tagged {\n"
        "        quote!(tagged)\n    } else {\n        quote!(plain)\n    };\n"
        "    let expecting = if let Some(variant) = variant {\n        format!(\"variant {}\", variant)\n"
        "    } else if tagged {\n        format!(\"tagged\")\n    } else {\n        format!(\"plain\")\n    };\n"
        "    quote!(#path #expecting)"
    )
    matches = (
        "    let path = match form {\n        Form::Variant(variant) => quote!(#variant),\n        Form::Tagged => quote!(tagged),\n"
        "        Form::Plain => quote!(plain),\n    };\n    let expecting = match form {\n"
        "        Form::Variant(variant) => format!(\"variant {}\", variant),\n        Form::Tagged => format!(\"tagged\"),\n"
        "        _ => format!(\"plain\"),\n    };\n    quote!(#path #expecting)"
    )
    base = {"derive/src/de.rs": _FORMS.format(kind="Option<&Ident>", body=chains)}
    branch = {"derive/src/de.rs": _FORMS.format(kind="Form", body=matches)}
    assert blocking_tests_findings(review_change(tmp_path / "match", base, branch)) == []
    # A match that decides more than the chain did is new behaviour.
    more = matches.replace("        Form::Plain => quote!(plain),\n", "        Form::Plain => quote!(plain),\n"
                           "        Form::Flat => quote!(flat),\n        Form::Seq => quote!(seq),\n")
    assert blocking_tests_findings(review_change(tmp_path / "more", base, {"derive/src/de.rs": _FORMS.format(kind="Form", body=more)})) == [
        ("tests/missing-tests", "derive/src/de.rs", 1)
    ]


_GEMSPEC = (
    "Gem::Specification.new do |s|\n  s.name = \"site\"\n  all_files = `git ls-files`.split($INPUT_RECORD_SEPARATOR)\n"
    "  s.files = {files}\n  s.bindir = \"exe\"\n  s.require_paths = [\"lib\"]\nend\n"
)
_FORMATTER = (
    "module Site\n  class ConfigFormatter\n    def initialize(path)\n      @path = path\n      @lines = File.readlines(path)\n"
    "      @cops = {}\n      @order = []\n      @dirty = false\n    end\n\n    def format\n      @lines.each do |line|\n"
    "        next if line.start_with?(\"#\")\n        @order << line.strip unless line.empty?\n      end\n      @order.sort\n"
    "    end\n  end\nend\n"
)


def test_ruby_code_the_gemspec_does_not_package_reaches_no_user(tmp_path: Path) -> None:
    def repository(files: str) -> dict[str, str]:
        return {"site.gemspec": _GEMSPEC.format(files=files), "lib/site.rb": "module Site\nend\n"}

    packaged = repository("all_files.grep(%r!^(exe|lib)/!)")
    assert blocking_tests_findings(review_change(tmp_path / "rake", packaged, {**packaged, "rake/config_formatter.rb": _FORMATTER})) == []
    # The same class in a packaged directory, or in a gem that packages every file, is product code.
    assert blocking_tests_findings(review_change(tmp_path / "lib", packaged, {**packaged, "lib/site/config_formatter.rb": _FORMATTER})) == [
        ("tests/missing-tests", "lib/site/config_formatter.rb", 3)
    ]
    everything = repository("all_files")
    assert blocking_tests_findings(review_change(tmp_path / "all", everything, {**everything, "rake/config_formatter.rb": _FORMATTER})) == [
        ("tests/missing-tests", "rake/config_formatter.rb", 3)
    ]


_CONVERT = (
    "def convert_type(ty=None, default=None):\n{guess}"
    "    if isinstance(ty, tuple):\n        return Tuple(ty)\n    if ty is int:\n        return INT\n    return STRING\n"
)
_NESTED = (
    "    if ty is None and default is not None:\n        if isinstance(default, (tuple, list)):\n            if default:\n"
    "                item = default[0]\n                if isinstance(item, (tuple, list)):\n"
    "                    ty = tuple(map(type, item))\n                else:\n                    ty = type(item)\n"
    "        else:\n            ty = type(default)\n"
)
_GUESS = (
    "def _guess_type(ty, default):\n    if ty is not None:\n        return ty\n    if default is None:\n        return None\n"
    "    if not isinstance(default, (tuple, list)):\n        return type(default)\n    if not default:\n        return None\n"
    "    item = default[0]\n    if isinstance(item, (tuple, list)):\n        return tuple(map(type, item))\n    return type(item)\n\n\n"
)


def test_decisions_extracted_into_a_helper_as_guard_clauses_are_not_new(tmp_path: Path) -> None:
    base = {"src/pkg/types.py": _CONVERT.format(guess=_NESTED)}
    extracted = {"src/pkg/types.py": _GUESS + _CONVERT.format(guess="    ty = _guess_type(ty, default)\n")}
    assert blocking_tests_findings(review_change(tmp_path / "extracted", base, extracted)) == []
    # A helper deciding more than the decisions it took out is new behaviour.
    more = _GUESS.replace("    item = default[0]\n", "    if len(default) > 8:\n        return list\n    if default[0] is None:\n"
                          "        return None\n    item = default[0]\n")
    grown = {"src/pkg/types.py": more + _CONVERT.format(guess="    ty = _guess_type(ty, default)\n")}
    assert blocking_tests_findings(review_change(tmp_path / "grown", base, grown)) == [("tests/missing-tests", "src/pkg/types.py", 1)]


_MOVED_FROM = (
    "pub struct Visitor;\n\nimpl Visitor {\n"
    "    pub fn visit_map(self, access: &mut Access) -> Vec<Entry> {\n"
    "        let mut entries = Vec::with_capacity(cautious(access.size_hint()));\n"
    "        while let Some(entry) = access.next_entry() {\n"
    "            entries.push(entry);\n"
    "        }\n"
    "        entries\n"
    "    }\n}\n"
)


def _moved_into(loop: str) -> str:
    return (
        "pub fn read() -> u8 {\n    0\n}\n\npub mod content {\n    pub struct Visitor;\n\n    impl Visitor {\n"
        "        pub fn visit_map(self, access: &mut Access) -> Vec<Entry> {\n"
        "            let mut entries =\n                Vec::with_capacity(\n"
        "                    cautious(access.size_hint()),\n                );\n"
        f"{loop}"
        "            entries\n        }\n    }\n}\n"
    )


def test_a_function_moved_to_another_file_and_edited_on_the_way_is_compared_with_where_it_came_from(
    tmp_path: Path,
) -> None:
    base = {"core/src/content.rs": _MOVED_FROM, "core/src/lib.rs": "pub mod content;\n",
            "serde/src/de.rs": "pub fn read() -> u8 {\n    0\n}\n"}
    edited = (
        "            while let Some(entry) =\n                access.next_entry_seed(Visitor::new(), Visitor::new())\n"
        "            {\n                entries.push(entry);\n            }\n"
    )
    moved = {"core/src/content.rs": None, "core/src/lib.rs": "\n", "serde/src/de.rs": _moved_into(edited)}
    assert blocking_tests_findings(review_change(tmp_path / "moved", base, moved)) == []
    # Moved and given decisions of its own on the way: new behaviour, as if edited in place.
    decides = (
        "            while let Some(entry) = access.next_entry() {\n                if entry.is_empty() {\n"
        "                    continue;\n                }\n                if entry.is_hidden() {\n"
        "                    break;\n                }\n                entries.push(entry);\n            }\n"
    )
    grown = {"core/src/content.rs": None, "core/src/lib.rs": "\n", "serde/src/de.rs": _moved_into(decides)}
    assert blocking_tests_findings(review_change(tmp_path / "grown", base, grown)) == [("tests/missing-tests", "serde/src/de.rs", 9)]
    # A new function beside the removed one's name is still new.
    renamed = {"core/src/content.rs": None, "core/src/lib.rs": "\n",
               "serde/src/de.rs": _moved_into(edited).replace("visit_map", "visit_entries")}
    assert blocking_tests_findings(review_change(tmp_path / "renamed", base, renamed)) == [
        ("tests/missing-tests", "serde/src/de.rs", 9)
    ]


_LISTENER = "package acme\n\nopen class Listener {\n  open fun started(name: String) {}\n}\n"
_RECORDING = (
    "package acme\n\nclass RecordingListener : Listener() {\n  val events = mutableListOf<String>()\n\n"
    "  override fun started(name: String) {\n    events += \"started $name\"\n  }\n{more}}\n"
)
_QUEUED = (
    "\n  override fun queued(name: String, size: Int) {\n    if (size > 0) {\n      events += \"queued $name\"\n"
    "    }\n    events += \"size $size\"\n  }\n"
)
_LISTENER_QUEUED = (
    "package acme\n\nopen class Listener {\n  open fun started(name: String) {}\n\n"
    "  open fun queued(name: String, size: Int) {\n    if (size < 0) {\n      throw IllegalArgumentException(name)\n"
    "    }\n    println(name)\n  }\n}\n"
)


def _gradle_build(support_script: str, library_dependencies: str) -> dict[str, str]:
    return {
        "settings.gradle.kts": 'include(":library")\ninclude(":testing-support")\n',
        "library/build.gradle.kts": f'plugins {{\n  kotlin("multiplatform")\n}}\n\n{library_dependencies}',
        "testing-support/build.gradle.kts": support_script,
        "library/src/commonMain/kotlin/acme/Listener.kt": _LISTENER,
        "testing-support/src/main/kotlin/acme/RecordingListener.kt": _RECORDING.replace("{more}", ""),
    }


def test_a_gradle_project_the_build_uses_only_for_tests_is_test_support(tmp_path: Path) -> None:
    support = 'plugins {\n  kotlin("jvm")\n}\n\ndependencies {\n  api(projects.library)\n}\n'
    change = {
        "library/src/commonMain/kotlin/acme/Listener.kt": _LISTENER_QUEUED,
        "testing-support/src/main/kotlin/acme/RecordingListener.kt": _RECORDING.replace("{more}", _QUEUED),
    }
    for name, dependencies in [
        ("test-configuration", "dependencies {\n  testImplementation(projects.testingSupport)\n}\n"),
        ("test-source-set", "kotlin {\n  sourceSets {\n    commonTest {\n      dependencies {\n"
                            "        implementation(project(\":testing-support\"))\n      }\n    }\n  }\n}\n"),
    ]:
        base = _gradle_build(support, dependencies)
        assert blocking_tests_findings(review_change(tmp_path / name, base, change)) == [], name
    # A project the library itself depends on, or one the build publishes, is product code.
    for name, script, dependencies in [
        ("main-dependency", support, "dependencies {\n  implementation(projects.testingSupport)\n}\n"),
        ("published", support.replace('kotlin("jvm")', 'kotlin("jvm")\n  id("com.vanniktech.maven.publish")'),
         "dependencies {\n  testImplementation(projects.testingSupport)\n}\n"),
    ]:
        base = _gradle_build(script, dependencies)
        assert blocking_tests_findings(review_change(tmp_path / name, base, change)) == [
            ("tests/missing-tests", "library/src/commonMain/kotlin/acme/Listener.kt", 6),
            ("tests/missing-tests", "testing-support/src/main/kotlin/acme/RecordingListener.kt", 10),
        ], name


_CHECKS = (
    "package acme\n\nimport kotlin.test.assertEquals\n\nclass ListenerChecks {\n"
    "  @kotlin.test.Test\n  fun started() {\n    assertEquals(1, 1)\n  }\n{more}}\n"
)
_QUEUED_CHECK = "\n  @kotlin.test.Test\n  fun queued() {\n    Listener().queued(\"a\", 1)\n  }\n"


def test_a_file_in_a_gradle_test_source_set_is_a_test_and_a_comment_on_one_tests_nothing(tmp_path: Path) -> None:
    base = {
        "settings.gradle.kts": 'include(":library")\n',
        "library/build.gradle.kts": 'plugins {\n  kotlin("multiplatform")\n}\n',
        "library/src/commonMain/kotlin/acme/Listener.kt": _LISTENER,
        "library/src/commonTest/kotlin/acme/ListenerChecks.kt": _CHECKS.replace("{more}", ""),
    }
    product = {"library/src/commonMain/kotlin/acme/Listener.kt": _LISTENER_QUEUED}
    tested = {**product, "library/src/commonTest/kotlin/acme/ListenerChecks.kt": _CHECKS.replace("{more}", _QUEUED_CHECK)}
    assert blocking_tests_findings(review_change(tmp_path / "tested", base, tested)) == []
    untested = [("tests/missing-tests", "library/src/commonMain/kotlin/acme/Listener.kt", 6)]
    # The test file's doc comment alone, or the same checks written into the main source set, test nothing.
    commented = {**product, "library/src/commonTest/kotlin/acme/ListenerChecks.kt": _CHECKS.replace(
        "class ListenerChecks", "/**\n * Checks of the listener.\n */\nclass ListenerChecks").replace("{more}", "")}
    assert blocking_tests_findings(review_change(tmp_path / "commented", base, commented)) == untested
    in_main = {**product, "library/src/commonMain/kotlin/acme/ListenerChecks.kt": _CHECKS.replace("{more}", _QUEUED_CHECK)}
    assert blocking_tests_findings(review_change(tmp_path / "in-main", base, in_main)) == untested + [
        ("tests/missing-tests", "library/src/commonMain/kotlin/acme/ListenerChecks.kt", 11)
    ]


_BUILD_RS = (
    "use std::env;\nuse std::process::Command;\n\nfn main() {\n    let minor = match rustc_minor_version() {\n"
    "        Some(minor) => minor,\n        None => return,\n    };\n    if minor >= 46 {\n"
    "        println!(\"cargo:rustc-cfg=has_track_caller\");\n    }\n}\n\n"
    "fn rustc_minor_version() -> Option<u32> {\n    let rustc = env::var_os(\"RUSTC\")?;\n"
    "    let output = Command::new(rustc).arg(\"--version\").output().ok()?;\n"
    "    let version = std::str::from_utf8(&output.stdout).ok()?;\n    let mut pieces = version.split('.');\n"
    "    if pieces.next() != Some(\"rustc 1\") {\n        return None;\n    }\n    pieces.next()?.parse().ok()\n}\n"
)


def test_a_rust_packages_build_script_is_no_product_code(tmp_path: Path) -> None:
    base = {"macros/Cargo.toml": '[package]\nname = "macros"\n', "macros/src/lib.rs": _LIB}
    assert blocking_tests_findings(review_change(tmp_path / "default", base, {"macros/build.rs": _BUILD_RS})) == []
    named = {**base, "macros/Cargo.toml": '[package]\nname = "macros"\nbuild = "tools/probe.rs"\n'}
    assert blocking_tests_findings(review_change(tmp_path / "named", named, {"macros/tools/probe.rs": _BUILD_RS})) == []
    # The same code where the manifest names no build script (`build = false`), or in the crate's sources.
    off = {**base, "macros/Cargo.toml": '[package]\nname = "macros"\nbuild = false\n'}
    assert blocking_tests_findings(review_change(tmp_path / "off", off, {"macros/build.rs": _BUILD_RS})) == [
        ("tests/missing-tests", "macros/build.rs", 14)
    ]
    assert blocking_tests_findings(review_change(tmp_path / "source", base, {"macros/src/probe.rs": _BUILD_RS})) == [
        ("tests/missing-tests", "macros/src/probe.rs", 14)
    ]


_LANGUAGE_BASE = (
    "namespace Acme.Resources {\n\tpublic abstract class Language {\n"
    "\t\tprotected void Translate<T>(string message) {\n\t\t\tMessages[typeof(T).Name] = message;\n\t\t}\n\t}\n}\n"
)
_REGISTERED = ("EmailValidator", "GreaterThanValidator", "LengthValidator", "NotEmptyValidator", "NotNullValidator",
         "RegexValidator")


def _language_class(row: str) -> str:
    rows = "".join("\t\t\t" + row.format(validator=validator) + "\n" for validator in _REGISTERED)
    return (
        "namespace Acme.Resources {\n\tusing Validators;\n\n\tinternal class BengaliLanguage : Language {\n"
        f"\t\tpublic BengaliLanguage() {{\n{rows}\t\t}}\n\t}}\n}}\n"
    )


def test_a_constructor_that_only_registers_constant_rows_is_a_table(tmp_path: Path) -> None:
    base = {"src/Acme/Resources/Language.cs": _LANGUAGE_BASE}
    rows = _language_class('Translate<{validator}>("\'{{PropertyName}}\' is not valid.");')
    assert blocking_tests_findings(review_change(tmp_path / "rows", base, {"src/Acme/Resources/Languages/BengaliLanguage.cs": rows})) == []
    # Rows that compute their message (a call in the argument, an interpolation) are code.
    for name, row in [("computed", 'Translate<{validator}>(Format("{validator}"));'),
                      ("interpolated", 'Translate<{validator}>($"{{Culture}} {validator}");')]:
        branch = {"src/Acme/Resources/Languages/BengaliLanguage.cs": _language_class(row)}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [
            ("tests/missing-tests", "src/Acme/Resources/Languages/BengaliLanguage.cs", 5)
        ], name


_ROUTING = (
    "<?php\n\nnamespace Acme;\n\nclass Routing\n{{\n    public function perform($request)\n    {{\n"
    "{call}"
    "        $status = $results->getStatus();\n        return $request->withAttribute('results', $results);\n    }}\n"
    "{helper}}}\n"
)
_INLINE_CALL = (
    "        $results = $this->resolver->compute(\n            $request->getUri()->getPath(),\n"
    "            $request->getMethod()\n        );\n"
)


def _helper(returned: str) -> str:
    return (
        "\n    protected function resolveFromRequest($request)\n    {\n"
        f"        return $this->resolver->{returned}(\n            $request->getUri()->getPath(),\n"
        "            $request->getMethod()\n        );\n    }\n"
    )


def test_an_expression_extracted_into_a_helper_that_returns_it_is_moved_code(tmp_path: Path) -> None:
    base = {"src/Routing.php": _ROUTING.format(call=_INLINE_CALL, helper="")}
    called = "        $results = $this->resolveFromRequest($request);\n"
    extracted = {"src/Routing.php": _ROUTING.format(call=called, helper=_helper("compute"))}
    assert blocking_tests_findings(review_change(tmp_path / "extracted", base, extracted)) == []
    # A helper that calls something else is new code, whatever it shares with the old lines.
    other = {"src/Routing.php": _ROUTING.format(call=called, helper=_helper("computeCached"))}
    assert blocking_tests_findings(review_change(tmp_path / "other", base, other)) == [("tests/missing-tests", "src/Routing.php", 14)]


_BUILD_ACTION = (
    "package acme\n\nclass BundleAction {\n  fun execute(jars: List<String>): List<String> {\n"
    "    val out = mutableListOf<String>()\n    for (jar in jars) {\n      if (jar.endsWith(\".zip\")) {\n"
    "        continue\n      }\n      if (jar.isEmpty()) {\n        break\n      }\n      out.add(jar)\n    }\n"
    "    println(out)\n    return out\n  }\n}\n"
)


def test_gradle_build_logic_is_no_product_code(tmp_path: Path) -> None:
    base = {
        "settings.gradle.kts": 'pluginManagement {\n  includeBuild("build-logic")\n}\ninclude(":library")\n',
        "build-logic/settings.gradle.kts": 'rootProject.name = "build-logic"\n',
        "build-logic/build.gradle.kts": 'plugins {\n  `kotlin-dsl`\n}\n',
        "library/build.gradle.kts": 'plugins {\n  kotlin("jvm")\n}\n',
        "library/src/main/kotlin/acme/Listener.kt": _LISTENER.replace("package demo", "package acme"),
    }
    for name, path in [("included", "build-logic/src/main/kotlin/BundleAction.kt"),
                       ("build-src", "buildSrc/src/main/kotlin/BundleAction.kt")]:
        assert blocking_tests_findings(review_change(tmp_path / name, base, {path: _BUILD_ACTION})) == [], name
    # The same code in a project of the build is product code.
    assert blocking_tests_findings(review_change(tmp_path / "library", base, {"library/src/main/kotlin/acme/BundleAction.kt": _BUILD_ACTION})) == [
        ("tests/missing-tests", "library/src/main/kotlin/acme/BundleAction.kt", 4)
    ]


_COMMANDS = (
    "pub struct Command {\n    subcommands: Vec<Command>,\n}\n\nimpl Command {\n"
    "    pub fn new() -> Self {\n        Command { subcommands: Vec::new() }\n    }\n{added}}\n"
)
_MAP_SUBCOMMANDS = (
    "    /// Changes every subcommand.\n    ///\n{fence}"
    "    /// let cmd = Command::new().map_subcommands(|sub| sub);\n    /// assert!(cmd.subcommands.is_empty());\n"
    "    /// ```\n    #[must_use]\n    pub fn map_subcommands<F>(mut self, f: F) -> Self\n    where\n"
    "        F: FnMut(Command) -> Command,\n    {\n        self.subcommands = self.subcommands.into_iter().map(f).collect();\n"
    "        self\n    }\n"
)


@pytest.mark.parametrize(("name", "fence", "path", "blocks"), [
    ("doctest", "    /// ```\n", "src/lib.rs", False),
    ("rust-doctest", "    /// ```rust,edition2021\n", "src/lib.rs", False),
    # Under one set of features the example runs, under the others it is ignored: it is a test.
    ("feature-doctest", '    #[cfg_attr(feature = "std", doc = "```")]\n'
     '    #[cfg_attr(not(feature = "std"), doc = "```ignore")]\n', "src/lib.rs", False),
    # A block that must not compile is a test in whole: a check made at compile time.
    ("compile-fail", "    /// ```compile_fail,E0277\n", "src/lib.rs", False),
    # Look-alikes rustdoc never runs: another language's block, one kept from running, a binary's.
    ("text", "    /// ```txt\n", "src/lib.rs", True),
    ("no-run", "    /// ```no_run\n", "src/lib.rs", True),
    ("ignored", "    /// ```ignore\n", "src/lib.rs", True),
    ("binary", "    /// ```\n", "src/main.rs", True),
])
def test_a_rust_doc_example_that_asserts_is_a_test(tmp_path: Path, name: str, fence: str, path: str, blocks: bool) -> None:
    base = {"Cargo.toml": '[package]\nname = "commands"\nversion = "0.1.0"\n', path: _COMMANDS.replace("{added}", "")}
    branch = {path: _COMMANDS.replace("{added}", "\n" + _MAP_SUBCOMMANDS.replace("{fence}", fence))}
    line = 16 + fence.count("\n")
    assert blocking_tests_findings(review_change(tmp_path, base, branch)) == ([("tests/missing-tests", path, line)] if blocks else [])


def test_a_library_without_doctests_runs_no_doc_example(tmp_path: Path) -> None:
    manifest = '[package]\nname = "commands"\nversion = "0.1.0"\n\n[lib]\ndoctest = false\n'
    base = {"Cargo.toml": manifest, "src/lib.rs": _COMMANDS.replace("{added}", "")}
    branch = {"src/lib.rs": _COMMANDS.replace("{added}", "\n" + _MAP_SUBCOMMANDS.replace("{fence}", "    /// ```\n"))}
    assert blocking_tests_findings(review_change(tmp_path, base, branch)) == [("tests/missing-tests", "src/lib.rs", 17)]


_GENERATOR = (
    "use std::io::{Error, Write};\n\npub trait Generator {\n    fn generate(&self, buf: &mut dyn Write);\n{added}}\n"
)


@pytest.mark.parametrize(("name", "body", "blocks"), [
    # A fallible twin that forwards to the infallible method and returns the unit value.
    ("forwards", "        self.generate(buf);\n        Ok(())\n", False),
    ("forwards-wrapped", "        Ok(self.generate(buf))\n", False),
    # Look-alikes that do more: a second call, a value computed from what it forwarded.
    ("flushes", "        self.generate(buf);\n        Ok(buf.flush()?)\n", True),
    ("boxes", "        self.generate(buf);\n        Ok(Box::new(buf))\n", True),
])
def test_a_rust_method_that_forwards_and_returns_a_built_value_passes_through(
    tmp_path: Path, name: str, body: str, blocks: bool
) -> None:
    path = "src/generator.rs"
    added = f"\n    fn try_generate(&self, buf: &mut dyn Write) -> Result<(), Error> {{\n{body}    }}\n"
    base = {"Cargo.toml": '[package]\nname = "generator"\nversion = "0.1.0"\n', path: _GENERATOR.replace("{added}", "")}
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _GENERATOR.replace("{added}", added)}))
    assert found == ([("tests/missing-tests", path, 6)] if blocks else []), name


_LEVEL = "pub fn level(text: &str) -> u8 {{\n{body}}}\n"
_LEVEL_TESTS = (
    "{attribute}\nmod tests {{\n    use super::*;\n\n    #[test]\n    fn levels() {{\n        // {comment}\n"
    "        assert_eq!(level(\"{word}\"), {level});\n    }}\n}}\n"
)
_ONE_LEVEL = "    if text == \"high\" {\n        return 2;\n    }\n    0\n"
_THREE_LEVELS = (
    "    if text == \"high\" {\n        return 2;\n    }\n    if text == \"low\" {\n        return 1;\n    }\n"
    "    if text.is_empty() {\n        return 3;\n    }\n    0\n"
)


@pytest.mark.parametrize(("name", "attribute", "comment", "word", "tests_first", "blocks"), [
    ("test-module", "#[cfg(test)]", "levels", "low", False, False),
    ("test-module-first", "#[cfg(test)]", "levels", "low", True, False),
    # Look-alikes: only a comment of the test module edited, the code below it or above it.
    ("comment", "#[cfg(test)]", "levels by word", "high", False, True),
    ("comment-first", "#[cfg(test)]", "levels by word", "high", True, True),
    # A module a feature compiles: its `#[test]` function is a test all the same.
    ("feature-module", "#[cfg(feature = \"testing\")]", "levels", "low", True, False),
])
def test_an_edit_of_a_rust_files_own_test_module_is_a_test(
    tmp_path: Path, name: str, attribute: str, comment: str, word: str, tests_first: bool, blocks: bool
) -> None:
    def source(body: str, comment: str, word: str) -> str:
        tests = _LEVEL_TESTS.format(attribute=attribute, comment=comment, word=word, level={"high": 2, "low": 1}[word])
        level = _LEVEL.format(body=body)
        return f"{tests}\n{level}" if tests_first else f"{level}\n{tests}"

    base = {"Cargo.toml": '[package]\nname = "levels"\nversion = "0.1.0"\n', "src/lib.rs": source(_ONE_LEVEL, "levels", "high")}
    branch = {"src/lib.rs": source(_THREE_LEVELS, comment, word)}
    found = blocking_tests_findings(review_change(tmp_path, base, branch))
    assert found == ([("tests/missing-tests", "src/lib.rs", 16 if tests_first else 5)] if blocks else []), name


_EXTENSIONS = (
    "pub struct Arg {\n    ext: Extensions,\n}\n\nimpl Arg {\n    pub fn new() -> Self {\n"
    "        Arg { ext: Extensions::default() }\n    }\n{added}}\n"
)


@pytest.mark.parametrize(("name", "body", "blocks"), [
    # A typed map's accessor: the turbofish names a type, it computes nothing.
    ("typed-get", "        self.ext.get::<T>()\n", False),
    # Look-alikes that compute what they pass on: an operator, a second call.
    ("offset", "        self.ext.get::<T>(self.ext.len() - 1)\n", True),
    ("trimmed", "        self.ext.get::<T>(name.trim())\n", True),
])
def test_a_rust_delegate_with_a_type_argument_passes_through(tmp_path: Path, name: str, body: str, blocks: bool) -> None:
    path = "src/arg.rs"
    added = f"\n    pub fn get<T: Extension>(&self, name: &str) -> Option<&T> {{\n{body}    }}\n"
    base = {"Cargo.toml": '[package]\nname = "arg"\nversion = "0.1.0"\n', path: _EXTENSIONS.replace("{added}", "")}
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _EXTENSIONS.replace("{added}", added)}))
    assert found == ([("tests/missing-tests", path, 10)] if blocks else []), name


_SHELLS = "pub struct Shells<'s>(pub &'s [&'s str]);\n\nimpl<'s> Shells<'s> {\n{added}}\n"


@pytest.mark.parametrize(("name", "body", "blocks"), [
    # An accessor: one forwarded call and argument-less adaptors of what it returns.
    ("iterator", "        self.0.iter().copied()\n", False),
    # Look-alikes: an adaptor given an argument is a second call; an operator computes.
    ("skipping", "        self.0.iter().copied().skip(self.0.len())\n", True),
    ("counting", "        self.0.iter().copied().count() + 1\n", True),
])
def test_a_rust_accessor_chaining_adaptors_without_arguments_passes_through(
    tmp_path: Path, name: str, body: str, blocks: bool
) -> None:
    path = "src/shells.rs"
    added = f"    pub fn iter(&self) -> impl Iterator<Item = &str> {{\n{body}    }}\n"
    base = {"Cargo.toml": '[package]\nname = "shells"\nversion = "0.1.0"\n', path: _SHELLS.replace("{added}", "")}
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _SHELLS.replace("{added}", added)}))
    assert found == ([("tests/missing-tests", path, 4)] if blocks else []), name


_REQUEST = (
    "module Site\n  class Request\n    module Helpers\n      def ip\n        addresses = forwarded_addresses\n"
    "        return remote_address if addresses.empty?\n        addresses.first\n      end\n    end\n\n"
    "    include Helpers\n\n    def params\n      @params ||= super\n    end\n{method}  end\nend\n"
)


def test_a_ruby_method_that_memoizes_what_it_forwards_decides_nothing(tmp_path: Path) -> None:
    base = {"lib/site/request.rb": _REQUEST.format(method="")}
    # `@ip ||= super`: the inherited method's answer, computed once; a call forwarded the same way.
    for name, body in [("super", "@ip ||= super"), ("forward", "@ip ||= helpers.ip(env)")]:
        branch = {"lib/site/request.rb": _REQUEST.format(method=f"\n    def ip\n      {body}\n    end\n")}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [], name
    # Memoizing what the method works out itself is new behaviour: it still blocks.
    for name, body in [("operator", "@ip ||= forwarded_ip || remote_address"),
                       ("two-calls", "@ip ||= pick(forwarded_addresses(env))")]:
        branch = {"lib/site/request.rb": _REQUEST.format(method=f"\n    def ip\n      {body}\n    end\n")}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [
            ("tests/missing-tests", "lib/site/request.rb", 17)
        ], name


_LINT = (
    "module Site\n  class Lint\n    class LintError < RuntimeError; end\n\n    module Assertion\n"
    "      def assert(message)\n        unless yield\n          raise LintError, message\n        end\n      end\n"
    "    end\n    include Assertion\n\n    def check_env(env)\n{checks}      env\n    end\n  end\nend\n"
)
_ASSERTED = (
    "      assert(\"env is not a Hash\") { env.kind_of?(Hash) }\n      assert(\"env is frozen\") { !env.frozen? }\n"
    "      assert(\"env has no method\") { env.key?(\"REQUEST_METHOD\") }\n"
)
_INLINE = (
    "      raise LintError, \"env is not a Hash\" unless env.kind_of?(Hash)\n"
    "      raise LintError, \"env is frozen\" if env.frozen?\n"
    "      raise LintError, \"env has no method\" unless env.key?(\"REQUEST_METHOD\")\n"
)
_MORE = (
    "      raise LintError, \"env has no path\" unless env.key?(\"PATH_INFO\")\n"
    "      raise LintError, \"env has no scheme\" unless env.key?(\"rack.url_scheme\")\n"
)


def _blocking_rules(findings: list) -> list[str]:  # type: ignore[type-arg]
    return [rule for rule, _path, _line in blocking_tests_findings(findings)]


def test_calls_of_a_guard_helper_written_out_as_the_checks_it_makes(tmp_path: Path) -> None:
    base = {"lib/site/lint.rb": _LINT.format(checks=_ASSERTED)}
    fix = {"branch_name": "fix/inefficient-assert", "message": "Fix inefficient assert pattern"}
    # Each `assert(msg) { cond }` becomes the `raise ... unless cond` the helper ran: the same decisions.
    inline = {"lib/site/lint.rb": _LINT.format(checks=_INLINE)}
    assert blocking_tests_findings(review_change(tmp_path / "inline", base, inline, **fix)) == []
    # Checks the helper never made, written beside the inlined ones (or beside its calls), still block.
    for name, checks in [("inline-and-more", _INLINE + _MORE), ("calls-and-more", _ASSERTED + _MORE)]:
        branch = {"lib/site/lint.rb": _LINT.format(checks=checks)}
        assert _blocking_rules(review_change(tmp_path / name, base, branch, **fix)) == [
            "tests/fix-without-test", "tests/missing-tests"
        ], name


_REFINEMENT = (
    "module Site\n  module RegexpExtensions\n    refine Regexp do\n      def match?(string, pos = 0)\n"
    "        !!match(string, pos)\n      end{condition}\n    end\n  end\nend\n"
)


def test_a_ruby_backport_of_what_the_runtime_has_is_its_behaviour_not_the_projects(tmp_path: Path) -> None:
    base = {"lib/site.rb": "module Site\nend\n"}
    # Defined only where a regex literal lacks `match?`: the runtime's method, for older rubies.
    for name, condition in [("modifier", " unless //.respond_to?(:match?)"),
                            ("string", " unless ''.respond_to?('match?')")]:
        branch = {"lib/site/core_ext/regexp.rb": _REFINEMENT.format(condition=condition)}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [], name
    # Defined everywhere, or unless the project's own class has one (a default), it is new code.
    for name, condition in [("always", ""), ("own-class", " unless method_defined?(:match?)"),
                            ("other-name", " unless //.respond_to?(:match)")]:
        branch = {"lib/site/core_ext/regexp.rb": _REFINEMENT.format(condition=condition)}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [
            ("tests/missing-tests", "lib/site/core_ext/regexp.rb", 4)
        ], name


_ADAPTER = (
    "module Site\n  class Adapter\n    def call(env)\n      http = connection(env)\n      http.request(env)\n    end\n\n"
    "    def connection(env)\n      Net::HTTP.new(env[:host])\n    end\n{method}  end\nend\n"
)


def test_a_ruby_method_that_yields_one_call_passes_it_through(tmp_path: Path) -> None:
    base = {"lib/site/adapter.rb": _ADAPTER.format(method="")}
    # `yield connection(env)` hands the block what one call returns, as `return` would the caller.
    branch = {"lib/site/adapter.rb": _ADAPTER.format(method="\n    def with_connection(env)\n      yield connection(env)\n    end\n")}
    assert blocking_tests_findings(review_change(tmp_path / "yield", base, branch)) == []
    # Yielding what the method works out (an operator, a second call) is new behaviour.
    for name, value in [("operator", "connection(env) || fallback"), ("two-calls", "connection(prepare(env))")]:
        method = f"\n    def with_connection(env)\n      yield {value}\n    end\n"
        assert blocking_tests_findings(review_change(tmp_path / name, base, {"lib/site/adapter.rb": _ADAPTER.format(method=method)})) == [
            ("tests/missing-tests", "lib/site/adapter.rb", 12)
        ], name


_SESSION = (
    "module Site\n  class SessionHash\n    SESSION_KEY = \"site.session\"\n\n    def self.options(env)\n"
    "      env[\"site.session.options\"]\n    end\n{methods}  end\nend\n"
)


def test_ruby_accessors_of_a_hash_entry_decide_nothing(tmp_path: Path) -> None:
    base = {"lib/site/session.rb": _SESSION.format(methods="")}
    # `env[KEY]` and `env[KEY] = session` read and store one entry, as `@name` and `@name = name` do.
    accessors = ("\n    def self.find(env)\n      env[SESSION_KEY]\n    end\n\n"
                 "    def self.set(env, session)\n      env[SESSION_KEY] = session\n    end\n")
    assert blocking_tests_findings(review_change(tmp_path / "accessors", base, {"lib/site/session.rb": _SESSION.format(methods=accessors)})) == []
    # Storing what a call works out, or under a key it works out, is code.
    for name, store in [("merged", "env[SESSION_KEY] = session.merge(defaults)"), ("keyed", "env[key_for(session)] = session")]:
        methods = f"\n    def self.set(env, session)\n      {store}\n    end\n"
        assert blocking_tests_findings(review_change(tmp_path / name, base, {"lib/site/session.rb": _SESSION.format(methods=methods)})) == [
            ("tests/missing-tests", "lib/site/session.rb", 9)
        ], name


_BLOCKING_BUILDER = (
    "pub struct ClientBuilder {\n    inner: Inner,\n}\n\nimpl ClientBuilder {\n"
    "    fn with_inner<F: FnOnce(Inner) -> Inner>(mut self, func: F) -> ClientBuilder {\n"
    "        self.inner = func(self.inner);\n        self\n    }\n{added}}\n"
)


@pytest.mark.parametrize(("name", "body", "blocks"), [
    # The blocking builder's setter hands its value to the async builder's method of the same name.
    ("forwards", "self.with_inner(|inner| inner.timeout(value))", False),
    ("forwards-moved", "self.with_inner(move |inner| inner.timeout(value))", False),
    # Look-alikes that compute: an operator, a second call, a call that is no method of the parameter.
    ("doubles", "self.with_inner(|inner| inner.timeout(value * 2))", True),
    ("chains", "self.with_inner(|inner| inner.timeout(value).retries(3))", True),
    ("configures", "self.with_inner(|inner| configure(inner, value))", True),
])
def test_a_rust_setter_forwarding_through_a_closure_passes_through(
    tmp_path: Path, name: str, body: str, blocks: bool
) -> None:
    path = "src/blocking.rs"
    added = f"\n    pub fn timeout(self, value: u64) -> ClientBuilder {{\n        {body}\n    }}\n"
    base = {"Cargo.toml": '[package]\nname = "client"\nversion = "0.1.0"\n', path: _BLOCKING_BUILDER.replace("{added}", "")}
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _BLOCKING_BUILDER.replace("{added}", added)}))
    assert found == ([("tests/missing-tests", path, 11)] if blocks else []), name


_WRAPPER = (
    "pub struct Wrapper<T> {\n    inner: T,\n    items: Vec<T>,\n    count: usize,\n}\n\n"
    "impl<T> Wrapper<T> {\n{added}}\n"
)


@pytest.mark.parametrize(("name", "signature", "body", "blocks"), [
    # A struct literal of plain values, a reference to a field: accessors and constructors.
    ("literal", "pub fn new(inner: T) -> Self", "Self { inner, items: Vec::new(), count: 0 }", False),
    ("reference", "pub fn get_ref(&self) -> &T", "&self.inner", False),
    ("mutable-reference", "pub fn get_mut(&mut self) -> &mut T", "&mut self.inner", False),
    # Look-alikes that compute what they build or point to.
    ("counted", "pub fn next(self, inner: T) -> Self", "Self { inner, items: self.items, count: self.count + 1 }", True),
    ("last", "pub fn last(&self) -> &T", "&self.items[self.items.len() - 1]", True),
])
def test_a_rust_struct_literal_or_reference_of_plain_values_is_trivial(
    tmp_path: Path, name: str, signature: str, body: str, blocks: bool
) -> None:
    path = "src/wrapper.rs"
    added = f"    {signature} {{\n        {body}\n    }}\n"
    base = {"Cargo.toml": '[package]\nname = "wrapper"\nversion = "0.1.0"\n', path: _WRAPPER.replace("{added}", "")}
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _WRAPPER.replace("{added}", added)}))
    assert found == ([("tests/missing-tests", path, 8)] if blocks else []), name


_BALANCE = "use std::fmt;\n\n{derive}pub struct Balance<S> {{\n    inner: S,\n    count: usize,\n}}\n{impls}"
_WRITTEN_CLONE = (
    "\nimpl<S: Clone> Clone for Balance<S> {\n    fn clone(&self) -> Self {\n"
    "        Self {\n            inner: self.inner.clone(),\n            count: self.count.clone(),\n        }\n    }\n}\n"
)
_WRITTEN_DEBUG = (
    "\nimpl<S: fmt::Debug> fmt::Debug for Balance<S> {\n    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result {\n"
    "        f.debug_struct(\"Balance\").field(\"inner\", &self.inner).field(\"count\", &self.count).finish()\n"
    "    }\n}\n"
)
_WRITTEN_EQ = (
    "\nimpl<S: PartialEq> PartialEq for Balance<S> {\n    fn eq(&self, other: &Self) -> bool {\n"
    "        self.inner.eq(&other.inner).then(|| true).unwrap_or(false)\n    }\n}\n"
)


@pytest.mark.parametrize(("name", "before", "after", "impls", "blocks"), [
    # The derive taken off and its impls written by hand, to drop its bound on `S`.
    ("clone-and-debug", "#[derive(Clone, Debug)]\n", "", _WRITTEN_CLONE + _WRITTEN_DEBUG, False),
    ("debug-kept-clone", "#[derive(Clone, Debug)]\n", "#[derive(Clone)]\n", _WRITTEN_DEBUG, False),
    # Look-alikes: the type never derived it, it still derives it, or an equality chooses what it
    # compares. (A `Debug` impl is never public API, derived or not: test_lens_tests_debug.py.)
    ("new-clone", "", "", _WRITTEN_CLONE, True),
    ("still-derived", "#[derive(Debug)]\n", "#[derive(Debug)]\n", _WRITTEN_CLONE, True),
    ("equality", "#[derive(PartialEq)]\n", "", _WRITTEN_EQ, True),
])
def test_a_rust_derive_written_out_by_hand_is_no_new_behaviour(
    tmp_path: Path, name: str, before: str, after: str, impls: str, blocks: bool
) -> None:
    path = "src/balance.rs"
    base = {"Cargo.toml": '[package]\nname = "balance"\nversion = "0.1.0"\n', path: _BALANCE.format(derive=before, impls="")}
    branch = {path: _BALANCE.format(derive=after, impls=impls)}
    found = blocking_tests_findings(review_change(tmp_path, base, branch))
    assert (found != []) is blocks, (name, found)


_SERVICE_BUILDER = (
    "pub struct Limit {\n    max: usize,\n}\n\nimpl Limit {\n    pub fn new(max: usize) -> Self {\n"
    "        Limit { max }\n    }\n}\n\npub struct Stack<A, B>(A, B);\n\npub struct ServiceBuilder<L> {\n    layer: L,\n}\n\n"
    "impl<L> ServiceBuilder<L> {\n    pub fn layer<T>(self, layer: T) -> ServiceBuilder<Stack<T, L>> {\n"
    "        ServiceBuilder { layer: Stack(layer, self.layer) }\n    }\n{added}}\n"
)


@pytest.mark.parametrize(("name", "returns", "body", "blocks"), [
    # A shortcut that stacks the layer its signature names, built from its parameter.
    ("named", "ServiceBuilder<Stack<Limit, L>>", "self.layer(Limit::new(max))", False),
    ("named-by-path", "ServiceBuilder<Stack<crate::Limit, L>>", "self.layer(crate::Limit::new(max))", False),
    # Look-alikes: a type the signature does not name, an argument computed, a function of a module.
    ("unnamed", "ServiceBuilder<Stack<T, L>>", "self.layer(Limit::new(max))", True),
    ("doubled", "ServiceBuilder<Stack<Limit, L>>", "self.layer(Limit::new(max * 2))", True),
    ("bounded", "ServiceBuilder<Stack<Limit, L>>", "self.layer(Limit::new(max.min(10)))", True),
    ("module-function", "ServiceBuilder<Stack<Limit, L>>", "self.layer(crate::limit(max))", True),
])
def test_a_rust_shortcut_forwarding_the_type_its_signature_names_passes_through(
    tmp_path: Path, name: str, returns: str, body: str, blocks: bool
) -> None:
    path = "src/builder.rs"
    generics = "<T>" if "<T," in returns else ""
    added = f"\n    pub fn limit{generics}(self, max: usize) -> {returns} {{\n        {body}\n    }}\n"
    base = {"Cargo.toml": '[package]\nname = "builder"\nversion = "0.1.0"\n', path: _SERVICE_BUILDER.replace("{added}", "")}
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _SERVICE_BUILDER.replace("{added}", added)}))
    assert found == ([("tests/missing-tests", path, 22)] if blocks else []), name


_CONFIGURED = (
    "use std::time::Duration;\n\npub struct ClientBuilder {\n    retries: Option<u32>,\n}\n\n"
    "impl ClientBuilder {\n{added}}\n"
)


@pytest.mark.parametrize(("name", "signature", "body", "blocks"), [
    # A setter storing the conversion its parameter's declared type asks for.
    ("bound", "pub fn retries<C>(mut self, retries: C) -> ClientBuilder\n    where\n        C: Into<Option<u32>>,\n   ",
     "self.retries = retries.into();", False),
    ("impl-into", "pub fn retries(mut self, retries: impl Into<Option<u32>>) -> ClientBuilder",
     "self.retries = retries.into();", False),
    # Look-alikes: a parameter not declared convertible, a conversion of what a call returned.
    ("undeclared", "pub fn retries(mut self, retries: Retries) -> ClientBuilder", "self.retries = retries.into();", True),
    ("computed", "pub fn retries(mut self, retries: impl Into<Option<u32>>) -> ClientBuilder",
     "self.retries = retries.into().map(|count| count.min(10));", True),
])
def test_a_rust_setter_storing_its_parameters_declared_conversion_passes_through(
    tmp_path: Path, name: str, signature: str, body: str, blocks: bool
) -> None:
    path = "src/builder.rs"
    added = f"    {signature} {{\n        {body}\n        self\n    }}\n"
    base = {"Cargo.toml": '[package]\nname = "builder"\nversion = "0.1.0"\n', path: _CONFIGURED.replace("{added}", "")}
    found = blocking_tests_findings(review_change(tmp_path, base, {path: _CONFIGURED.replace("{added}", added)}))
    assert found == ([("tests/missing-tests", path, 8)] if blocks else []), name


_VERSIONER = (
    "module Site\n  class Versioner < Base\n{method}    def before\n      path = normalize(env[\"PATH_INFO\"])\n"
    "      return if path == \"/\"\n\n      strip(path)\n    end\n  end\nend\n"
)


def test_a_ruby_constructor_is_private_as_ruby_makes_it(tmp_path: Path) -> None:
    base = {"lib/site/versioner.rb": _VERSIONER.format(method="")}
    # `initialize` is private wherever it is defined (callers reach it through `new`): a short one
    # that prepares what the class computed per call is a private helper's size, no public API.
    constructor = ("    def {name}(app, **options)\n      super\n"
                   "      @prefixes = [mount_path, normalize(prefix)].select {{ |p| p.present? && p != \"/\" }}.freeze\n"
                   "    end\n\n")
    branch = {"lib/site/versioner.rb": _VERSIONER.format(method=constructor.format(name="initialize"))}
    assert blocking_tests_findings(review_change(tmp_path / "initialize", base, branch)) == []
    # The same body under a public name, or a constructor of five statements, still blocks.
    branch = {"lib/site/versioner.rb": _VERSIONER.format(method=constructor.format(name="setup"))}
    assert blocking_tests_findings(review_change(tmp_path / "public", base, branch)) == [("tests/missing-tests", "lib/site/versioner.rb", 3)]
    long = ("    def initialize(app, **options)\n      super\n      @mount = normalize(mount_path)\n"
            "      @prefix = normalize(prefix)\n      @prefixes = [@mount, @prefix].reject(&:empty?)\n"
            "      @pattern = Regexp.union(@prefixes)\n    end\n\n")
    branch = {"lib/site/versioner.rb": _VERSIONER.format(method=long)}
    assert blocking_tests_findings(review_change(tmp_path / "long", base, branch)) == [("tests/missing-tests", "lib/site/versioner.rb", 3)]


_FORMATTER_MIDDLEWARE = (
    "module Site\n  class Formatter\n    def read_body?(request)\n{body}    end\n\n"
    "    def after(response)\n      response.finish\n    end\n  end\nend\n"
)
_CONDITION = (
    "      (request.post? || request.put?) && !request.form_data? && !request.parseable? &&\n"
    "        request.content_length.to_i.positive?\n"
)
_GUARDS = (
    "      return false unless request.post? || request.put?\n      return false if request.form_data?\n"
    "      return false if request.parseable?\n\n      request.content_length.to_i.positive?\n"
)


def test_a_condition_split_into_guard_clauses_makes_the_same_decisions(tmp_path: Path) -> None:
    base = {"lib/site/formatter.rb": _FORMATTER_MIDDLEWARE.format(body=_CONDITION)}
    # Each `&& x` becomes `return false unless x`: the decisions the condition made, as branches.
    guards = {"lib/site/formatter.rb": _FORMATTER_MIDDLEWARE.format(body=_GUARDS)}
    assert blocking_tests_findings(review_change(tmp_path / "guards", base, guards)) == []
    # A dispatch on the value's class for `(a && b) || (c && d)` decides the same too.
    dispatch = {"lib/site/formatter.rb": _FORMATTER_MIDDLEWARE.format(body=(
        "      case request\n      when Array then request.empty?\n      when Hash then request.key?(:body)\n"
        "      else false\n      end\n"))}
    pairs = {"lib/site/formatter.rb": _FORMATTER_MIDDLEWARE.format(body=(
        "      (request.is_a?(Array) && request.empty?) ||\n        (request.is_a?(Hash) && request.key?(:body))\n"))}
    assert blocking_tests_findings(review_change(tmp_path / "dispatch", pairs, dispatch)) == []
    # Guards written beside the condition, or checks it never made, are new decisions.
    beside = _GUARDS.replace("      request.content_length", "      return false if request.chunked?\n"
                             "      return false if request.empty?\n      request.content_length")
    kept = "      return false if request.chunked?\n      return false if request.empty?\n" + _CONDITION
    # One check beyond those the condition made: which branch is new cannot be told, all count.
    one_more = _GUARDS.replace("      request.content_length", "      return false if request.chunked?\n      request.content_length")
    for name, body in [("new-checks", beside), ("condition-kept", kept), ("one-more", one_more)]:
        branch = {"lib/site/formatter.rb": _FORMATTER_MIDDLEWARE.format(body=body)}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [("tests/missing-tests", "lib/site/formatter.rb", 4)], name


_HANDLER = (
    "module Site\n  class Handler\n{methods}\n    def handle(type)\n{handle}    end\n  end\nend\n"
)
_ATTRIBUTE = (
    "    def attribute(params, declared, memo)\n      if declared.is_a?(Hash)\n        declared.each_pair do |parent, children|\n"
    "          next unless @include_missing || params.key?(parent)\n\n          key = key_for(parent)\n"
    "          nested = params[parent] || params.class.new\n          path = @path.dup\n          path << parent.to_s\n"
    "          memo[key] = handle(nested) { recurse(nested, children, path) }\n        end\n      else\n"
    "        memo[key_for(declared)] = params[declared]\n      end\n    end\n"
)
_SPLIT = (
    "    def attribute(params, declared, memo)\n      return leaf(params, declared, memo) unless declared.is_a?(Hash)\n\n"
    "      declared.each_pair { |parent, children| nested(params, parent, children, memo) }\n    end\n\n"
    "    def leaf(params, declared, memo)\n      memo[key_for(declared)] = params[declared]\n    end\n\n"
    "    def nested(params, parent, children, memo)\n      return unless @include_missing || params.key?(parent)\n\n"
    "      memo_key = key_for(parent)\n      passed = params[parent] || params.class.new\n      nested_path = @path.dup\n"
    "      nested_path << parent.to_s\n      memo[memo_key] = handle(passed) { recurse(passed, children, nested_path) }\n"
    "    end\n"
)
_SAFE = (
    "      if type == 'Hash'\n        {}\n      elsif type&.start_with?('[')\n        []\n"
    "      elsif type&.start_with?('Set')\n        Set.new\n      else\n        yield\n      end\n"
)
_NIL_GUARD = (
    "      return yield if type.nil?\n      return {} if type == 'Hash'\n      return [] if type.start_with?('[')\n"
    "      return Set.new if type.start_with?('Set')\n\n      yield\n"
)


def test_a_refactor_that_writes_nil_safe_calls_as_a_guard_is_rearranged(tmp_path: Path) -> None:
    # A function split into helpers, its `type&.x` calls made one `return yield if type.nil?`: the
    # file makes the decisions it made, one of them now a branch.
    base = {"lib/site/handler.rb": _HANDLER.format(methods=_ATTRIBUTE, handle=_SAFE)}
    branch = {"lib/site/handler.rb": _HANDLER.format(methods=_SPLIT, handle=_NIL_GUARD)}
    assert blocking_tests_findings(review_change(tmp_path / "split", base, branch)) == []
    # The same split where the nil guard is a check the file never made still blocks.
    base = {"lib/site/handler.rb": _HANDLER.format(methods=_ATTRIBUTE, handle=_SAFE.replace("type&.", "type.to_s."))}
    assert blocking_tests_findings(review_change(tmp_path / "grown", base, branch)) == [("tests/missing-tests", "lib/site/handler.rb", 13)]


_MEDIA_TYPES = (
    "      [].tap do |types|\n        base = \"application/vnd.#{vendor}\"\n        content_types.each_key do |extension|\n"
    "          versions&.reverse_each do |version|\n            types << \"#{base}-#{version}+#{extension}\"\n"
    "            types << \"#{base}-#{version}\"\n          end\n          types << \"#{base}+#{extension}\"\n"
    "        end\n        types << base\n        types.concat(content_types.values.flatten)\n      end\n"
)
_MEMOIZED = (
    "      @media_types ||= begin\n        media = []\n        base = \"application/vnd.#{vendor}\"\n"
    "        content_types.each_key do |extension|\n          versions&.reverse_each do |version|\n"
    "            media << \"#{base}-#{version}+#{extension}\"\n            media << \"#{base}-#{version}\"\n          end\n"
    "          media << \"#{base}+#{extension}\"\n        end\n        media << base\n"
    "        media.concat(content_types.values.flatten)\n        media\n      end\n"
)


def _versioner_files(base_method: str, header_method: str) -> dict[str, str]:
    def file(name: str, parent: str, method: str) -> str:
        return f"module Site\n  class {name}{parent}\n    def vendor\n      options[:vendor]\n    end\n{method}  end\nend\n"
    return {"lib/site/base.rb": file("Base", "", base_method), "lib/site/header.rb": file("Header", " < Base", header_method)}


def test_a_method_moved_into_another_class_and_edited_on_the_way_is_compared_with_where_it_came_from(
    tmp_path: Path,
) -> None:
    base = _versioner_files("", f"\n    def media_types\n{_MEDIA_TYPES}    end\n")
    # Moved up from the subclass into its base class and memoized, its local renamed: the same body.
    branch = _versioner_files(f"\n    private\n\n    def media_types\n{_MEMOIZED}    end\n", "")
    assert blocking_tests_findings(review_change(tmp_path / "moved", base, branch)) == []
    # A body that decides more than the removed one did, another body, or the body under another
    # name (a rename is new) still blocks.
    decided = _MEMOIZED.replace("          media << \"#{base}+#{extension}\"\n",
                                "          media << \"#{base}+#{extension}\" if extension != :txt\n"
                                "          media << \"#{base}\" if versions.nil?\n")
    other = ("      @media_types ||= begin\n        found = negotiate(env)\n        found.each { |item| item.freeze }\n"
             "        found.reject!(&:empty?)\n        record(found)\n        found.compact\n      end\n")
    for name, method, body in [("decided", "media_types", decided), ("other", "media_types", other),
                               ("renamed", "available_types", _MEMOIZED)]:
        branch = _versioner_files(f"\n    private\n\n    def {method}\n{body}    end\n", "")
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [("tests/missing-tests", "lib/site/base.rb", 9)], name


_CONCERN = (
    "module Site\n{doc}  module VersionConcern\n    def changeset\n      object_changes\n    end\n"
    "{method}  end\nend\n"
)
_DESERIALIZED = (
    "{doc}    def object_deserialized\n      if self.class.object_col_is_json?\n        object\n"
    "      else\n        Site.serializer.load(object)\n      end\n    end\n\n"
)


def test_a_ruby_method_documented_api_private_is_no_public_api(tmp_path: Path) -> None:
    base = {"lib/site/version_concern.rb": _CONCERN.format(doc="", method="")}
    # YARD's `@api private` on the method, or on the module around it: a helper of its size (three
    # statements, one branch), not public API. Marked as a fix ("Fix ... offenses"), it edits no more.
    for name, module_doc, method_doc in [
        ("method", "", "    # Deserializes the object column.\n    #\n    # @api private\n"),
        ("module", "  # @api private\n", ""),
    ]:
        branch = {"lib/site/version_concern.rb": _CONCERN.format(
            doc=module_doc, method=_DESERIALIZED.format(doc=method_doc))}
        found = review_change(tmp_path / name, base, branch, message="Fix Style/MultilineTernaryOperator offenses")
        assert blocking_tests_findings(found) == [], name
    # Undocumented, `@api public` inside a private module, the tag a blank line away from the
    # method, or a documented-private helper of five statements: each still blocks.
    long = _DESERIALIZED.replace("        object\n", "        record(object)\n        log(object)\n"
                                 "        object.freeze\n        object\n")
    for name, module_doc, method in [
        ("undocumented", "", _DESERIALIZED.format(doc="")),
        ("public-inside", "  # @api private\n", _DESERIALIZED.format(doc="    # @api public\n")),
        ("apart", "", _DESERIALIZED.format(doc="    # @api private\n\n")),
        ("long", "", long.format(doc="    # @api private\n")),
    ]:
        branch = {"lib/site/version_concern.rb": _CONCERN.format(doc=module_doc, method=method)}
        blocking = blocking_tests_findings(review_change(tmp_path / name, base, branch))
        assert [rule for rule, _path, _line in blocking] == ["tests/missing-tests"], name


_TOKEN_MODEL = (
    "module Site\n  class AccessToken < ActiveRecord::Base\n    def self.order_method\n      :order\n    end\n"
    "{method}  end\nend\n"
)


def test_a_ruby_delegate_that_names_its_arguments_passes_through(tmp_path: Path) -> None:
    base = {"app/models/site/access_token.rb": _TOKEN_MODEL.format(method="")}
    # One query whose arguments are named (a hash's `key: value`, `key => value`): a delegate, as
    # `where(owner.id)` is.
    for name, body in [("keywords", "where(resource_owner_id: resource_owner.id, revoked_at: nil)"),
                       ("rockets", "where(table_name => { resource_owner_id: resource_owner.id })")]:
        method = f"\n    def self.active_for(resource_owner)\n      {body}\n    end\n"
        branch = {"app/models/site/access_token.rb": _TOKEN_MODEL.format(method=method)}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [], name
    # A named argument worked out by an operator, a second call, or a ternary still blocks.
    for name, body in [("operator", "where(resource_owner_id: resource_owner.id, expires_at: now + ttl)"),
                       ("two-calls", "where(resource_owner_id: resource_owner.id).order(created_at: :desc)"),
                       ("ternary", "where(revoked_at: resource_owner.admin? ? nil : now)")]:
        method = f"\n    def self.active_for(resource_owner)\n      {body}\n    end\n"
        branch = {"app/models/site/access_token.rb": _TOKEN_MODEL.format(method=method)}
        assert blocking_tests_findings(review_change(tmp_path / name, base, branch)) == [
            ("tests/missing-tests", "app/models/site/access_token.rb", 7)
        ], name


_SERIALIZATION = (
    "module Site\n  module AttributesSerialization\n    class AbstractSerializer\n      def initialize(klass)\n"
    "        @klass = klass\n      end\n\n      private\n\n      def apply(method, attr, val)\n"
    "        @klass.type_for_attribute(attr).send(method, val)\n      end\n    end\n\n"
    "    if ::ActiveRecord::VERSION::MAJOR >= 5\n      class CastedAttributeSerializer < AbstractSerializer\n"
    "        def serialize(attr, val)\n          apply(:serialize, attr, val)\n        end\n\n"
    "        def deserialize(attr, val)\n          apply(:deserialize, attr, val)\n        end\n      end\n"
    "    else\n      class CastedAttributeSerializer < AbstractSerializer\n"
    "        def serialize(attr, val)\n          val = enums[attr][val] if enums[attr]\n"
    "          apply(:type_cast_for_database, attr, val)\n        end\n\n"
    "        def deserialize(attr, val)\n          apply(:type_cast_from_database, attr, val)\n        end\n"
    "      end\n    end\n  end\nend\n"
)


def _cast_serializer(legacy_serialize: str, name: str = "CastAttributeSerializer") -> str:
    return (
        "module Site\n  module AttributeSerializers\n    if ::ActiveRecord::VERSION::MAJOR >= 5\n"
        f"      class {name}\n        def initialize(klass)\n          @klass = klass\n        end\n\n"
        "        def serialize(attr, val)\n          @klass.type_for_attribute(attr).serialize(val)\n        end\n\n"
        "        def deserialize(attr, val)\n          @klass.type_for_attribute(attr).deserialize(val)\n        end\n"
        f"      end\n    else\n      class {name}\n        def initialize(klass)\n          @klass = klass\n"
        f"        end\n\n        def serialize(attr, val)\n{legacy_serialize}        end\n\n"
        "        def deserialize(attr, val)\n          @klass.type_for_attribute(attr).type_cast_from_database(val)\n"
        "        end\n      end\n    end\n  end\nend\n"
    )


_LEGACY_SERIALIZE = (
    "          val = enums[attr][val] if enums[attr]\n"
    "          @klass.type_for_attribute(attr).type_cast_for_database(val)\n"
)


def test_a_class_renamed_into_a_file_of_its_own_is_compared_with_where_it_came_from(tmp_path: Path) -> None:
    base = {"lib/site/attributes_serialization.rb": _SERIALIZATION}
    # Renamed and moved into a file of its own, its base class's helper written into each method:
    # every method of the removed class is there under its name (the second `serialize`, the other
    # Rails version's, paired with the second), deciding what it decided.
    moved = "lib/site/attribute_serializers/cast_attribute_serializer.rb"
    branch = {"lib/site/attributes_serialization.rb": None, moved: _cast_serializer(_LEGACY_SERIALIZE)}
    assert blocking_tests_findings(review_change(tmp_path / "renamed", base, branch)) == []
    # A method that decides more than its namesake did, or a class that holds only some of the
    # removed class's methods, still blocks.
    decided = ("          val = enums[attr][val] if enums[attr]\n          val = val.to_s if val.is_a?(Symbol)\n"
               "          val = nil if val.respond_to?(:empty?) && val.empty?\n"
               "          @klass.type_for_attribute(attr).type_cast_for_database(val)\n")
    branch = {"lib/site/attributes_serialization.rb": None, moved: _cast_serializer(decided)}
    assert _blocking_rules(review_change(tmp_path / "decided", base, branch)) == ["tests/missing-tests"]
    partial = _cast_serializer(_LEGACY_SERIALIZE).replace("def deserialize(", "def load(")
    branch = {"lib/site/attributes_serialization.rb": None, moved: partial}
    assert _blocking_rules(review_change(tmp_path / "partial", base, branch)) == ["tests/missing-tests"]
