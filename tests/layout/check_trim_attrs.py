#!/usr/bin/env python3
"""Guards worker/content/html_trim.c's list of attributes the HTML tree keeps:
every attribute name a reader passes to vf_dom_attr / vf_dom_attr_is in
worker/content/*.c must be on it, or the parser drops the attribute before
the reader looks (the reader would silently see every page without it).

Usage: check_trim_attrs.py [SOURCE_ROOT]"""
import os
import re
import sys

READ = re.compile(r'vf_dom_attr(?:_is)?\s*\([^,()]+,\s*"([^"]+)"')
LIST = re.compile(r'read_attrs\[\]\s*=\s*\{(.*?)\};', re.S)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    content = os.path.join(root, "worker", "content")
    with open(os.path.join(content, "html_trim.c"), encoding="utf-8") as f:
        m = LIST.search(f.read())
    if not m:
        print("html_trim.c: no read_attrs[] list found")
        return 1
    kept = set(re.findall(r'"([^"]+)"', m.group(1)))
    missing = []
    for name in sorted(os.listdir(content)):
        if not name.endswith(".c"):
            continue
        with open(os.path.join(content, name), encoding="utf-8") as f:
            for attr in READ.findall(f.read()):
                if attr.lower() not in kept:
                    missing.append(f"{name}: reads '{attr}', which html_trim.c's read_attrs[] drops")
    for line in missing:
        print(line)
    if not kept:
        print("read_attrs[] is empty")
        return 1
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
