#!/usr/bin/env python3
"""Fails when a class in the named folders has more than LIMIT public methods.

A class's interface is split by subject before it grows past LIMIT
(docs/architecture.md, "Rooms"). A class may stay above it when its header
says why, in a comment naming the class and its exact count:

    // Coordinator has 21 public methods: <why>

so that the check fails again when the count changes and the reason has to
be read once more.

Counted: member functions declared public (constructors, destructors and
operators are not methods of a subject; nested types are not counted).

Usage: public_methods.py ROOT [FOLDER ...]
       (default: storage server common worker client http)
"""
import os
import re
import sys

LIMIT = 15


def strip(text):
    """Comments, strings and preprocessor lines out, newlines kept."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append("\n" * text.count("\n", i, j))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c:
                j += 2 if text[j] == "\\" else 1
            out.append(c + c)
            i = j + 1
        elif c == "#" and (i == 0 or text[i - 1] == "\n"):
            j = text.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def skip_braces(text, i):
    """text[i] is '{': the index after its matching '}'."""
    depth = 0
    while i < len(text):
        if text[i] == "{":
            depth += 1
        elif text[i] == "}":
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return i


CLASS_RE = re.compile(r"\b(class|struct)\s+(\w+)\s*(final\s*)?(:[^{;]*)?\{")


def public_methods(body, name, default_public):
    """The names of the public member functions declared in a class body."""
    methods = []
    public = default_public
    i, n = 0, len(body)
    decl = ""
    while i < n:
        m = re.match(r"\s*(public|private|protected)\s*:(?!:)", body[i:])
        if m and not decl.strip():
            public = m.group(1) == "public"
            i += m.end()
            continue
        c = body[i]
        if c == "{":
            if re.search(r"\b(class|struct|enum|union)\b", decl):
                decl = ""  # a nested type: its body and name are not methods
                i = skip_braces(body, i)
                if i < n and body[i] == ";":
                    i += 1
                continue
            # an inline body or a brace initializer ends the declaration
            end = skip_braces(body, i)
            if "(" in decl:
                record(decl, name, public, methods)
                decl = ""
            else:
                decl += "{}"
            i = end
            continue
        if c == ";":
            record(decl, name, public, methods)
            decl = ""
            i += 1
            continue
        decl += c
        i += 1
    return methods


def record(decl, name, public, methods):
    d = " ".join(decl.split())
    if not public or "(" not in d:
        return
    if re.match(r"(using|friend|typedef|static_assert)\b", d):
        return
    head = d.split("(", 1)[0]
    if "=" in head:
        return  # a data member with an initializer
    words = re.findall(r"~?\w+", head)
    if not words:
        return
    fn = words[-1]
    if fn in (name, "~" + name) or "operator" in words:
        return
    if re.match(r"ABSL_|\[\[", fn):
        return
    methods.append(fn)


def classes(text):
    code = strip(text)
    for m in CLASS_RE.finditer(code):
        start = m.end() - 1
        end = skip_braces(code, start)
        yield m.group(2), m.group(1) == "struct", code[start + 1:end - 1]


def main(argv):
    root = argv[1] if len(argv) > 1 else "."
    folders = argv[2:] or [
        "storage", "server", "common", "worker", "client", "http"]
    failures = 0
    for folder in folders:
        base = os.path.join(root, folder)
        for dirpath, _, files in sorted(os.walk(base)):
            for f in sorted(files):
                if not f.endswith(".h"):
                    continue
                path = os.path.join(dirpath, f)
                text = open(path, encoding="utf-8").read()
                for name, is_struct, body in classes(text):
                    ms = public_methods(body, name, is_struct)
                    if len(ms) <= LIMIT:
                        continue
                    why = re.search(
                        r"//\s*%s has %d public methods:\s*\S" %
                        (re.escape(name), len(ms)), text)
                    rel = os.path.relpath(path, root)
                    if why:
                        print("%s: %s has %d public methods, and says why"
                              % (rel, name, len(ms)))
                        continue
                    failures += 1
                    print("%s: %s has %d public methods (limit %d): %s"
                          % (rel, name, len(ms), LIMIT, ", ".join(ms)))
    if failures:
        print("%d class(es) over the limit: split the interface by subject, "
              "or say in the header why not (see this script's docstring)"
              % failures)
        return 1
    print("no class over %d public methods in %s" % (LIMIT, ", ".join(folders)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
