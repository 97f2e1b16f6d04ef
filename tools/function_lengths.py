#!/usr/bin/env python3
"""The longest functions of the C++ sources, in lines from the signature's brace to the closing one.

    tools/function_lengths.py            # the ten longest in src/ and ibrr/
    tools/function_lengths.py --top 20 --limit 120 src/viewer

A function is a brace block whose opening follows a closing parenthesis (its parameter list, perhaps with
qualifiers after it) and that sits directly in a namespace, class or struct: member functions defined in a
class count one by one, and lambdas count as part of the function around them. Comments and string
literals are ignored. With --limit N it exits with 1 when a function is longer than N lines.
"""
import argparse
import pathlib
import re
import sys

TRANSPARENT = re.compile(r'(^|[\s;}])(namespace|struct|class|union|enum)\b[^;{()]*$|extern\s+"C"\s*$')


def strip(text):
    """Comments and literals blanked, newlines kept, so that line numbers stay."""
    text = re.sub(r'//[^\n]*', '', text)
    text = re.sub(r'/\*.*?\*/', lambda m: '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'R"(\w*)\((.*?)\)\1"', lambda m: '""' + '\n' * m.group(0).count('\n'), text, flags=re.S)
    text = re.sub(r'"(?:[^"\\\n]|\\.)*"', '""', text)
    return re.sub(r"'(?:[^'\\\n]|\\.)*'", "''", text)


def functions(path):
    """(first line, length, signature) of every function body in the file."""
    text = strip(path.read_text(errors='replace'))
    found, stack, header_start = [], [], 0
    line = 1
    for i, ch in enumerate(text):
        if ch == '\n':
            line += 1
        elif ch == '{':
            header = text[header_start:i]
            in_function = any(kind == 'function' for kind, _, _ in stack)
            if in_function:
                kind = 'block'
            elif TRANSPARENT.search(header.strip()):
                kind = 'scope'
            elif re.search(r'\)[^()]*$', header) and not re.search(r'=\s*$', header.strip()):
                kind = 'function'
            else:
                kind = 'block'
            signature = ' '.join(header.split())[-100:]
            stack.append((kind, line, signature))
            header_start = i + 1
        elif ch == '}':
            if stack:
                kind, first, signature = stack.pop()
                if kind == 'function':
                    found.append((first, line - first + 1, signature))
            header_start = i + 1
        elif ch == ';':
            header_start = i + 1
    return found


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument('paths', nargs='*', default=['src', 'ibrr'], help='files or folders (default: src ibrr)')
    parser.add_argument('--top', type=int, default=10, help='how many to list (default 10)')
    parser.add_argument('--limit', type=int, default=0, help='exit with 1 if a function is longer than this')
    args = parser.parse_args()
    root = pathlib.Path(__file__).resolve().parent.parent
    files = []
    for name in args.paths:
        path = pathlib.Path(name) if pathlib.Path(name).is_absolute() else root / name
        files += sorted(path.rglob('*.cpp')) + sorted(path.rglob('*.hpp')) if path.is_dir() else [path]
    rows = [(length, str(f.relative_to(root)), first, signature)
            for f in files for first, length, signature in functions(f)]
    rows.sort(key=lambda row: (-row[0], row[1], row[2]))
    for length, name, first, signature in rows[:args.top]:
        print(f'{length:5d}  {name}:{first}  {signature}')
    too_long = [row for row in rows if args.limit and row[0] > args.limit]
    if too_long:
        print(f'{len(too_long)} function(s) longer than {args.limit} lines', file=sys.stderr)
        return 1
    return 0


if __name__ == '__main__':
    sys.exit(main())
