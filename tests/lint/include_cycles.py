#!/usr/bin/env python3
"""No arrow runs back up inside any folder (docs/architecture.md).

Draws the house from the project's own #include lines, as rooms and arrows,
at every level: inside each folder, its rooms are its subfolders and its
files (a .h and its .cc are one room), and an include between files in two
different rooms is an arrow from the one to the other. Rooms with no circle
among them stack into floors with every arrow pointing down; a circle (two
or more rooms that reach each other) is exactly an arrow running back up.
Every circle is printed with the includes that make it, and the exit status
is 1; 0 when there is none, 2 on bad arguments.

    tests/lint/include_cycles.py SOURCE_DIR
"""
import os
import re
import sys

ROOMS = ("common", "http", "storage", "server", "worker", "client")
INCLUDE = re.compile(r'^#include "([^"]+)"', re.M)


def unit(path):
    """The room a file is in at the deepest level: its path less .h/.cc."""
    stem, ext = os.path.splitext(path)
    return stem if ext in (".h", ".cc") else path


def sources(src):
    for top in ROOMS:
        for folder, _, files in os.walk(os.path.join(src, top)):
            for name in sorted(files):
                if name.endswith((".h", ".cc")):
                    full = os.path.join(folder, name)
                    yield os.path.relpath(full, src)


def room_in(folder, u):
    """The room of unit `u` inside `folder` ("" is the top), or None."""
    prefix = folder + "/" if folder else ""
    if not u.startswith(prefix):
        return None
    rest = u[len(prefix):].split("/")
    return prefix + rest[0]


def circles(nodes, edges):
    """The strongly connected components of more than one room (Tarjan)."""
    index, low, stack, on, found = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
        # Recursion depth is bounded by the rooms of one folder (tens).
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on.add(v)
        for w in sorted(edges.get(v, ())):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return found


def main():
    if len(sys.argv) != 2 or not os.path.isdir(os.path.join(sys.argv[1], "common")):
        print("usage: include_cycles.py SOURCE_DIR (the checkout)", file=sys.stderr)
        return 2
    src = sys.argv[1]
    files = list(sources(src))
    known = {unit(f) for f in files}
    includes = []  # (from unit, to unit, "file -> included")
    for f in files:
        with open(os.path.join(src, f), encoding="utf-8") as text:
            for target in INCLUDE.findall(text.read()):
                if unit(target) in known and unit(target) != unit(f):
                    includes.append((unit(f), unit(target), f"{f} -> {target}"))
    folders = {""} | {os.path.dirname(u) for u in known}
    for u in known:  # every ancestor folder too
        parts = u.split("/")
        folders.update("/".join(parts[:i]) for i in range(1, len(parts)))
    failed = 0
    for folder in sorted(folders):
        nodes, edges, why = set(), {}, {}
        for a, b, line in includes:
            ra, rb = room_in(folder, a), room_in(folder, b)
            if ra is None or rb is None or ra == rb:
                continue
            nodes.update((ra, rb))
            edges.setdefault(ra, set()).add(rb)
            why.setdefault((ra, rb), line)
        for comp in circles(nodes, edges):
            failed = 1
            inside = folder or "the top level"
            print(f"include_cycles: a circle inside {inside}: {', '.join(comp)}",
                  file=sys.stderr)
            for a in comp:
                for b in comp:
                    if (a, b) in why:
                        print(f"  {why[(a, b)]}", file=sys.stderr)
    if not failed:
        print(f"include_cycles: no circle among the rooms of {len(folders)} folders "
              f"({len(includes)} includes)")
    return failed


if __name__ == "__main__":
    sys.exit(main())
