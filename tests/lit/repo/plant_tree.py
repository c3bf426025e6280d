"""Writes a made-up source tree for testing check_self_contained.py.

usage: plant_tree.py DIR clean|planted

`clean`: a tree with nothing to report, plus violations where the checker
must not look (a build tree, node_modules, a folder .gitignore names).
`planted`: the same with one violation of each kind added. Every string
that would be a finding is assembled from pieces, so that this file itself
stays clean under the checker.
"""
import os
import sys


def j(*parts):
    return "".join(parts)


MD = ".m" + "d"
CLEAN = {
    "docs/a" + MD: j("See docs/b", MD, ", ../docs/b", MD, ", <exe>/../share/dflc, /usr/lib/x, <tmp>/root.\n"),
    "docs/b" + MD: "# b\n",
    ".gitignore": "/out/\n",
    "build/CMakeCache.txt": "",
}
HIDDEN = j("/wo", "rk/x ../", "../../x NOTE", MD, "\n")
for where in ("build/sub/f.txt", "node_modules/x/f.txt", "out/f.txt"):
    CLEAN[where] = HIDDEN
PLANTED = {
    "src/abs.c": j("papers in /wo", "rk/shared/p.txt, C:\\Us", "ers\\me\\x\n"),
    "docs/climb" + MD: j("see ../sha", "red/D", MD, " and ../", "../x\n"),
    "src/style.c": j("// per STYLE", MD, "\n"),
}

root, kind = sys.argv[1], sys.argv[2]
files = dict(CLEAN, **(PLANTED if kind == "planted" else {}))
for rel, text in files.items():
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
