#!/usr/bin/env python3
"""Every citation of a Markdown document in the tree points at something that
exists in the repository (docs/style.md, "7. Tests"): the document itself, the
quoted section heading after it, "docs/design.md invariant N" and
"docs/consensus.md trap N". A clone of the repository must be able to read
every reason the code gives. Fails naming file and line of each broken one.

Usage: citations_test.py [ROOT]   checks the tree (RW_SOURCE_ROOT or ../..)
       citations_test.py --self-test   proves on a small fixture tree that
                                       each kind of broken citation is caught
"""

import os
import re
import sys
import tempfile

# What is scanned, relative to the root of the repository.
SCANNED = ["src", "tests", "docs", "bench", "scripts", "cmake", ".ci", "etc", "packaging", "deploy",
           "README.md", "CMakeLists.txt"]
# Fuzz corpora are bytes, not prose.
SKIPPED_DIRS = {"tests/corpus", ".git", "build"}
# Names that look like a document but stand for a file the user names: the
# usage text of scripts/bench-report writes `--markdown OUT.md`.
NOT_CITATIONS = {"OUT.md"}

# A path to a Markdown file: docs/limits.md, ../x.md, README.md. The name
# must not be followed by a word character (hashlib.md5 is not a citation).
CITATION = re.compile(r"(?<![\w/.-])((?:\.{1,2}/|[\w.-]+/)*[\w.-]+\.md)(?![\w-])")
# A quoted heading right after the citation: docs/x.md "H", docs/x.md, "H",
# docs/x.md ("H"), and the same with \" inside a string literal.
SECTION = re.compile(r'\A(?:,\s+|\s+\(?|\s*\()\\?"([^"\\\n]+)\\?"')
# docs/style.md §5: a numbered section.
NUMBERED = re.compile(r"\A,?\s+§\s?(\d+)")
# docs/design.md invariant 1, invariants 1 and 6, invariants 1-3.
# docs/consensus.md trap 8, traps 1, 9-12, traps 3-6.
NUMBERS = r"(\d+(?:\s*(?:,|-|–|and|or)\s*\d+)*)"
INVARIANT = re.compile(r"\A,?\s+invariants?\s+" + NUMBERS)
TRAP = re.compile(r"\A,?\s+traps?\s+" + NUMBERS)
# A Markdown link's anchor: [x](wire_formats.md#record-key).
ANCHOR = re.compile(r"\A#([\w-]+)")
# Comment leaders stripped from the next line, so a citation wrapped in a
# comment still sees its section: `docs/x.md,` then `// "Heading"`.
LEADER = re.compile(r"\A\s*(?://+|#+|\*|--|;)?\s*")


def headings(path):
    """The headings of a Markdown file, outside fenced code blocks."""
    found = []
    fenced = False
    with open(path, encoding="utf-8") as f:
        for line in f:
            if line.startswith("```"):
                fenced = not fenced
                continue
            m = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", line)
            if m and not fenced:
                found.append(m.group(1))
    return found


def normalise(text):
    return re.sub(r"\s+", " ", text.replace("`", "").strip().rstrip(".:")).lower()


def names_of(heading):
    """The ways a heading may be cited: whole, without a trailing
    parenthesis ("Log entry" for "Log entry (version 1)") and without what
    follows a colon ("Where users come from" for "Where users come from:
    `users_stores`")."""
    whole = normalise(heading)
    names = {whole, normalise(re.sub(r"\s*\([^()]*\)\s*$", "", heading))}
    if ": " in whole:
        names.add(whole.split(": ", 1)[0])
    return names


def slug(heading):
    """GitHub's anchor for a heading."""
    text = heading.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def numbered(heads, word):
    """Numbers of headings such as "Invariant 3: ..." or "Trap 8: ..."."""
    out = set()
    for h in heads:
        m = re.match(word + r"\s+(\d+)\b", h, re.IGNORECASE)
        if m:
            out.add(int(m.group(1)))
    return out


def expand(numbers):
    out = []
    for part in re.split(r"\s*(?:,|and|or)\s*", numbers):
        if not part:
            continue
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2:
            out.extend(range(int(bounds[0]), int(bounds[1]) + 1))
        else:
            out.append(int(bounds[0]))
    return out


def resolve(root, citing, name):
    """The cited file's path inside root, or None when there is none."""
    candidates = []
    here = os.path.dirname(citing)
    if "/" in name:
        candidates = [os.path.join(here, name), os.path.join(root, name)]
        if name.startswith("../") or name.startswith("./"):
            candidates = [os.path.join(here, name)]
    else:
        # A bare name is a sibling, a top-level file or a page of docs/.
        candidates = [os.path.join(here, name), os.path.join(root, name), os.path.join(root, "docs", name)]
    real_root = os.path.realpath(root)
    for c in candidates:
        real = os.path.realpath(c)
        inside = real == real_root or real.startswith(real_root + os.sep)
        if inside and os.path.isfile(real):
            return real
    return None


def scanned_files(root):
    for entry in SCANNED:
        top = os.path.join(root, entry)
        if os.path.isfile(top):
            yield top
            continue
        for folder, dirs, files in os.walk(top):
            rel = os.path.relpath(folder, root)
            dirs[:] = sorted(d for d in dirs if os.path.join(rel, d).replace("./", "", 1) not in SKIPPED_DIRS)
            for name in sorted(files):
                yield os.path.join(folder, name)


# A cited source file, e.g. src/member_shell/export_loop.h: it must exist, so
# that a file move cannot leave comments and docs pointing at the old place.
SOURCE_PATH = re.compile(r"(?<![\w/.])src/[a-z_]+/[a-z_0-9]+\.(?:h|cc)\b")


def check_file(root, path, cache, self_path):
    """The broken citations of one file, as 'file:line: what' strings."""
    if os.path.realpath(path) == self_path:
        return []  # The self-test fixture below is broken on purpose.
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except (UnicodeDecodeError, OSError):
        return []  # Not text.
    rel = os.path.relpath(path, root)
    problems = []
    for number, line in enumerate(lines, 1):
        for source in SOURCE_PATH.finditer(line):
            if not os.path.isfile(os.path.join(root, source.group(0))):
                problems.append(f"{rel}:{number}: {source.group(0)} is not a file of the repository")
        following = lines[number] if number < len(lines) else ""
        joined = line + " " + LEADER.sub("", following, count=1)
        for m in CITATION.finditer(line):
            name = m.group(1)
            if os.path.basename(name) in NOT_CITATIONS:
                continue
            where = f"{rel}:{number}"
            target = resolve(root, path, name)
            if target is None:
                problems.append(f"{where}: {name} is not a file of the repository")
                continue
            if target not in cache:
                cache[target] = headings(target)
            heads = cache[target]
            rest = joined[m.end():]
            shown = os.path.relpath(target, root)
            section = SECTION.match(rest)
            if section:
                wanted = normalise(section.group(1))
                if not any(wanted in names_of(h) for h in heads):
                    problems.append(f'{where}: {shown} has no heading "{section.group(1)}"')
            anchor = ANCHOR.match(rest)
            if anchor and anchor.group(1) not in {slug(h) for h in heads}:
                problems.append(f"{where}: {shown} has no heading with anchor #{anchor.group(1)}")
            numbered_section = NUMBERED.match(rest)
            if numbered_section:
                n = numbered_section.group(1)
                if not any(re.match(n + r"\.\s", h) for h in heads):
                    problems.append(f"{where}: {shown} has no section §{n}")
            for pattern, word in ((INVARIANT, "invariant"), (TRAP, "trap")):
                cited = pattern.match(rest)
                if not cited:
                    continue
                known = numbered(heads, word)
                for n in expand(cited.group(1)):
                    if n not in known:
                        problems.append(f"{where}: {shown} has no {word} {n}")
    return problems


def check_tree(root):
    cache = {}
    self_path = os.path.realpath(__file__)
    problems = []
    for path in scanned_files(root):
        problems.extend(check_file(root, path, cache, self_path))
    return problems


def self_test():
    """A tiny tree with one good citation of each kind and one broken one of
    each kind; the checker must accept the good ones and name every broken one."""
    files = {
        "docs/design.md": "# Design\n\n## Invariants\n\n### Invariant 1: Ack after commit\n\n"
        "### Invariant 2: No duplicates\n\n```\n# Not a heading\n```\n",
        "docs/consensus.md": "# Consensus\n\n## Traps\n\n### Trap 1: one thread\n\n### Trap 2: guards\n",
        "docs/style.md": "# Style\n\n## 1. The shape\n\n## 5. Errors\n",
        "docs/ops.md": "# Operations\n\n## Trying it out\n\n## Log entry (version 1)\n\nSee [design](design.md#invariant-1-ack-after-commit).\n"
        "Broken [link](design.md#no-such-anchor).\n",
        "src/good.cc": "// docs/design.md invariant 1, docs/design.md invariants 1 and 2.\n"
        "// docs/consensus.md traps 1-2; docs/style.md §5; docs/ops.md, \"Trying it out\";\n"
        "// docs/ops.md (\"Trying it out\"); docs/ops.md \"Log entry\"; wrapped: docs/ops.md,\n"
        '// "Trying it out". hashlib.md5(x) is no citation; nor is OUT.md.\n'
        'const char* k = "see docs/ops.md, \\"Trying it out\\"";\n',
        "src/missing.cc": "// NOTES.md invariant 1\n",
        "src/outside.cc": "// ../../elsewhere/consensus.md\n",
        "src/section.cc": '// docs/ops.md "No such section"\n',
        "src/wrapped.cc": "// docs/ops.md,\n// \"Not there either\"\n",
        "src/invariant.cc": "// docs/design.md invariants 2 and 9\n",
        "src/trap.cc": "// docs/consensus.md traps 1-3\n",
        "src/numbered.cc": "// docs/style.md §4\n",
        "src/moved.cc": "// the sink lives in src/io/gone.h; this file is src/moved.cc.\n",
    }
    expected = [
        "docs/ops.md:8: docs/design.md has no heading with anchor #no-such-anchor",
        "src/invariant.cc:1: docs/design.md has no invariant 9",
        "src/missing.cc:1: NOTES.md is not a file of the repository",
        "src/moved.cc:1: src/io/gone.h is not a file of the repository",
        "src/numbered.cc:1: docs/style.md has no section §4",
        "src/outside.cc:1: ../../elsewhere/consensus.md is not a file of the repository",
        'src/section.cc:1: docs/ops.md has no heading "No such section"',
        "src/trap.cc:1: docs/consensus.md has no trap 3",
        'src/wrapped.cc:1: docs/ops.md has no heading "Not there either"',
    ]
    with tempfile.TemporaryDirectory() as parent:
        # consensus.md exists beside the root, outside it: a citation that
        # climbs out of the repository must fail even when the file exists.
        os.makedirs(os.path.join(parent, "elsewhere"))
        with open(os.path.join(parent, "elsewhere", "consensus.md"), "w") as f:
            f.write("# Outside\n")
        root = os.path.join(parent, "repo")
        for name, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, name)), exist_ok=True)
            with open(os.path.join(root, name), "w") as f:
                f.write(text)
        found = sorted(check_tree(root))
    if found != sorted(expected):
        print("self-test FAILED")
        print("expected:\n  " + "\n  ".join(sorted(expected)))
        print("found:\n  " + "\n  ".join(found))
        return 1
    print(f"self-test passed: {len(expected)} broken citations caught, the good ones accepted")
    return 0


def main(argv):
    if len(argv) > 1 and argv[1] == "--self-test":
        return self_test()
    here = os.path.dirname(os.path.abspath(__file__))
    root = argv[1] if len(argv) > 1 else os.environ.get("RW_SOURCE_ROOT") or os.path.join(here, "..", "..")
    problems = check_tree(os.path.abspath(root))
    if problems:
        print("citations of documents that do not exist in the repository:")
        print("\n".join(problems))
        return 1
    print("every citation points into the repository")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
