"""The builtin reviewer's lenses, one module (or package, for a lens of several parts) per lens."""
