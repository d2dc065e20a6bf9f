#!/usr/bin/env python3
"""Rebuild datasets/cpp-train/functions.jsonl: single C++ function
definitions (and small structs) cut out of permissively licensed C++ in
Debian packages, in the shape of HumanEval-X programs (`#include<...>`
lines, `using namespace std;`, one function), kept only when
`grammars/cpp.ebnf` accepts them (checked by cdiff itself).

The .deb files (Debian 12 "bookworm") are fetched with

    mkdir -p /tmp/cppdebs && cd /tmp/cppdebs
    apt-get download libboost1.74-doc=1.74.0+ds1-21 googletest=1.12.1-0.2 \\
        catch2=2.13.10-1 nlohmann-json3-dev=3.11.2-2 libspdlog-dev=1:1.10.0+ds-0.4 \\
        libfmt-dev=9.1.0+ds1-2 libabsl-dev=20220623.1-1+deb12u2 \\
        libpoco-dev=1.11.0-3+deb12u1 libtbb-doc=2021.8.0-2+deb12u1

and the corpus is rebuilt, deterministically, with

    cargo build --release && cp target/release/cdiff /tmp/cdiff-bin
    python3 eval/make_cpp_corpus.py --debs /tmp/cppdebs --cdiff /tmp/cdiff-bin

What it does, per source file (sorted by package and path):

1. licence: a file of a package with mixed licences is used only if it
   names the licence recorded for it (Boost, Poco: the Boost Software
   License; Abseil, oneTBB: Apache 2.0, without oneTBB's bzip2 example);
   the other packages are under one permissive licence each (see
   datasets/cpp-train/README.md);
2. comments are removed (lines that held only a comment disappear);
   preprocessor lines are noted (a function containing one is dropped) and
   the file's standard `#include <...>` headers are collected;
3. every brace pair whose head looks like a function head (ends in `)`,
   maybe followed by `const`/`noexcept`/`override`, not a control
   statement, no `template`) is a function candidate; a `struct`/`class`
   followed by `;` is a struct candidate;
4. the candidate is dedented, tabs become 4 spaces, trailing blanks and
   runs of blank lines are removed, `std::` is dropped, and it is preceded by
   the file's standard headers as `#include<h>` lines (as many as fit) and by
   `using namespace std;`;
5. functions of fewer than two statements (`;` in the body: getters,
   forwarders), texts longer than --max-bytes (default 511 = context 512 minus EOS), non-
   ASCII texts, exact duplicates and anything whose function also occurs in
   HumanEval-X (datasets/humaneval-x-cpp, the test set) are dropped;
6. `cdiff check --grammar grammars/cpp.ebnf --jsonl` decides; only texts that
   are completable without holes and accepted by the recognizer are kept.
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# package -> (subtrees, licence, a file is used only if it matches `need`
# and does not match `avoid` (None: no condition))
PACKAGES = [
    ("libboost1.74-doc", ["usr/share/doc/libboost1.74-doc/examples"], "BSL-1.0",
     r"Boost Software License|LICENSE_1_0\.txt", None),
    ("googletest", ["usr/src/googletest"], "BSD-3-Clause", None, None),
    ("catch2", ["usr/include"], "BSL-1.0", None, None),
    ("nlohmann-json3-dev", ["usr/share/doc/nlohmann-json3-dev/examples", "usr/include"], "MIT",
     None, None),
    ("libspdlog-dev", ["usr/include"], "MIT", None, None),
    ("libfmt-dev", ["usr/include"], "MIT", None, None),
    ("libabsl-dev", ["usr/include"], "Apache-2.0", r"Apache License", None),
    ("libpoco-dev", ["usr/include"], "BSL-1.0", r"SPDX-License-Identifier:\s*BSL-1\.0", None),
    ("libtbb-doc", ["usr/share/doc/libtbb-dev/examples"], "Apache-2.0", r"Apache License",
     r"bzip2|GPL"),
]
EXTS = (".cpp", ".cc", ".cxx", ".hpp", ".h", ".ipp", ".hxx", ".inl")

STD_HEADERS = set(
    """algorithm any array atomic bitset cassert cctype cerrno cfloat chrono climits cmath
    complex condition_variable cstddef cstdint cstdio cstdlib cstring ctime deque exception
    fstream functional future initializer_list iomanip ios iosfwd iostream istream iterator
    limits list locale map memory mutex new numeric optional ostream queue random ratio regex
    set sstream stack stdexcept streambuf string string_view system_error thread tuple
    type_traits typeinfo unordered_map unordered_set utility valarray variant vector
    assert.h ctype.h limits.h math.h stdio.h stdlib.h string.h time.h stdint.h""".split()
)

CONTROL = {
    "if", "for", "while", "switch", "catch", "else", "do", "try", "return",
    "namespace", "enum", "union", "extern", "sizeof", "decltype", "case",
    "default", "template", "typename", "operator", "new", "delete", "throw",
}


def strip_comments(src):
    """Comments removed, strings and char literals kept; a line that only
    held a comment is removed. Returns None for raw string literals."""
    out = []
    i, n = 0, len(src)
    commented_lines = set()
    line = 0
    while i < n:
        c = src[i]
        if c == "/" and i + 1 < n and src[i + 1] == "/":
            j = src.find("\n", i)
            j = n if j < 0 else j
            commented_lines.add(line)
            i = j
            continue
        if c == "/" and i + 1 < n and src[i + 1] == "*":
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            body = src[i:j]
            commented_lines.add(line)
            k = body.count("\n")
            for t in range(k):
                line += 1
                commented_lines.add(line)
                out.append("\n")
            if k == 0:
                out.append(" ")
            i = j
            continue
        if c == "R" and i + 1 < n and src[i + 1] == '"':
            return None
        if c in "\"'":
            # a char literal or string, up to the unescaped closing quote
            j = i + 1
            while j < n and src[j] != c and src[j] != "\n":
                j += 2 if src[j] == "\\" else 1
            j = min(j + 1, n)
            # a digit separator 1'000 is rare; treat `'` after a digit as such
            if c == "'" and i > 0 and src[i - 1].isalnum() and src[i - 1] not in "uULR":
                out.append(c)
                i += 1
                continue
            out.append(src[i:j])
            line += src[i:j].count("\n")
            i = j
            continue
        if c == "\n":
            line += 1
        out.append(c)
        i += 1
    text = "".join(out)
    lines = text.split("\n")
    kept = [l for k, l in enumerate(lines) if not (k in commented_lines and not l.strip())]
    return "\n".join(kept)


PP = "\x01"  # stands for a preprocessor line


def preprocess(text):
    """(text with each preprocessor line replaced by PP, the standard headers
    included, in file order)."""
    out, headers = [], []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        l = lines[i]
        if l.lstrip().startswith("#"):
            full = l
            while full.endswith("\\") and i + 1 < len(lines):
                i += 1
                full = full[:-1] + lines[i]
            m = re.match(r"\s*#\s*include\s*<([^<>]+)>", full)
            if m and m.group(1).strip() in STD_HEADERS and m.group(1).strip() not in headers:
                headers.append(m.group(1).strip())
            out.append(PP)
        else:
            out.append(l)
        i += 1
    return "\n".join(out), headers


def skip_literal(text, i):
    """Index after the string or char literal starting at text[i]."""
    q = text[i]
    j = i + 1
    while j < len(text) and text[j] != q and text[j] != "\n":
        j += 2 if text[j] == "\\" else 1
    return j + 1


def brace_pairs(text):
    """(open, close) of every balanced brace pair, literals skipped; None if
    the braces do not balance."""
    stack, pairs = [], []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c in "\"'" and not (c == "'" and i > 0 and text[i - 1].isalnum()):
            i = skip_literal(text, i)
            continue
        if c == "{":
            stack.append(i)
        elif c == "}":
            if not stack:
                return None
            pairs.append((stack.pop(), i))
        i += 1
    return pairs if not stack else None


def head_start(text, open_idx):
    """Start of the head before the brace at open_idx: after the previous
    `;`, `{`, `}` or preprocessor line outside parentheses."""
    depth = 0
    i = open_idx - 1
    while i >= 0:
        c = text[i]
        if c in ")]":
            depth += 1
        elif c in "([":
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and c in ";{}" + PP:
            return i + 1
        i -= 1
    return 0


ACCESS = re.compile(r"^\s*(?:(?:public|private|protected)\s*:(?!:)\s*)+")
FN_TAIL = re.compile(r"\)\s*(?:const\s*)?(?:noexcept\s*)?(?:override\s*)?$")


def classify(head):
    """'fn', 'struct' or None, and the head without access labels."""
    head = ACCESS.sub("", head)
    h = head.strip()
    if not h or "template" in h or "operator" in h or PP in h:
        return None, head
    words = re.findall(r"[A-Za-z_]\w*", h)
    if not words or words[0] in CONTROL:
        return None, head
    if words[0] in ("struct", "class"):
        return "struct", head
    if not FN_TAIL.search(h) or "(" not in h:
        return None, head
    # `=` outside parentheses: a lambda or an initializer, not a function
    depth = 0
    for c in h:
        if c == "(":
            depth += 1
        elif c == ")":
            depth -= 1
        elif c == "=" and depth == 0:
            return None, head
    # a constructor's member initializers `) : a(b)`: not in the grammar's
    # function_def
    return "fn", head


def normalize(code):
    """Dedented, tabs as 4 spaces, trailing blanks removed, runs of blank
    lines collapsed, `std::` dropped."""
    code = code.replace("\t", "    ")
    lines = [l.rstrip() for l in code.split("\n")]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    indent = lambda l: len(l) - len(l.lstrip())
    # the first line may start mid-line (after a `;` or `}` there), with no
    # indent of its own: then the other lines give the function's indent
    rest = [indent(l) for l in lines[1:] if l]
    if lines and rest and indent(lines[0]) == 0:
        cut = min(rest)
    else:
        cut = min([indent(l) for l in lines if l], default=0)
    out, blank = [], False
    for l in lines:
        if not l:
            if not blank:
                out.append("")
            blank = True
            continue
        blank = False
        out.append(l[min(indent(l), cut):])
    code = "\n".join(out)
    code = strip_std(code)
    return code


def strip_std(code):
    """`std::` removed outside literals."""
    out, i, n = [], 0, len(code)
    while i < n:
        c = code[i]
        if c in "\"'" and not (c == "'" and i > 0 and code[i - 1].isalnum()):
            j = skip_literal(code, i)
            out.append(code[i:j])
            i = j
            continue
        if code.startswith("std::", i) and (i == 0 or not (code[i - 1].isalnum() or code[i - 1] in "_:")):
            i += 5
            continue
        out.append(c)
        i += 1
    return "".join(out)


def squash(s):
    return re.sub(r"\s+", "", s)


def candidates(src):
    """(kind, normalized code, headers) of each candidate in a source file."""
    text = strip_comments(src)
    if text is None:
        return []
    text, headers = preprocess(text)
    pairs = brace_pairs(text)
    if pairs is None:
        return []
    out = []
    for o, c in sorted(pairs):
        s = head_start(text, o)
        if s is None:
            continue
        kind, head = classify(text[s:o])
        if kind is None:
            continue
        end = c + 1
        if kind == "struct":
            rest = text[end:end + 40].lstrip()
            if not rest.startswith(";"):
                continue
            end = end + (len(text[end:]) - len(text[end:].lstrip())) + 1
        body = text[o:end]
        if PP in body:
            continue
        # the head as written, from the start of its line's code
        head_text = head.lstrip("\n")
        code = normalize(head_text + body)
        if len(code) > 4000:
            continue
        out.append((kind, code, headers))
    return out


def humaneval_functions():
    """Whitespace-free function texts of HumanEval-X (the test set)."""
    path = os.path.join(ROOT, "datasets", "humaneval-x-cpp", "humaneval_cpp.jsonl")
    fns = set()
    with open(path) as f:
        for line in f:
            r = json.loads(line)
            for prog in (r["prompt"] + r["canonical_solution"],
                         r["declaration"] + r["canonical_solution"],
                         r["declaration"] + r["canonical_solution"] + r["test"]):
                for kind, code, _ in candidates(prog):
                    fns.add(squash(code))
    return fns


MIN_STATEMENTS = 2  # one-statement getters and forwarders are most of the headers


def statements(code):
    """The `;` after the first `{`: a rough statement count."""
    return code[code.find("{"):].count(";")


MAX_HEADERS = 6  # HumanEval-X programs include 3-7 headers


def compose(code, headers, max_bytes):
    """The training text: standard headers (as many as fit), `using
    namespace std;` and the code. None if the code alone does not fit."""
    tail = "using namespace std;\n" + code + "\n"
    if len(tail) > max_bytes:
        return None
    pre = ""
    for h in headers[:MAX_HEADERS]:
        line = "#include<%s>\n" % h
        if len(pre) + len(line) + len(tail) > max_bytes:
            break
        pre += line
    return pre + tail


def copyright_file(pkg_dir):
    """The Debian copyright file of an extracted package."""
    doc = os.path.join(pkg_dir, "usr", "share", "doc")
    for name in sorted(os.listdir(doc)):
        f = os.path.join(doc, name, "copyright")
        if os.path.isfile(f) and not os.path.islink(f):
            return f
    raise SystemExit("no copyright file under %s" % doc)


def write_licence(pkg, pkg_dir, out_dir, deb):
    """datasets/cpp-train/LICENSE.<pkg>: the package's Debian copyright file;
    for Boost (2 MB, one entry per file) its header and the Boost Software
    License text only, as only files under that licence are used."""
    with open(copyright_file(pkg_dir), encoding="utf-8") as f:
        text = f.read()
    if pkg == "libboost1.74-doc":
        paras = text.split("\n\n")
        bsl = [p for p in paras if p.startswith("License: BSL-1.0\n")]
        text = ("\n".join(paras[0].split("\n")[:3]) + "\n\n"
                "Only the example files that name the Boost Software License\n"
                "(LICENSE_1_0.txt) were used.\n\n" + bsl[-1].rstrip("\n") + "\n")
    head = "From %s, /usr/share/doc/*/copyright (Debian 12).\n\n" % deb
    with open(os.path.join(out_dir, "LICENSE." + pkg), "w", encoding="utf-8") as f:
        f.write(head + text)


def extract_debs(debs, dest):
    for pkg, *_ in PACKAGES:
        names = sorted(f for f in os.listdir(debs) if f.startswith(pkg + "_") and f.endswith(".deb"))
        if not names:
            sys.exit("missing %s_*.deb in %s (see the apt-get download line in this script)" % (pkg, debs))
        d = os.path.join(dest, pkg)
        os.makedirs(d, exist_ok=True)
        subprocess.run(["dpkg-deb", "-x", os.path.join(debs, names[-1]), d], check=True)
        yield pkg, d, names[-1]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--debs", default="/tmp/cppdebs")
    ap.add_argument("--cdiff", default="/tmp/cdiff-bin")
    ap.add_argument("--max-bytes", type=int, default=511)
    ap.add_argument("--out", default=os.path.join(ROOT, "datasets", "cpp-train", "functions.jsonl"))
    ap.add_argument("--rejected", default=None, help="also write the rejected texts here")
    args = ap.parse_args()

    held_out = humaneval_functions()
    seen = set()
    cases = []
    stats = {}
    with tempfile.TemporaryDirectory() as tmp:
        out_dir = os.path.dirname(args.out)
        os.makedirs(out_dir, exist_ok=True)
        for pkg, d, deb in extract_debs(args.debs, tmp):
            write_licence(pkg, d, out_dir, deb)
            roots, need, avoid = next((r, nd, av) for p, r, _, nd, av in PACKAGES if p == pkg)
            st = stats.setdefault(pkg, {"deb": deb, "files": 0, "candidates": 0, "trivial": 0, "too_long": 0,
                                        "duplicates": 0, "humaneval": 0, "checked": 0, "accepted": 0,
                                        "bytes": 0})
            for root in roots:
                base = os.path.join(d, root)
                files = []
                for dp, dns, fns in os.walk(base):
                    dns.sort()
                    for fn in sorted(fns):
                        if fn.endswith(EXTS):
                            files.append(os.path.join(dp, fn))
                for path in sorted(files):
                    if os.path.islink(path):
                        continue
                    with open(path, "rb") as f:
                        raw = f.read()
                    try:
                        src = raw.decode("utf-8")
                    except UnicodeDecodeError:
                        continue
                    if need and not re.search(need, src):
                        continue
                    if avoid and re.search(avoid, src):
                        continue
                    st["files"] += 1
                    rel = os.path.relpath(path, d)
                    for kind, code, headers in candidates(src):
                        st["candidates"] += 1
                        if not code.isascii():
                            continue
                        if statements(code) < MIN_STATEMENTS:
                            st["trivial"] += 1
                            continue
                        text = compose(code, headers, args.max_bytes)
                        if text is None:
                            st["too_long"] += 1
                            continue
                        key = squash(code)
                        if key in held_out:
                            st["humaneval"] += 1
                            continue
                        if key in seen:
                            st["duplicates"] += 1
                            continue
                        seen.add(key)
                        st["checked"] += 1
                        cases.append({"partial": [text], "source": pkg + ":" + rel, "kind": kind})

    # one cdiff run over all cases
    with tempfile.NamedTemporaryFile("w", suffix=".jsonl", delete=False) as f:
        for c in cases:
            f.write(json.dumps(c) + "\n")
        cases_path = f.name
    res = subprocess.run(
        [args.cdiff, "check", "--grammar", os.path.join(ROOT, "grammars", "cpp.ebnf"),
         "--jsonl", cases_path],
        check=True, capture_output=True, text=True)
    os.unlink(cases_path)
    results = [json.loads(l) for l in res.stdout.splitlines() if l.strip()]
    assert len(results) == len(cases), (len(results), len(cases))

    apache = "/usr/share/common-licenses/Apache-2.0"
    with open(apache) as f, open(os.path.join(out_dir, "LICENSE.Apache-2.0"), "w") as g:
        g.write(f.read())
    kinds = {}
    rejected = []
    with open(args.out, "w") as out:
        for c, r in zip(cases, results):
            text = c["partial"][0]
            ok = r.get("completable") is True and r.get("recognizer") is True
            pkg = c["source"].split(":", 1)[0]
            if not ok:
                rejected.append({"text": text, "source": c["source"]})
                continue
            stats[pkg]["accepted"] += 1
            stats[pkg]["bytes"] += len(text)
            kinds[c["kind"]] = kinds.get(c["kind"], 0) + 1
            out.write(json.dumps({"text": text, "source": c["source"]}) + "\n")
    if args.rejected:
        with open(args.rejected, "w") as f:
            for r in rejected:
                f.write(json.dumps(r) + "\n")

    tot = {k: sum(s[k] for s in stats.values()) for k in
           ("files", "candidates", "trivial", "too_long", "duplicates", "humaneval", "checked", "accepted", "bytes")}
    for pkg, s in stats.items():
        print("%-20s %s" % (pkg, json.dumps(s)), file=sys.stderr)
    print("total %s kinds %s" % (json.dumps(tot), json.dumps(kinds)), file=sys.stderr)
    if tot["checked"]:
        print("acceptance %.1f %%" % (100.0 * tot["accepted"] / tot["checked"]), file=sys.stderr)


if __name__ == "__main__":
    main()
