"""The repository stands alone: no text file in it names a file outside it.

usage: check_self_contained.py ROOT

Walks ROOT (skipping .git, node_modules, build trees -- any directory holding a
CMakeCache.txt -- and what ROOT/.gitignore ignores) and reports, one line per
finding, "PATH:LINE: ..." for

  (a) an absolute path into one machine's own directories: under /work,
      /home, /root, /Users, /mnt, /media, /srv, /scratch or C:\\Users.
      System paths (/usr, /tmp, /proc, /dev, /etc) are not findings;
  (b) a relative path that climbs out of ROOT: a run of ../ that, resolved
      against the file's own directory, leaves ROOT or lands in a top-level
      folder ROOT does not have (docs/../shared/...);
  (c) a Markdown document named by a file name that no .md file under ROOT
      has (a design note or style guide that is not in the tree).

Exits 1 if anything is found, else prints how many files it read.
"""
import fnmatch
import os
import re
import sys

ABSOLUTE = re.compile(r"(?<![\w.>}\])/-])(/(?:work|home|root|Users|mnt|media|srv|scratch)/\S*|[A-Za-z]:\\Users\\\S*)")
CLIMB = re.compile(r"(?<![\w./-])((?:\.\./)+[^\s\"'`()\[\]<>,;]*)")
MARKDOWN = re.compile(r"(?<![\w./%$-])((?:[\w.-]+/)*[\w-]+\.md)\b")


def ignored_by(root):
    """The .gitignore patterns of ROOT that matter here: anchored or not, directories or not."""
    patterns = []
    try:
        lines = open(os.path.join(root, ".gitignore"), encoding="utf-8").read().splitlines()
    except OSError:
        return patterns
    for line in lines:
        line = line.strip()
        if line and not line.startswith("#") and not line.startswith("!"):
            patterns.append((line.startswith("/"), line.endswith("/"), line.strip("/")))
    return patterns


def is_ignored(rel, is_dir, patterns):
    for anchored, dir_only, pat in patterns:
        if dir_only and not is_dir:
            continue
        if (fnmatch.fnmatchcase(rel, pat) if anchored or "/" in pat
                else fnmatch.fnmatchcase(os.path.basename(rel), pat)):
            return True
    return False


def text_files(root):
    patterns = ignored_by(root)
    for dirpath, dirnames, filenames in os.walk(root):
        rel_dir = os.path.relpath(dirpath, root)
        rel_dir = "" if rel_dir == "." else rel_dir
        keep = []
        for d in sorted(dirnames):
            rel = os.path.join(rel_dir, d)
            if d in (".git", "node_modules") or is_ignored(rel, True, patterns) \
                    or os.path.exists(os.path.join(dirpath, d, "CMakeCache.txt")) \
                    or os.path.islink(os.path.join(dirpath, d)):
                continue
            keep.append(d)
        dirnames[:] = keep
        for f in sorted(filenames):
            rel = os.path.join(rel_dir, f)
            # A worktree's .git is a file naming the main repository.
            if f == ".git" or is_ignored(rel, False, patterns) or os.path.islink(os.path.join(dirpath, f)):
                continue
            try:
                data = open(os.path.join(dirpath, f), "rb").read()
                if b"\0" in data[:8192]:
                    continue
                yield rel, data.decode("utf-8")
            except (OSError, UnicodeDecodeError):
                continue


def main():
    root = os.path.realpath(sys.argv[1])
    files = list(text_files(root))
    documents = {os.path.basename(rel) for rel, _ in files if rel.endswith(".md")}
    findings = []
    for rel, text in files:
        here = os.path.dirname(os.path.join(root, rel))
        for n, line in enumerate(text.splitlines(), 1):
            for m in ABSOLUTE.finditer(line):
                findings.append("%s:%d: names a machine path: %s" % (rel, n, m.group(1)))
            for m in CLIMB.finditer(line):
                target = os.path.normpath(os.path.join(here, m.group(1)))
                inside = os.path.commonpath([root, target]) == root
                top = os.path.relpath(target, root).split(os.sep)[0] if inside else ""
                if not inside or (top != "." and not os.path.exists(os.path.join(root, top))):
                    findings.append("%s:%d: climbs out of the repository: %s" % (rel, n, m.group(1)))
            for m in MARKDOWN.finditer(line):
                if os.path.basename(m.group(1)) not in documents:
                    findings.append("%s:%d: names a document not in the repository: %s" % (rel, n, m.group(1)))
    for f in findings:
        print(f)
    if findings:
        sys.exit(1)
    print("%d files read: no path outside the repository" % len(files))


main()
