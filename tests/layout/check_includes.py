#!/usr/bin/env python3
"""Guards the source layout: fails on an include cycle between modules, and on
a file outside worker/ that includes a worker/ header.

A module is a source path without its extension (policy/egress.c and
policy/egress.h are one module; X_internal.h and X_testing.h belong to X). Module A depends on module B when a file of A
has #include "B.h". A cycle is a set of modules that depend on each other,
directly or through others (a strongly connected component of two or more).
Usage: check_includes.py [SOURCE_ROOT]"""
import os
import re
import sys

FOLDERS = ("broker", "cli", "ipc", "policy", "worker")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def module_of(path):
    """X.c, X.h and the private views X_internal.h / X_testing.h are module X."""
    return re.sub(r"_(internal|testing)$", "", os.path.splitext(path)[0])


def sources(root):
    for top in FOLDERS:
        for dirpath, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith((".c", ".h")):
                    yield os.path.relpath(os.path.join(dirpath, name), root)


def resolve(target, including, known):
    """Root-relative path of an include: as written (root-relative), beside the
    including file, or the one source with that name; else as written."""
    beside = os.path.normpath(os.path.join(os.path.dirname(including), target))
    if target in known:
        return target
    if beside in known:
        return beside
    named = [p for p in known if os.path.basename(p) == os.path.basename(target)]
    return named[0] if len(named) == 1 else target


def read_graph(root):
    graph, worker_leaks = {}, []
    known = set(sources(root))
    for path in sorted(known):
        with open(os.path.join(root, path), encoding="utf-8", errors="replace") as f:
            targets = INCLUDE.findall(f.read())
        mod = module_of(path)
        deps = graph.setdefault(mod, set())
        for target in (resolve(t, path, known) for t in targets):
            if target.startswith("worker/") and not path.startswith("worker/"):
                worker_leaks.append(f"{path} includes {target}")
            if module_of(target) != mod:
                deps.add(module_of(target))
    return graph, worker_leaks


def cycles(graph):
    """Tarjan's strongly connected components, iteratively; returns the ones
    with more than one module, each sorted."""
    index, low, on_stack, stack, found = {}, {}, set(), [], []
    counter = 0
    for start in sorted(graph):
        if start in index:
            continue
        work = [(start, iter(sorted(graph.get(start, ()))))]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            advanced = False
            for child in children:
                if child not in index:
                    index[child] = low[child] = counter
                    counter += 1
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph.get(child, ())))))
                    advanced = True
                    break
                if child in on_stack:
                    low[node] = min(low[node], index[child])
            if advanced:
                continue
            work.pop()
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "VERIFETCH_SOURCE_ROOT", os.path.join(os.path.dirname(__file__), "..", ".."))
    graph, leaks = read_graph(root)
    found = cycles(graph)
    for component in found:
        print("include cycle: " + " <-> ".join(component))
    for leak in leaks:
        print("worker header outside worker/: " + leak)
    if not graph:
        print(f"no sources under {root}")
        return 1
    if found or leaks:
        return 1
    print(f"{len(graph)} modules, no include cycles, no worker/ header outside worker/")
    return 0


if __name__ == "__main__":
    sys.exit(main())
