#!/usr/bin/env python3
"""Mutated PLY files against `ibrr info`: every file must load or be refused with one line, never crash or hang.

Makes COUNT mutants (default 2000) of the shipped PLY meshes, from a fixed seed: bytes flipped, the file cut,
a header count changed, a line dropped, as a careless copy or a fuzzer makes them. Each is given to
`ibrr info` with a time limit; the script prints how many loaded, were refused (exit 1, one line naming the
file), crashed (a signal) or hung (past the limit), and exits non-zero unless there were no crashes, no
hangs and every refusal was one line naming its file.

  python3 tests/fuzz/mutate_ply.py build/bin/ibrr ../shared/scenes --count 2000 --out /tmp/ply_mutants
"""
import argparse
import pathlib
import random
import re
import subprocess
import sys

COUNTS = [b"0", b"1", b"3", b"-1", b"99999999", b"4294967295"]


def mutate(data: bytes, rng: random.Random) -> bytes:
    data = bytearray(data)
    kind = rng.randrange(4)
    if kind == 0:  # flip 1 to 8 bytes
        for _ in range(rng.randint(1, 8)):
            data[rng.randrange(len(data))] ^= rng.randint(1, 255)
    elif kind == 1:  # cut the file anywhere
        del data[rng.randrange(len(data)):]
    elif kind == 2:  # change one header count
        key = rb"element face (\d+)" if rng.randrange(2) else rb"element vertex (\d+)"
        match = re.search(key, bytes(data[:4096]))
        if match:
            data[match.start(1):match.end(1)] = rng.choice(COUNTS)
    else:  # drop one line
        at = rng.randrange(len(data))
        begin, end = data.rfind(b"\n", 0, at), data.find(b"\n", at)
        if begin >= 0 and end >= 0:
            del data[begin:end]
    return bytes(data)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("ibrr", help="the ibrr executable")
    parser.add_argument("scenes", help="the shared scenes folder (its *.ply files are the bases)")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before a run counts as hung")
    parser.add_argument("--max-bytes", type=int, default=1 << 20, help="bases larger than this are left out")
    parser.add_argument("--out", default="ply_mutants", help="folder for the mutants (created)")
    args = parser.parse_args()

    bases = sorted(p for p in pathlib.Path(args.scenes).rglob("*.ply") if p.stat().st_size <= args.max_bytes)
    if not bases:
        print(f"mutate_ply: no PLY files of at most {args.max_bytes} bytes under {args.scenes}", file=sys.stderr)
        return 2
    out = pathlib.Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)
    contents = [b.read_bytes() for b in bases]
    tally = {"loaded": 0, "refused": 0, "crashed": 0, "hung": 0, "bad message": 0}
    for k in range(args.count):
        base = k % len(bases)
        mutant = out / f"mutant_{k:05d}_{bases[base].stem}.ply"
        mutant.write_bytes(mutate(contents[base], rng))
        try:
            run = subprocess.run([args.ibrr, "-q", "info", str(mutant)], capture_output=True, timeout=args.timeout)
        except subprocess.TimeoutExpired:
            tally["hung"] += 1
            print(f"HUNG    {mutant}")
            continue
        if run.returncode < 0 or run.returncode > 4:
            tally["crashed"] += 1
            print(f"CRASHED {mutant} (exit {run.returncode})")
        elif run.returncode == 0:
            tally["loaded"] += 1
        else:
            lines = run.stderr.decode(errors="replace").strip().splitlines()
            if len(lines) == 1 and str(mutant) in lines[0]:
                tally["refused"] += 1
            else:
                tally["bad message"] += 1
                print(f"MESSAGE {mutant}: {lines}")
    print(f"{args.count} mutants of {len(bases)} files ({', '.join(b.name for b in bases)}): " +
          ", ".join(f"{v} {k}" for k, v in tally.items()))
    return 0 if tally["crashed"] == tally["hung"] == tally["bad message"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
