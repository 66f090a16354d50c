"""Function shapes from tree-sitter (languages/tree_shapes.py and one family module per language):
names, counts, public, trivial and the normalised body, for every language but Python."""

from __future__ import annotations

import importlib

import pytest

from reviewgate.reviewers.builtin.languages.shapes import FunctionShape, Shapes
from reviewgate.reviewers.builtin.languages.syntax_tree import parser
from reviewgate.reviewers.builtin.languages.tree_family import Family
from reviewgate.reviewers.builtin.languages.tree_shapes import FAMILY_MODULES, shapes_of_file


def _shapes(path: str, text: str) -> Shapes:
    shapes = shapes_of_file(text, path)
    assert shapes is not None, f"{path} did not parse"
    return shapes


def _summary(shape: FunctionShape) -> tuple[int, int, int, bool, bool]:
    """(line, branches, statements, public, trivial)."""
    return shape.line, shape.branches, shape.statements, shape.public, shape.trivial


def _family(grammar: str) -> Family:
    family: Family = importlib.import_module(
        f"reviewgate.reviewers.builtin.languages.{FAMILY_MODULES[grammar]}"
    ).FAMILIES[grammar]
    return family


def test_every_node_type_a_family_names_is_one_of_its_grammars() -> None:
    # A misspelt node type matches nothing and silently drops a branch or a function.
    missing = []
    for grammar in FAMILY_MODULES:
        family = _family(grammar)
        languages = [language for item in family.grammars if (language := parser(item).language) is not None]
        named = [
            *family.functions, *family.scopes, *family.branches, *family.strings, *family.interpolations,
            *family.comments, *family.identifiers, *family.parameters, *family.annotations,
            *family.declarations,
        ]
        missing += [
            (grammar, kind) for kind in named if all(language.id_for_node_kind(kind, True) is None for language in languages)
        ]
    assert missing == []


TYPESCRIPT = """export class Cart {
  total(a: number = 2): number {
    return a ? 1 : 2;
  }
  private clear() { this.items = []; }
  #secret() { return 1; }
  abstract size(): number;
  get count() { return this._count; }
}
export const load = async (id: string) => {
  if (id && ready) { return 1; }
};
function convert(a: number): number;
function convert(a) { return `${a} units`; }
const table = { pick: (x) => { return x ?? 0; } };
items.forEach((item) => { if (item) { use(item); } });
function outer() { function inner() { while (true) {} } }
export const double = (x) => x * 2;
"""


def test_typescript_functions_methods_arrows_and_what_is_none() -> None:
    shapes = _shapes("src/cart.ts", TYPESCRIPT)
    # The abstract method and the overload signature have no body: no function. The callback
    # passed to forEach is part of the code around it.
    assert sorted(shapes) == [
        "Cart.#secret", "Cart.clear", "Cart.count", "Cart.total", "convert", "double", "load", "outer",
        "outer.inner", "pick",
    ]
    assert _summary(shapes["Cart.total"]) == (2, 1, 1, True, False)
    assert shapes["Cart.total"].defaults == (("a", "2"),)
    assert (shapes["Cart.clear"].public, shapes["Cart.#secret"].public) == (False, False)
    assert shapes["Cart.count"].trivial and not shapes["Cart.clear"].trivial
    assert _summary(shapes["load"]) == (10, 1, 2, True, False)  # `if`; `&&` is no branch
    assert shapes["pick"].branches == 0  # `??` is no branch
    assert (shapes["outer"].branches, shapes["outer.inner"].branches) == (0, 1)
    assert shapes["double"].public and not shapes["double"].trivial


def test_tsx_and_javascript_read_by_their_own_grammar() -> None:
    tsx = _shapes("ui/view.tsx", "export function View(p: Props) {\n  return p.on ? <a>{p.x}</a> : null;\n}\n")
    assert _summary(tsx["View"]) == (1, 1, 1, True, False)
    javascript = _shapes(
        "lib/a.js", "exports.run = function (a, b = 3) {\n  for (const x of a) { if (x || b) return x; }\n};\n"
    )
    assert _summary(javascript["run"]) == (1, 2, 3, True, False)  # braceless `if` body too; `||` no branch
    assert javascript["run"].defaults == (("b", "3"),)


def test_a_body_and_its_counts_ignore_layout_comments_strings_and_local_names() -> None:
    before = _shapes("a.ts", "function f(items) {\n  const total = items.length; // count\n  return total + 'x';\n}\n")
    after = _shapes("a.ts", "function f(list) {\n  /* the count */ const n = list.length;\n\n  return n + \"y\";\n}\n")
    assert before["f"].text != after["f"].text
    assert before["f"].body == after["f"].body
    assert (before["f"].branches, before["f"].statements) == (after["f"].branches, after["f"].statements) == (0, 2)
    other = _shapes("a.ts", "function f(items) {\n  const total = items.size;\n  return total + 'x';\n}\n")
    assert other["f"].body != before["f"].body
    # The code inside a template literal is code; its text is not.
    assert _shapes("a.ts", "function g(a) { return `${a.b}`; }")["g"].body != _shapes(
        "a.ts", "function g(a) { return `${a.c}`; }"
    )["g"].body


GO = """package x

func (r *Router[T]) Handle(p string) (int, error) {
	if p == "" || r == nil {
		return 0, nil
	}
	go func() { if true {} }()
	return 1, nil
}

func helper() interface{} { return nil }

func (u User) Name() string { return u.name }

func Half(v int) int {
	switch v {
	case 0:
		return v
	default:
		return v / 2
	}
}
"""


def test_go_functions_methods_by_receiver_and_exported_names() -> None:
    shapes = _shapes("router.go", GO)
    assert sorted(shapes) == ["Half", "Router.Handle", "User.Name", "helper"]
    # The `if` inside the function literal counts on Handle, whose code it is.
    assert _summary(shapes["Router.Handle"]) == (3, 2, 5, True, False)
    assert _summary(shapes["helper"]) == (11, 0, 1, False, True)
    assert shapes["User.Name"].trivial and shapes["User.Name"].public
    assert _summary(shapes["Half"]) == (15, 1, 3, True, False)  # one `case`; `default` decides nothing
    # A shell `if` in a raw string is text.
    raw = _shapes("a.go", "package a\nfunc Run() string {\n\treturn `if x; then y; fi`\n}\n")
    assert raw["Run"].branches == 0


JAVA = """public class Limits {
  public static int clamp(int v) throws IOException {
    new Thread(r) { public void run() { } };
    synchronized (this) { }
    return v > 10 ? 10 : v;
  }
  private int hidden(int a) { for (int i : list) { if (i > a && a > 0) return i; } return a; }
  public abstract int size();
  Limits() { this.max = 1; }
  public String name() { return this.name; }
  public void todo() { throw new UnsupportedOperationException("later"); }
  public void later() {
    // not yet
    throw new UnsupportedOperationException();
  }
}
interface Shape {
  double area();
  default double twice() { return area() * 2; }
}
"""


def test_java_methods_constructors_and_bodiless_declarations() -> None:
    shapes = _shapes("src/Limits.java", JAVA)
    assert sorted(shapes) == [
        "Limits.Limits", "Limits.clamp", "Limits.clamp.run", "Limits.hidden", "Limits.later", "Limits.name",
        "Limits.todo",
        "Shape.twice",
    ]
    assert _summary(shapes["Limits.clamp"]) == (2, 1, 3, True, False)  # `run` is its own
    assert _summary(shapes["Limits.hidden"]) == (7, 2, 4, False, False)
    assert shapes["Limits.name"].trivial and shapes["Limits.todo"].trivial and shapes["Limits.later"].trivial
    assert not shapes["Shape.twice"].trivial


KOTLIN = """class Account(val id: Int) {
    private fun size(x: Int = 2): Int {
        val y = x
        return if (y > 1 && x < 2) y else 0
    }
    fun label() = name
    companion object {
        fun make(): Account {
            return Account(1)
        }
    }
}
interface Named {
    fun name(): String
}
object Registry {
    fun find(key: String?): Int {
        when (key) {
            "a" -> return size
            else -> return key?.length ?: 0
        }
    }
}
"""


def test_kotlin_functions_objects_and_expression_bodies() -> None:
    shapes = _shapes("src/Account.kt", KOTLIN)
    assert sorted(shapes) == ["Account.label", "Account.make", "Account.size", "Registry.find"]
    assert _summary(shapes["Account.size"]) == (2, 1, 2, False, False)
    assert shapes["Account.size"].defaults == (("x", "2"),)
    assert shapes["Account.label"].trivial and shapes["Account.label"].public
    assert _summary(shapes["Registry.find"]) == (17, 1, 1, True, False)  # one `when` entry; `?:` is none


CSHARP = """namespace Shop {
  public class Cart : Base {
    public int Total(int a = 1) {
      var x = a;
      if (x > 1 && a < 2) { return 1; }
      foreach (var i in items) { }
      return a ?? 2;
    }
    void Hidden() { Run(); }
    public int Count => items.Count;
    public int Short() => count;
    public int Price { get { return price; } }
    public abstract void Ab();
    protected Cart() { Init(); }
  }
  interface IShape { double Area(); }
}
"""


def test_csharp_methods_expression_bodies_and_default_private_access() -> None:
    shapes = _shapes("Shop/Cart.cs", CSHARP)
    # The namespace does not qualify (a Java package does not either); accessors are not functions.
    assert sorted(shapes) == ["Cart.Cart", "Cart.Hidden", "Cart.Short", "Cart.Total"]
    assert _summary(shapes["Cart.Total"]) == (3, 2, 5, True, False)
    assert shapes["Cart.Total"].defaults == (("a", "1"),)
    assert not shapes["Cart.Hidden"].public  # no access modifier: private in C#
    assert shapes["Cart.Short"].trivial and shapes["Cart.Cart"].public


JAVA_NESTED = """public final class Constructors {
  public Object make() {
    class Local { public void go() { run(); } }
    return new Local();
  }
  public static final class Builder { public Builder add(int v) { return this; } }
  private static final class Throwing implements Maker {
    Throwing(String message) { this.message = message; }
    @Override public Object construct() { throw new IllegalStateException(message); }
    public static final class Inner { public void deeper() { run(); } }
  }
  Runnable task = new Runnable() { @Override public void run() { work(); } };
  Runnable later = () -> { new Thread() { public void run() { work(); } }.start(); };
}
"""


def test_java_a_public_method_of_a_private_local_or_anonymous_class_is_not_public() -> None:
    """A refactor that turns lambdas into a private nested class adds no API: its methods are no
    more reachable than the class (gson's ConstructorConstructor.ThrowingObjectConstructor)."""
    shapes = _shapes("src/Constructors.java", JAVA_NESTED)
    public = {name: shape.public for name, shape in shapes.items()}
    assert public == {
        "Constructors.make": True,
        "Constructors.make.Local.go": False,  # a local class
        "Constructors.Builder.add": True,  # a public nested class
        "Constructors.Throwing.Throwing": False,
        "Constructors.Throwing.construct": False,
        "Constructors.Throwing.Inner.deeper": False,  # public, inside a private class
        "Constructors.run": False,  # an anonymous class, in a field
        "Constructors.run#2": False,  # an anonymous class, in a lambda
    }


KOTLIN_NESTED = """class Outer {
    fun open(): Int {
        fun helper() = 1
        val listener = object : Listener {
            override fun heard() { count() }
        }
        return helper()
    }
    private class Hidden {
        fun inside() { work() }
    }
    class Shown {
        fun visible() { work() }
    }
    private companion object Factory {
        fun create() = Outer()
    }
}
"""


def test_kotlin_functions_of_a_private_class_or_an_object_expression_are_not_public() -> None:
    shapes = _shapes("src/Outer.kt", KOTLIN_NESTED)
    assert {name: shape.public for name, shape in shapes.items()} == {
        "Outer.open": True, "Outer.open.helper": False, "Outer.open.heard": False,
        "Outer.Hidden.inside": False, "Outer.Shown.visible": True, "Outer.create": False,
    }


CSHARP_NESTED = """namespace Shop {
  class Internal { public void Load() { Run(); } }
  public class Cart {
    class Helper { public void Assist() { Run(); } }
    public class Line { public void Add() { Run(); } }
    private class Secret { internal void Keep() { Run(); } }
  }
}
"""


def test_csharp_a_nested_type_without_an_access_modifier_is_private() -> None:
    shapes = _shapes("Shop/Cart.cs", CSHARP_NESTED)
    assert {name: shape.public for name, shape in shapes.items()} == {
        "Internal.Load": False,  # a top-level type without a modifier is internal: the assembly's own
        "Cart.Helper.Assist": False, "Cart.Line.Add": True, "Cart.Secret.Keep": False,
    }


RUST = """pub struct Stack;

impl<T> Stack<T> {
    pub fn push(&mut self, item: T) -> usize {
        if self.full() && !self.grow() {
            return 0;
        }
        match item { _ => self.len() }
    }
    fn full(&self) -> bool { self.len >= self.cap }
    pub fn len(&self) -> usize { self.len }
}

impl fmt::Display for Stack {
    fn fmt(&self, f: &mut fmt::Formatter) -> fmt::Result { write!(f, "stack") }
}

pub trait Sized { fn size(&self) -> usize; fn twice(&self) -> usize { self.size() * 2 } }

pub(crate) fn total(v: Vec<i32>) -> i32 { let c = |z| if z > 0 { z } else { 0 }; v.iter().map(c).sum() }

fn later() { unimplemented!() }

#[cfg(test)]
mod tests {
    #[test]
    fn pushes() { assert_eq!(1, 1); }
}

#[test]
fn loose_test() {}
"""


def test_rust_functions_impls_traits_and_tests_left_out() -> None:
    shapes = _shapes("src/stack.rs", RUST)
    assert sorted(shapes) == ["Sized.twice", "Stack.fmt", "Stack.full", "Stack.len", "Stack.push", "later", "total"]
    # The `if`; the match's one arm is its else (no decision); `&&` is none.
    assert _summary(shapes["Stack.push"]) == (4, 1, 3, True, False)
    assert not shapes["Stack.full"].public and shapes["Stack.len"].trivial
    # A public type's trait impl methods and a public trait's default methods are public unmarked.
    assert shapes["Stack.fmt"].public and shapes["Sized.twice"].public
    # The closure's `if` is total's, `.map(c)` one more (a loop written as a call); pub(crate) is private.
    assert _summary(shapes["total"])[1:4] == (2, 4, False)
    assert shapes["later"].trivial


RUST_PRIVATE_TYPES = """struct Hidden;

impl Hidden {
    pub fn name(&self) -> u8 { 1 }
}

impl ToTokens for Hidden {
    fn to_tokens(&self, tokens: &mut TokenStream) { tokens.append(self.name()); }
}

pub(crate) struct Crate;

impl Display for Crate {
    fn fmt(&self, f: &mut Formatter) -> Result { write!(f, "crate") }
}

trait Private { fn twice(&self) -> u8 { 2 } }

pub struct Open;

impl Open {
    pub fn size(&self) -> u8 { 3 }
    #[doc(hidden)]
    pub fn __macro_only(&self) -> u8 { 4 }
}

impl Display for Open {
    fn fmt(&self, f: &mut Formatter) -> Result { write!(f, "open") }
}

impl Display for Vec<Open> {
    fn fmt(&self, f: &mut Formatter) -> Result { write!(f, "many") }
}

mod inner {
    pub struct Kept;
    impl Kept { pub fn run(&self) {} }
    pub struct Shown;
    impl Shown { pub fn run(&self) {} }
}

pub use self::inner::Shown;
"""


def test_rust_a_method_is_as_public_as_its_type() -> None:
    shapes = _shapes("src/private.rs", RUST_PRIVATE_TYPES)
    public = sorted(name for name, shape in shapes.items() if shape.public)
    # A private or crate-private type's methods and trait impls are no public API, nor is a
    # private trait's default method, a `#[doc(hidden)]` one, or a private module's unexported type's.
    assert public == ["Open.fmt", "Open.size", "Vec.fmt", "inner.Shown.run"]


RUBY = """module Billing
  class Invoice < Base
    def total(items, rate = 1, round: true)
      sum = items.sum && rate || 0
      return 0 if sum.zero?
      case sum
      when 1 then name
      end
    rescue ArgumentError => error
      nil
    end

    def self.build(attrs)
      new(attrs)
    end

    def name
      @name
    end

    def _cache; compute; end

    private

    def helper
      compute(1) + 2
    end

    public

    def visible; run; end

    private def inline_hidden; run; end

    def later
      raise NotImplementedError
    end
    private :later

    class << self
      def registry; @registry ||= {}; end
    end
  end
end
"""


def test_ruby_methods_and_visibility_as_ruby_says() -> None:
    shapes = _shapes("lib/billing/invoice.rb", RUBY)
    assert sorted(shapes) == [
        "Billing.Invoice._cache", "Billing.Invoice.build", "Billing.Invoice.helper", "Billing.Invoice.inline_hidden",
        "Billing.Invoice.later", "Billing.Invoice.name", "Billing.Invoice.registry", "Billing.Invoice.total",
        "Billing.Invoice.visible",
    ]
    total = shapes["Billing.Invoice.total"]
    assert _summary(total) == (3, 3, 6, True, False)  # `if`, `when`, `rescue`; `&&` and `||` are none
    assert total.defaults == (("rate", "1"), ("round", "true"))
    public = {name.rsplit(".", 1)[-1] for name, shape in shapes.items() if shape.public}
    assert public == {"total", "build", "name", "visible", "registry"}
    assert shapes["Billing.Invoice.name"].trivial and shapes["Billing.Invoice.later"].trivial
    assert not shapes["Billing.Invoice.helper"].trivial
    assert shapes["Billing.Invoice.registry"].trivial  # `@registry ||= {}` memoizes a literal


PHP = """<?php
namespace App;

function top($a = 1) { return $a ?? 2; }

class Cart extends Base {
    public function total(int $a): int {
        $x = $a;
        if ($x > 1 && $a) { return 1; } elseif ($b) { return 2; }
        return $a ? 1 : 2;
    }
    private function hidden() { return $this->run(); }
    abstract protected function ab();
    public function getName() { return $this->name; }
    function plain() { return array_map(fn($i) => $i > 0 ? $i : 0, $this->items); }
}
interface Shape { public function area(); }
trait Named { function label() { switch ($this->kind) { case 1: return $this->a; default: return 'b'; } } }
"""


def test_php_functions_methods_and_private_ones() -> None:
    shapes = _shapes("src/Cart.php", PHP)
    assert sorted(shapes) == ["Cart.getName", "Cart.hidden", "Cart.plain", "Cart.total", "Named.label", "top"]
    assert _summary(shapes["Cart.total"]) == (7, 3, 5, True, False)  # `if`, `elseif`, `?:`; `&&` is none
    assert shapes["top"].defaults == (("a", "1"),)
    assert not shapes["Cart.hidden"].public and shapes["Cart.plain"].public
    assert shapes["Cart.getName"].trivial
    assert shapes["Cart.plain"].branches == 1  # the arrow function's ternary is plain's
    assert shapes["Named.label"].branches == 1
    renamed = _shapes("src/Cart.php", "<?php\nfunction top($b = 1) {\n    return $b ?? 2;\n}\n")
    assert renamed["top"].body == shapes["top"].body


@pytest.mark.parametrize(
    ("path", "text"),
    [
        ("a.ts", "function f( {"), ("a.go", "func ("), ("a.rs", "fn f( {"), ("a.rb", "def f(\n"),
        ("a.php", "<?php function f( {"), ("a.java", "class A { void f( }"), ("a.cs", "class A { void F( }"),
        ("a.kt", "fun f( {"),
    ],
)
def test_a_file_that_does_not_parse_gives_no_shapes(path: str, text: str) -> None:
    # A misread scope would rename every function in it: no evidence rather than a guess.
    assert shapes_of_file(text, path) is None


def test_no_family_for_other_files() -> None:
    assert shapes_of_file("x = 1\n", "a.py") is None
    assert shapes_of_file("int main() {}\n", "a.c") is None


@pytest.mark.parametrize(("path", "table", "decides"), [
    ("src/Kazakh.cs",
     'public class Kazakh {\n  public static string Get(string key) => key switch {\n    "Email" => "e {Name}",\n'
     '    "Length" => "l",\n    _ => null,\n  };\n}\n',
     'public class Kazakh {\n  public static string Get(string key) => key switch {\n    "Email" => Email(key),\n'
     '    "Length" => "l",\n    _ => null,\n  };\n}\n'),
    ("src/names.js",
     'export function name(k) {\n  switch (k) {\n    case "a": return "b";\n    case 1: return "one";\n'
     '    default: return null;\n  }\n}\n',
     'export function name(k) {\n  switch (k) {\n    case "a": return "b";\n    case 1: return one;\n'
     '    default: return null;\n  }\n}\n'),
    ("src/names.rs",
     'pub fn name(k: &str) -> &str {\n    match k {\n        "a" => "b",\n        "c" => "d",\n        _ => "",\n    }\n}\n',
     'pub fn name(k: &str) -> &str {\n    match k {\n        "a" => "b",\n        "c" => k.trim(),\n        _ => "",\n    }\n}\n'),
])
def test_a_switch_of_constants_is_a_lookup_table(path: str, table: str, decides: str) -> None:
    (name, shape), = _shapes(path, table).items()
    # Rows mapping a constant to a constant decide nothing: the function is a lookup, trivial.
    assert (shape.branches, shape.trivial) == (0, True), name
    (name, shape), = _shapes(path, decides).items()
    assert (shape.branches, shape.trivial) == (1, False), name  # an arm that calls or reads a name decides


def test_rust_a_matchs_last_arm_is_its_else() -> None:
    shapes = _shapes("src/pick.rs", (
        "pub fn chain(x: u8) -> u8 {\n    if x == 1 {\n        1\n    } else if x == 2 {\n        2\n    } else {\n        3\n    }\n}\n"
        "pub fn arms(x: Form) -> u8 {\n    match x {\n        Form::One => 1,\n        Form::Two => 2,\n        _ => 3,\n    }\n}\n"
        "pub fn exhaustive(x: Form) -> u8 {\n    match x {\n        Form::One => 1,\n        Form::Two => 2,\n"
        "        Form::Three(n) => n,\n    }\n}\n"
    ))
    # Three paths are two decisions, written as an if chain or as a match, with or without `_`.
    assert [shapes[name].branches for name in ("chain", "arms", "exhaustive")] == [2, 2, 2]
