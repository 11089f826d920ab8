"""Index expressions written as text: parsed by a small grammar, never evaluated as Python.

``ws.load("src", "x + 1", "y", "floor(z / 2)")`` gives its indices as strings. They are read by
the recursive-descent parser of this module, which knows integers, the coordinates and the
operators of affine and quasi-affine index arithmetic, and builds the sympy expression itself;
no Python (``eval``, ``sympy.parse_expr``, ``sympify``) ever sees the text, so a string such as
``"__import__('os').system('...')"`` is a syntax error, not a command.

Grammar (whitespace between tokens is ignored)::

    expression := term (("+" | "-") term)*
    term       := unary (("*" | "/" | "//" | "%") unary)*
    unary      := ("+" | "-") unary | atom ["**" unary]
    atom       := INTEGER | NAME | NAME "(" expression ("," expression)* ")" | "(" expression ")"
    INTEGER    := [0-9]+                 (ASCII digits)
    NAME       := [A-Za-z_][A-Za-z0-9_]*  (ASCII)

Meaning: ``x``, ``y``, ``z`` are the cell coordinates; ``a / c`` is exact division (allowed
inside ``floor``), ``a // c`` is ``floor(a / c)`` and ``a % c`` is ``Mod(a, c)``, each by a
non-zero integer constant ``c``; the functions are ``floor(e)`` and ``Mod(e, c)``. Any other
name is an unknown symbol, and a power, a call of another function or a division by a
non-constant is refused here with the reason; what remains is checked by
:func:`warpspeed.kernel.expressions.check_quasi_affine` (affine in x, y, z, integer coefficients
outside ``floor``, known symbols only).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import sympy

from warpspeed.errors import KernelError

#: Longest index text accepted, in characters: the indices code generators write (a coordinate,
#: a ghost-layer offset, a folding or a component index) are a few tens of characters.
MAX_INDEX_TEXT = 1000
#: Deepest nesting of parentheses, unary signs and calls (keeps the recursive parser far from
#: Python's recursion limit).
MAX_NESTING = 100
#: What the parser accepts, for error messages.
ALLOWED = ("an affine expression of x, y, z with integers, + - * and floor(e / c), e // c, Mod(e, c), e % c "
           "by integer constants, such as 'x + 4' or 'floor(x / 2) + 10 * y'")

_TOKEN = re.compile(r"\s*(?:(?P<int>[0-9]+)|(?P<name>[A-Za-z_][A-Za-z0-9_]*)|(?P<op>\*\*|//|[-+*/%(),]))")
_COORDINATES = {name: sympy.Symbol(name, integer=True) for name in ("x", "y", "z")}


class _Syntax(Exception):
    """A syntax error at a character position (turned into a KernelError by :func:`parse_index_text`)."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


@dataclass(frozen=True)
class _Token:
    kind: str  # "int", "name", "op" or "end"
    text: str
    position: int


def _tokens(text: str) -> list[_Token]:
    out, position = [], 0
    while position < len(text):
        if text[position:].strip() == "":
            break
        match = _TOKEN.match(text, position)
        if match is None:
            at = position + len(text[position:]) - len(text[position:].lstrip())
            raise _Syntax(f"character {text[at]!r} at position {at} is not allowed")
        kind = match.lastgroup or "op"
        out.append(_Token(kind, match.group(kind), match.start(kind)))
        position = match.end()
    out.append(_Token("end", "", len(text)))
    return out


class _Parser:
    """Recursive descent over the tokens; builds sympy expressions from integers and symbols only."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.tokens = _tokens(text)
        self.index = 0
        self.depth = 0

    def peek(self) -> _Token:
        return self.tokens[self.index]

    def take(self, op: str | None = None) -> _Token:
        token = self.tokens[self.index]
        if op is not None and token.text != op:
            raise _Syntax(f"expected {op!r} at position {token.position}, found {token.text or 'the end'!r}")
        self.index += 1
        return token

    def parse(self) -> sympy.Expr:
        result = self.expression()
        token = self.peek()
        if token.kind != "end":
            raise _Syntax(f"unexpected {token.text!r} at position {token.position}")
        return result

    def expression(self) -> sympy.Expr:
        result = self.term()
        while self.peek().text in ("+", "-"):
            op = self.take().text
            right = self.term()
            result = result + right if op == "+" else result - right
        return result

    def term(self) -> sympy.Expr:
        result = self.unary()
        while self.peek().text in ("*", "/", "//", "%"):
            op = self.take().text
            right = self.unary()
            if op == "*":
                result = result * right
            else:
                divisor = _constant_divisor(right, op)
                if op == "/":
                    result = result / divisor
                elif op == "//":
                    result = sympy.floor(result / divisor)
                else:
                    result = sympy.Mod(result, divisor)
        return result

    def unary(self) -> sympy.Expr:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise _Syntax(f"nested deeper than {MAX_NESTING} levels")
        try:
            if self.peek().text in ("+", "-"):
                op = self.take().text
                value = self.unary()
                return -value if op == "-" else value
            base = self.atom()
            if self.peek().text == "**":
                raise KernelError(f"the power in {self.text!r} is not affine; powers are not allowed")
            return base
        finally:
            self.depth -= 1

    def atom(self) -> sympy.Expr:
        token = self.take()
        if token.kind == "int":
            return sympy.Integer(int(token.text))
        if token.text == "(":
            inner = self.expression()
            self.take(")")
            return inner
        if token.kind == "name":
            if self.peek().text == "(":
                return self.call(token.text)
            if token.text in _COORDINATES:
                return _COORDINATES[token.text]
            return sympy.Symbol(token.text)
        raise _Syntax(f"unexpected {token.text or 'end'!r} at position {token.position}")

    def call(self, name: str) -> sympy.Expr:
        self.take("(")
        args = [self.expression()]
        while self.peek().text == ",":
            self.take(",")
            args.append(self.expression())
        self.take(")")
        if name == "floor" and len(args) == 1:
            return sympy.floor(args[0])
        if name == "Mod" and len(args) == 2:
            return sympy.Mod(args[0], _constant_divisor(args[1], "Mod"))
        if name in ("floor", "Mod"):
            raise _Syntax(f"{name} takes {'one argument' if name == 'floor' else 'two arguments'}, got {len(args)}")
        raise KernelError(
            f"the call {name}(...) in {self.text!r} is not affine: only floor(e) and Mod(e, c) may be called "
            "(an index that depends on loaded data, an indirect access, is outside the model)")


def _constant_divisor(value: sympy.Expr, op: str) -> sympy.Integer:
    if not (value.is_Integer and value != 0):
        raise KernelError(f"{op} by {value} is not affine; divide only by a non-zero integer constant")
    return value  # type: ignore[return-value]


def parse_index_text(text: str, what: str) -> sympy.Expr:
    """The sympy expression of the index ``text`` (module docstring), or a KernelError naming
    ``what`` (e.g. ``"load of 'src'"``), the text and what is allowed."""
    shown = repr(text) if len(text) <= 80 else repr(text[:80]) + "..."
    if len(text) > MAX_INDEX_TEXT:
        raise KernelError(f"{what}: index text too long (got {len(text)} characters, {shown}); at most "
                          f"{MAX_INDEX_TEXT} are allowed")
    try:
        return _Parser(text).parse()
    except _Syntax as exc:
        raise KernelError(f"{what}: cannot parse {shown} as an index expression ({exc.reason}); "
                          f"write {ALLOWED}") from None
    except KernelError as exc:
        raise KernelError(f"{what}: {exc}") from None
