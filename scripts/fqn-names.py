#!/usr/bin/env python3
"""Lists the fully qualified class names written in Java code (issue 55 point 4): `java.util.List<...>`
or `nicsim.x.Y` inline, where an import and the simple name read better. Comments, string and char
literals, and the import and package lines are skipped. A name is qualified when it starts at a package
root (java, javax, jdk, nicsim, org, com, ...) and ends in a segment that starts with a capital letter.

Usage: scripts/fqn-names.py [--fix] [DIR...]   (default: the repository's Java sources)
Prints file:line: name for each, then a count; exits 1 if there is one.
--fix writes the simple name in place of each and adds its import at its sorted place among the file's
imports (none for java.lang or the file's own package), and leaves a name qualified where the simple one
could mean another class there: a type of that name declared in the file, imported, in the file's
package, in java.lang, or possibly behind a wildcard import. It prints what it left. Check the result by
comparing `javap -c` of the classes before and after: it must be unchanged.
"""
import os
import re
import sys

ROOTS = ("java", "javax", "jdk", "sun", "nicsim", "org", "com", "picocli", "spinal", "scala", "me", "io")
NAME = re.compile(r"(?<![\w.$])((?:%s)(?:\.[a-z_][\w]*)*\.[A-Z][\w]*)" % "|".join(ROOTS))


def code_only(text):
    """text with comments and string/char literals blanked to spaces (newlines kept, so lines stay put)."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith('"""', i):
            j = text.find('"""', i + 3)
            j = n if j < 0 else j + 3
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(" " * (j - i))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def java_files(dirs):
    for d in dirs:
        for root, subdirs, files in os.walk(d):
            subdirs[:] = [s for s in subdirs if s not in ("out", ".git", "node_modules")]
            for f in sorted(files):
                if f.endswith(".java"):
                    yield os.path.join(root, f)


def packages_of(files):
    """package name -> the top-level type names its files declare (one per file, by file name)."""
    out = {}
    for path in files:
        with open(path, encoding="utf-8") as f:
            m = re.search(r"^\s*package\s+([\w.]+)\s*;", code_only(f.read()), re.M)
        out.setdefault(m.group(1) if m else "", set()).add(os.path.basename(path)[:-5])
    return out


def java_lang():
    """The public top-level names of java.lang, from the JDK's java.base module."""
    import subprocess
    home = os.path.dirname(os.path.dirname(os.path.realpath(subprocess.run(
        ["sh", "-c", "command -v java"], capture_output=True, text=True).stdout.strip())))
    r = subprocess.run(["jimage", "list", os.path.join(home, "lib", "modules")], capture_output=True, text=True)
    names = set(re.findall(r"^\s*java/lang/([A-Z]\w*)\.class$", r.stdout, re.M))
    if not names:
        sys.exit("fqn-names: cannot list java.lang's classes (jimage)")
    return names


def fix(path, pkgs, lang):
    """Rewrites one file; returns the names it left qualified, with why."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    code = code_only(text)
    own = re.search(r"^\s*package\s+([\w.]+)\s*;", code, re.M)
    own = own.group(1) if own else ""
    imports = dict((m.group(1).rsplit(".", 1)[1], m.group(1))
                   for m in re.finditer(r"^\s*import\s+([\w.]+\.[A-Z]\w*)\s*;", code, re.M))
    wildcard = re.search(r"^\s*import\s+[\w.]+\.\*\s*;", code, re.M) is not None
    declared = re.findall(r"\b(?:class|interface|enum|record)\s+([A-Z]\w*)", code)
    top = os.path.basename(path)[:-5]
    hits = []
    for no, line in enumerate(code.split("\n")):
        if re.match(r"\s*(import|package)\s", line):
            continue
        hits.append(no)
    starts = [0]
    for line in text.split("\n"):
        starts.append(starts[-1] + len(line) + 1)
    spans, left, added = [], [], set()
    lines = code.split("\n")
    for no in hits:
        for m in NAME.finditer(lines[no]):
            full = m.group(1)
            pkg, simple = full.rsplit(".", 1)
            if simple in declared and not (pkg == own and simple == top and declared.count(simple) == 1):
                left.append((full, "a type of that name is declared in the file"))
                continue
            if imports.get(simple, full) != full:
                left.append((full, "imports " + imports[simple]))
                continue
            if pkg != own and simple in pkgs.get(own, ()):
                left.append((full, "the file's package has a " + simple))
                continue
            if pkg not in ("java.lang", own) and simple in lang:
                left.append((full, "java.lang has a " + simple))
                continue
            if pkg not in ("java.lang", own) and full not in imports.values() and wildcard and re.search(
                    r"(?<![\w.])" + simple + r"\b", NAME.sub("", code)):
                left.append((full, "a wildcard import may give " + simple))
                continue
            spans.append((starts[no] + m.start(1), starts[no] + m.end(1), simple))
            if pkg not in ("java.lang", own) and full not in imports.values():
                added.add(full)
    for a, b, simple in sorted(spans, reverse=True):
        text = text[:a] + simple + text[b:]
    if added:
        text = add_imports(text, sorted(added))
    if spans:
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
    return left


def add_imports(text, names):
    lines = text.split("\n")
    for name in names:
        at = [i for i, l in enumerate(lines) if re.match(r"import\s+(?!static)[\w.]+(\.\*)?\s*;", l)]
        new = "import %s;" % name
        if at:
            pos = next((i for i in at if lines[i] > new), at[-1] + 1)
            lines.insert(pos, new)
            continue
        statics = [i for i, l in enumerate(lines) if re.match(r"import\s+static\s", l)]
        pkg = next(i for i, l in enumerate(lines) if re.match(r"package\s", l))
        after = statics[-1] if statics else pkg
        lines[after + 1:after + 1] = ["", new]
        if lines[after + 3] != "":
            lines.insert(after + 3, "")
    return "\n".join(lines)


def main():
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    args = sys.argv[1:]
    fixing = "--fix" in args
    dirs = [a for a in args if a != "--fix"] or [root]
    if fixing:
        pkgs, lang, left = packages_of(java_files([root])), java_lang(), 0
        for path in sorted(java_files(dirs)):
            for full, why in fix(path, pkgs, lang):
                left += 1
                print(f"left {os.path.relpath(path, root)}: {full}: {why}")
        print(f"fqn-names --fix: {left} left qualified")
    count = 0
    for path in sorted(java_files(dirs)):
        with open(path, encoding="utf-8") as f:
            lines = code_only(f.read()).split("\n")
        for no, line in enumerate(lines, 1):
            if re.match(r"\s*(import|package)\s", line):
                continue
            for m in NAME.finditer(line):
                count += 1
                print(f"{os.path.relpath(path, root)}:{no}: {m.group(1)}")
    print(f"fqn-names: {count}")
    return 1 if count else 0


if __name__ == "__main__":
    sys.exit(main())
