#!/usr/bin/env python3
"""Checks the relative links of README.md, SPEC.md, CHANGELOG.md and docs/*.md: every linked
file exists, and every #anchor names a heading of its target (GitHub's anchor rules: lower case,
punctuation dropped, spaces to hyphens). Exit 1 with each broken link, else 0.

    check_doc_links.py [ROOT]        (ctest docs.links)
    check_doc_links.py --self-test   (ctest docs.links_self_test: a broken file link and a
                                      broken anchor are both reported, a good one is not)
"""
import glob
import os
import re
import sys

LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")


def anchor(heading):
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path):
    out, fence = set(), False
    with open(path) as f:
        for line in f:
            if line.startswith("```"):
                fence = not fence
            elif not fence and re.match(r"#{1,6} ", line):
                out.add(anchor(line.lstrip("#")))
    return out


def self_test():
    import tempfile
    with tempfile.TemporaryDirectory() as root:
        os.makedirs(os.path.join(root, "docs"))
        for name in ("SPEC.md", "CHANGELOG.md"):
            open(os.path.join(root, name), "w").write("# Title\n\n## A `code` heading: yes\n")
        open(os.path.join(root, "README.md"), "w").write(
            "[ok](SPEC.md#a-code-heading-yes) [ok](docs/a.md) [gone](docs/none.md)\n"
            "[bad anchor](SPEC.md#no-such-heading) [web](https://example.org/x)\n")
        open(os.path.join(root, "docs", "a.md"), "w").write("# A\n\n[up](../README.md)\n")
        broken = check(root)
    want = ["README.md:1: docs/none.md: no such file",
            "README.md:2: SPEC.md#no-such-heading: no heading makes the anchor #no-such-heading"]
    print("\n".join(broken))
    if broken != want:
        print(f"self-test FAILED: want {want}")
        return 1
    print("self-test: both broken links reported, the good ones not")
    return 0


def main():
    if sys.argv[1:] == ["--self-test"]:
        return self_test()
    root = os.path.abspath(sys.argv[1] if len(sys.argv) > 1 else
                           os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    broken = check(root)
    for b in broken:
        print(b)
    print("doc links: " + (f"{len(broken)} broken" if broken else "all resolve"))
    return 1 if broken else 0


def check(root):
    pages = [os.path.join(root, p) for p in ("README.md", "SPEC.md", "CHANGELOG.md")]
    pages += sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    pages += sorted(glob.glob(os.path.join(root, "adapters", "**", "README.md"), recursive=True))
    broken = []
    for page in pages:
        fence = False
        with open(page) as f:
            lines = f.readlines()
        for n, line in enumerate(lines, 1):
            if line.startswith("```"):
                fence = not fence
            if fence:
                continue
            for target in LINK.findall(line):
                if re.match(r"[a-z]+:", target):  # http:, https:, mailto:
                    continue
                path, _, frag = target.partition("#")
                dest = os.path.normpath(os.path.join(os.path.dirname(page), path)) if path else page
                where = f"{os.path.relpath(page, root)}:{n}: {target}"
                if not os.path.exists(dest):
                    broken.append(f"{where}: no such file")
                elif frag and dest.endswith(".md") and frag not in anchors(dest):
                    broken.append(f"{where}: no heading makes the anchor #{frag}")
    return broken


if __name__ == "__main__":
    sys.exit(main())
