#!/usr/bin/env python3
"""Prints the call circles between nicsim's C files (issue 55): file A uses a symbol B defines while B,
directly or through other files, uses one A defines. Files that call each other cannot be read, tested
or replaced one at a time; the cure is to move what both use down into a file both call.

Each C file of libnicsim (src/, qemu/) and of the provider (provider/, provider/interpose/) is compiled
on its own with gcc -c as the build compiles it; `nm` then gives what it defines and what it uses. A
use is any external reference: a call, a function put in an ops table, a global read. Static
functions never cross a file and so cannot make a circle. A name the C library or libibverbs exports
(close, write, socket, ibv_import_device...) is not a use of the interposer that defines it too: the
interposers stand in for those libraries, and every file calls them as it calls libc. The provider's C
tests (provider/tests/) are programs of one file each and are left out.

Usage: scripts/c-circles.py [-v]   (-v: also every file's uses of every other file)
Prints each circle (a strongly connected set of files) with the symbols that tie it, and exits 1
if there is one, 0 if there is none.
"""
import os
import shutil
import subprocess
import sys
import tempfile

# NICSIM_TREE: another tree to check (ProviderShapeTest checks a copy with a circle put in)
ROOT = os.environ.get("NICSIM_TREE") or os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LIB = os.path.join(ROOT, "libnicsim")
FLAGS = ["-std=gnu11", "-O2", "-Wall", "-Wextra", "-Werror", "-fPIC"]


def sources():
    """(path relative to libnicsim, extra include dirs) of every C file that goes into a library or bridge."""
    out = []
    for sub in ("src", "qemu", "provider", "provider/interpose"):
        d = os.path.join(LIB, sub)
        out += [os.path.join(sub, f) for f in sorted(os.listdir(d)) if f.endswith(".c")]
    return out


def compile_all(work):
    # the provider includes the generated protocol header as nicsim-wire.h and the kernel's udata as
    # rdma/nicsim-abi.h (ProviderBuild lays them out so); libnicsim's checked-in copy is the same text
    shutil.copy(os.path.join(LIB, "include", "nicsim", "wire.h"), os.path.join(work, "nicsim-wire.h"))
    os.makedirs(os.path.join(work, "rdma"))
    shutil.copy(os.path.join(ROOT, "kernel", "include", "uapi", "rdma", "nicsim-abi.h"),
                os.path.join(work, "rdma", "nicsim-abi.h"))
    objects = {}
    for rel in sources():
        src = os.path.join(LIB, rel)
        obj = os.path.join(work, rel.replace("/", "_") + ".o")
        cmd = ["gcc", *FLAGS, "-I", os.path.join(LIB, "include"), "-I", os.path.join(LIB, "src"),
               "-I", os.path.join(LIB, "provider"), "-I", work, "-c", src, "-o", obj]
        r = subprocess.run(cmd, capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit(f"c-circles: compiling {rel} failed:\n{r.stdout}{r.stderr}")
        objects[rel] = obj
    return objects


def symbols(obj):
    """(defined, used) external symbol names of one object file."""
    r = subprocess.run(["nm", "-P", obj], capture_output=True, text=True, check=True)
    defined, used = set(), set()
    for line in r.stdout.splitlines():
        parts = line.split()
        if len(parts) < 2:
            continue
        name, kind = parts[0], parts[1]
        if kind == "U":
            used.add(name)
        elif kind.isupper():
            defined.add(name)
    return defined, used


def system_names():
    """What libc and libibverbs export: the names the interposers define over theirs."""
    names = set()
    for lib in ("libc.so.6", "libibverbs.so.1"):
        path = subprocess.run(["gcc", "-print-file-name=" + lib], capture_output=True, text=True).stdout.strip()
        if not os.path.isabs(path):
            continue
        r = subprocess.run(["nm", "-D", "-P", "--defined-only", path], capture_output=True, text=True)
        names |= {line.split()[0].split("@")[0] for line in r.stdout.splitlines() if line.split()}
    return names


def circles(edges, nodes):
    """Tarjan's strongly connected components of more than one file, each sorted, in a stable order."""
    index, low, stack, on, out = {}, {}, [], set(), []
    counter = [0]

    def visit(v):
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
                out.append(sorted(comp))

    sys.setrecursionlimit(10000)
    for v in sorted(nodes):
        if v not in index:
            visit(v)
    return sorted(out)


def main():
    verbose = "-v" in sys.argv[1:]
    work = tempfile.mkdtemp(prefix="c-circles.")
    try:
        objects = compile_all(work)
        defs, uses = {}, {}
        for rel, obj in objects.items():
            defs[rel], uses[rel] = symbols(obj)
        owner, system = {}, system_names()
        for rel, names in defs.items():
            names = names - system
            for n in names:
                owner.setdefault(n, rel)
        # edges[a][b]: the symbols a uses that b defines
        edges = {}
        for a, names in uses.items():
            for n in names:
                b = owner.get(n)
                if b and b != a:
                    edges.setdefault(a, {}).setdefault(b, set()).add(n)
        if verbose:
            for a in sorted(edges):
                for b in sorted(edges[a]):
                    print(f"{a} -> {b}: {', '.join(sorted(edges[a][b]))}")
            print()
        found = circles(edges, objects.keys())
        for i, comp in enumerate(found, 1):
            print(f"circle {i}: {len(comp)} files: {' '.join(comp)}")
            for a in comp:
                for b in sorted(edges.get(a, {})):
                    if b in comp:
                        back = " (both ways)" if a in edges.get(b, {}) else ""
                        print(f"  {a} -> {b}{back}: {', '.join(sorted(edges[a][b]))}")
        print(f"c-circles: {len(objects)} files, {len(found)} circle(s)")
        return 1 if found else 0
    finally:
        shutil.rmtree(work)


if __name__ == "__main__":
    sys.exit(main())
