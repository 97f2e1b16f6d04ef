#!/usr/bin/env python3
"""Fails when a file includes a header private to another library.

A header that only its own folder's sources use (src/FOLDER/NAME.hpp) is private to that folder's library: the
build runs this check (target ibrr_private_includes, part of ALL) over src/, tests/ and ibrr/, and an
#include "FOLDER/NAME.hpp" of a private header from any other folder stops it, naming the file and the line.

  check_private_includes.py ROOT PRIVATE_HEADER... [--extra FOLDER/FILE=PATH ...]

--extra scans PATH as if it were src/FOLDER/FILE (the test of this check uses it).
"""
import pathlib
import re
import sys

INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"', re.M)


def folder_of(relative: str) -> str:
    """The src/ folder a file lies in ("bake" for src/bake/x.cpp), or "" outside src/."""
    parts = pathlib.PurePosixPath(relative).parts
    return parts[1] if len(parts) > 2 and parts[0] == "src" else ""


def violations(relative: str, text: str, private: set) -> list:
    found = []
    for match in INCLUDE.finditer(text):
        header = match.group(1)
        owner = header.split("/")[0]
        if header in private and folder_of(relative) != owner:
            line = text.count("\n", 0, match.start()) + 1
            found.append(f"{relative}:{line}: includes {header}, private to src/{owner}/ (only its own sources "
                         f"include it); include one of that library's public headers instead")
    return found


def main(argv: list) -> int:
    if len(argv) < 2:
        print(__doc__, file=sys.stderr)
        return 2
    root = pathlib.Path(argv[1])
    private, extra = set(), []
    arguments = iter(argv[2:])
    for argument in arguments:
        if argument == "--extra":
            name, path = next(arguments).split("=", 1)
            extra.append(("src/" + name, pathlib.Path(path)))
        else:
            private.add(argument)
    for header in sorted(private):
        if not (root / "src" / header).is_file():
            print(f"check_private_includes: src/{header} (listed as private) does not exist", file=sys.stderr)
            return 2
    files = [(str(path.relative_to(root)), path) for folder in ("src", "tests", "ibrr")
             for path in sorted((root / folder).rglob("*")) if path.suffix in (".cpp", ".hpp")]
    found = []
    for relative, path in files + extra:
        found += violations(relative, path.read_text(errors="replace"), private)
    for line in found:
        print(line, file=sys.stderr)
    return 1 if found else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
