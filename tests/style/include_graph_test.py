#!/usr/bin/env python3
"""The include graph between src/ folders follows the allowed arrows.

docs/architecture.md ("Layers") draws the arrows: pure folders never include
io/ or a process's shell, a process's shell never includes another process's
shell, and app/ (wiring only) may include everything. The link graph alone
cannot see a header-only include, so this test reads every `#include
"folder/..."` line. It also checks that docs/architecture.md names every
folder, so the page cannot fall behind the tree.

Usage: include_graph_test.py [ROOT]        check the tree (exit 1 on a violation)
       include_graph_test.py --self-test   prove each rule catches its violation
"""
import os
import re
import sys
import tempfile

# folder -> folders its files may include (besides itself). Test files
# (*_test.cc, *_fuzz.cc, *_bench.cc, *_for_test.h) may also include TEST_EXTRA.
ALLOWED = {
    "base": set(),
    "radius": {"base"},
    "submission": {"base"},
    "accounting": {"base", "radius"},
    "config": {"base", "radius"},
    "auth": {"base", "radius", "config"},
    "exporter": {"base", "radius", "accounting"},
    "policy": {"base", "config", "auth"},
    "gateway": {"base", "radius", "config", "auth", "accounting", "eap", "policy"},
    "bench": {"base", "radius", "auth"},
    "deployment": {"base", "config"},
    "consensus": {"base"},
    "eap": {"base", "radius", "auth"},
    "admin": {"base", "radius", "config", "auth"},
    "audit": {"base"},
    # Shared operating-system primitives; they speak in a few pure value types.
    "io": {"base", "config", "gateway"},
    # One shell per process.
    "gateway_shell": {"io", "base", "radius", "config", "auth", "gateway", "submission", "accounting", "eap",
                      "audit"},
    "member_shell": {"io", "base", "radius", "config", "accounting", "consensus", "exporter", "submission",
                     "admin"},
    "loadgen_shell": {"io", "base", "radius", "bench", "gateway", "auth", "eap"},  # eap, auth: the EAP supplicants.
    "dev_shell": {"io", "base", "config", "deployment"},
    "app": None,  # Wiring only: may include every folder.
}
TEST_EXTRA = {
    "config": {"auth"},
    "consensus": {"accounting"},
    "eap": {"io"},  # The TLS tests' certificates (io::CertificateAuthority).
}
SHELLS = {f for f in ALLOWED if f.endswith("_shell")}
PURE = {f for f, allowed in ALLOWED.items() if allowed is not None and f != "io" and f not in SHELLS}
TEST_FILE = re.compile(r"_(test|fuzz|bench)\.cc$|_for_test\.h$|_main\.cc$")
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/([^"]+)"')


def check(root):
    problems = []
    src = os.path.join(root, "src")
    folders = sorted(d for d in os.listdir(src) if os.path.isdir(os.path.join(src, d)))
    for folder in folders:
        if folder not in ALLOWED:
            problems.append(f"src/{folder}: a folder the include graph does not know; add its arrows to "
                            f"tests/style/include_graph_test.py and docs/architecture.md")
            continue
        allowed = ALLOWED[folder]
        for dirpath, _, files in os.walk(os.path.join(src, folder)):
            for name in sorted(files):
                if not name.endswith((".h", ".cc")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                extra = TEST_EXTRA.get(folder, set()) if TEST_FILE.search(name) else set()
                with open(path, encoding="utf-8", errors="replace") as f:
                    for number, line in enumerate(f, 1):
                        m = INCLUDE.match(line)
                        if not m:
                            continue
                        target = m.group(1)
                        if target == folder or allowed is None:
                            continue
                        if not os.path.isdir(os.path.join(src, target)):
                            continue  # Not one of ours (a system or library header in quotes).
                        if target in allowed or target in extra:
                            continue
                        if folder in PURE and (target == "io" or target in SHELLS):
                            why = "a pure folder includes io/ or a process's shell"
                        elif folder in SHELLS and target in SHELLS:
                            why = "a process's shell includes another process's shell"
                        else:
                            why = f"{folder}/ may not include {target}/"
                        problems.append(f"{rel}:{number}: {why}: {line.strip()}")
    arch = os.path.join(root, "docs", "architecture.md")
    text = open(arch, encoding="utf-8").read() if os.path.exists(arch) else ""
    for folder in folders:
        if f"src/{folder}/" not in text:
            problems.append(f"docs/architecture.md: does not describe src/{folder}/")
    return problems


def self_test():
    cases = {
        "pure includes io": ("radius/x.h", '#include "io/clock.h"\n', "pure folder"),
        "pure includes shell": ("accounting/x.cc", '#include "member_shell/ledger_state.h"\n', "pure folder"),
        "shell includes shell": ("gateway_shell/x.cc", '#include "member_shell/ledger_state.h"\n', "another process's shell"),
        "arrow not allowed": ("submission/x.cc", '#include "accounting/record.h"\n', "may not include"),
        "unknown folder": ("mystery/x.cc", "", "does not know"),
        "undocumented folder": ("base/x.h", "", "does not describe src/base/"),
    }
    failed = 0
    for label, (rel, content, expected) in cases.items():
        with tempfile.TemporaryDirectory() as root:
            all_folders = set(ALLOWED) | {rel.split("/")[0]}
            for folder in all_folders:
                os.makedirs(os.path.join(root, "src", folder))
            os.makedirs(os.path.join(root, "docs"))
            documented = [f for f in all_folders if label != "undocumented folder" or f != "base"]
            with open(os.path.join(root, "docs", "architecture.md"), "w") as f:
                f.write("\n".join(f"src/{d}/" for d in documented))
            with open(os.path.join(root, "src", rel), "w") as f:
                f.write(content)
            found = check(root)
            if not any(expected in p for p in found):
                print(f"self-test '{label}': expected a problem containing '{expected}', got {found}")
                failed += 1
            # The same tree with the offending line removed is clean.
            if content:
                with open(os.path.join(root, "src", rel), "w") as f:
                    f.write("")
                if check(root):
                    print(f"self-test '{label}': clean tree reported {check(root)}")
                    failed += 1
    print(f"include graph self-test: {len(cases) - failed} passed, {failed} failed")
    return 1 if failed else 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
        "RW_SOURCE_ROOT", os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", ".."))
    problems = check(root)
    for p in problems:
        print(p)
    if problems:
        print(f"include graph: {len(problems)} violation(s)")
        return 1
    print("include graph follows docs/architecture.md")
    return 0


if __name__ == "__main__":
    sys.exit(main())
