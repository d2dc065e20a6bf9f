#!/usr/bin/env python3
"""Prints a regex (Lark syntax, no lookaround) for C++ identifiers
[A-Za-z_][A-Za-z0-9_]* other than the reserved words listed below.

Used to write the IDENT terminal of grammars/cpp.ebnf: cdiff's lexer lets a
lexeme that matches several terminals stand for any of them, so keywords must
be kept out of IDENT's language explicitly.

Construction: walk the trie of the keywords. At a trie node, an identifier
may end (unless the node spells a keyword), continue with a character that
leaves the trie (then anything may follow), or follow one of the trie edges.
"""
import sys

KEYWORDS = """
alignas alignof and and_eq asm auto bitand bitor bool break case catch char
char8_t char16_t char32_t class compl concept const consteval constexpr
constinit const_cast continue co_await co_return co_yield decltype default
delete do double dynamic_cast else enum explicit export extern false float for
friend goto if inline int long mutable namespace new noexcept not not_eq
nullptr operator or or_eq private protected public register reinterpret_cast
requires return short signed sizeof static static_assert static_cast struct
switch template this thread_local throw true try typedef typeid typename union
unsigned using virtual void volatile wchar_t while xor xor_eq
""".split()

WORD = sorted("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")
FIRST = [c for c in WORD if not c.isdigit()]


def char_class(chars):
    """A compact character class for a set of word characters."""
    chars = sorted(set(chars), key=ord)
    runs, i = [], 0
    while i < len(chars):
        j = i
        while j + 1 < len(chars) and ord(chars[j + 1]) == ord(chars[j]) + 1:
            j += 1
        a, b = chars[i], chars[j]
        runs.append(a if i == j else (a + b if j == i + 1 else a + "-" + b))
        i = j + 1
    return "[" + "".join(runs) + "]"


def trie(words):
    root = {}
    for w in words:
        node = root
        for c in w:
            node = node.setdefault(c, {})
        node[""] = True
    return root


def regex(node, first):
    alphabet = FIRST if first else WORD
    edges = sorted(c for c in node if c)
    alts = []
    others = [c for c in alphabet if c not in edges]
    alts.append(char_class(others) + "[A-Za-z0-9_]*")
    for c in edges:
        alts.append(c + regex(node[c], False))
    body = "(?:" + "|".join(alts) + ")"
    may_end = not first and "" not in node
    return body + "?" if may_end else body


if __name__ == "__main__":
    sys.stdout.write(regex(trie(KEYWORDS), True) + "\n")
