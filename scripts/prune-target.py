#!/usr/bin/env python3
"""Prune a reused cargo target directory before a CI run.

Each CI run builds the workspace from a fresh clone. Cargo names an artifact
after a hash of its package id, and the id of a path dependency includes the
clone's path, so every run leaves a full new set of test executables and
workspace libraries next to the previous ones (about 15 GB a run with 89 test
binaries). Registry dependencies keep their hashes and stay warm.

This keeps, per artifact name, only the newest file among the workspace's own
outputs: executables without extension in debug/deps and debug/examples, and
the `libtessera*` libraries. A library of a registry crate is never touched, so
the warm part of the cache survives. It also drops `debug/incremental`, which a
fresh clone cannot reuse. Prints what it freed.

Usage: prune-target.py TARGET_DIR
"""
import os
import re
import shutil
import sys
from collections import defaultdict

HASHED = re.compile(r"^(?P<name>.+)-(?P<hash>[0-9a-f]{16})(?P<ext>\.[a-z.]+)?$")


def is_workspace_output(folder, name, ext, path):
    if name.startswith("libtessera") or name.startswith("tessera"):
        return True
    # Test and example executables have no extension and the exec bit.
    return ext is None and os.access(path, os.X_OK) and not folder.endswith("build")


def prune(target):
    freed = 0
    removed = 0
    for profile in ("debug",):
        inc = os.path.join(target, profile, "incremental")
        if os.path.isdir(inc):
            for root, _dirs, files in os.walk(inc):
                for f in files:
                    try:
                        freed += os.path.getsize(os.path.join(root, f))
                    except OSError:
                        pass
            shutil.rmtree(inc, ignore_errors=True)
        for sub in ("deps", "examples"):
            folder = os.path.join(target, profile, sub)
            if not os.path.isdir(folder):
                continue
            groups = defaultdict(list)
            for entry in os.scandir(folder):
                if not entry.is_file(follow_symlinks=False):
                    continue
                m = HASHED.match(entry.name)
                if not m:
                    continue
                if not is_workspace_output(folder, m["name"], m["ext"], entry.path):
                    continue
                st = entry.stat(follow_symlinks=False)
                groups[(m["name"], m["ext"] or "")].append((st.st_mtime, st.st_size, entry.path))
            for files in groups.values():
                files.sort(reverse=True)
                for _mtime, size, path in files[1:]:
                    try:
                        os.remove(path)
                        freed += size
                        removed += 1
                    except OSError:
                        pass
    print(f"prune-target: removed {removed} stale files and the incremental cache, "
          f"{freed / 1e9:.1f} GB freed in {target}")


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit(__doc__)
    if os.path.isdir(sys.argv[1]):
        prune(sys.argv[1])
