#!/usr/bin/env python3
"""Mutated scene files against `ibrr info`: every file must load or be refused with one line, never crash or hang.

Makes COUNT mutants (default 2000) of one kind of input, from a fixed seed, as a careless copy or a fuzzer makes
them: bytes flipped, the file cut, a count or number changed, a line dropped. Kinds and their bases:

  ply       the shared scenes' PLY meshes (bunny)
  obj       OBJ + MTL pairs (the built-in Cornell box and furnace, the shared McGuire Cornell boxes); the OBJ
            or its MTL is mutated
  gltf      glTF 2.0 made here from the OBJ bases: .gltf with the buffer as a data: URI, .gltf with a .bin
            beside it, and .glb; the JSON, the .bin or the GLB is mutated
  manifest  the built-in scene manifests (scenes/*.json), next to the meshes they name

Each mutant is given to `ibrr -q info` with a time limit; the script prints how many loaded, were refused
(exit 1 with one line naming the file), crashed (a signal, or an exit code ibrr never uses) or hung (past the
limit), and exits non-zero unless there were no crashes, no hangs and every refusal was one line naming a file.

  python3 tests/fuzz/mutate_inputs.py obj build/bin/ibrr --scenes scenes --shared ../shared/scenes --count 2000
"""
import argparse
import base64
import json
import pathlib
import random
import re
import shutil
import struct
import subprocess
import sys

COUNTS = [b"0", b"1", b"3", b"-1", b"99999999", b"4294967295"]
NUMBERS = [b"0", b"-1", b"1e39", b"-1e39", b"1e999", b"nan", b"inf", b"4294967296", b"0.0000001", b"99999999999"]


def flip_bytes(data: bytearray, rng: random.Random) -> None:
    for _ in range(rng.randint(1, 8)):
        data[rng.randrange(len(data))] ^= rng.randint(1, 255)


def cut(data: bytearray, rng: random.Random) -> None:
    del data[rng.randrange(len(data)):]


def drop_line(data: bytearray, rng: random.Random) -> None:
    at = rng.randrange(len(data))
    begin, end = data.rfind(b"\n", 0, at), data.find(b"\n", at)
    if begin >= 0 and end >= 0:
        del data[begin:end]


def change_number(data: bytearray, rng: random.Random) -> None:
    numbers = list(re.finditer(rb"-?\d+(\.\d+)?([eE][-+]?\d+)?", bytes(data)))
    if numbers:
        match = rng.choice(numbers)
        data[match.start():match.end()] = rng.choice(NUMBERS)


def change_count(data: bytearray, rng: random.Random) -> None:
    key = rb"element face (\d+)" if rng.randrange(2) else rb"element vertex (\d+)"
    match = re.search(key, bytes(data[:4096]))
    if match:
        data[match.start(1):match.end(1)] = rng.choice(COUNTS)


def mutate(data: bytes, rng: random.Random, text: bool) -> bytes:
    """One mutation; text formats also get their numbers changed, PLY its header counts."""
    data = bytearray(data)
    if not data:
        return bytes(data)
    kinds = [flip_bytes, cut, drop_line, change_number if text else change_count]
    rng.choice(kinds)(data, rng)
    return bytes(data)


# --- bases -------------------------------------------------------------------------------------------------

def obj_bases(scenes: pathlib.Path, shared: pathlib.Path, max_bytes: int):
    """(folder of files, name of the file to give ibrr, names that may be mutated)"""
    bases = []
    for obj in sorted(list(scenes.glob("*.obj")) + list(shared.glob("cornell_mcguire/*.obj"))):
        if obj.stat().st_size > max_bytes:
            continue
        files = {obj.name: obj.read_bytes()}
        for mtl in re.findall(rb"^mtllib\s+(\S+)", files[obj.name], re.M):
            path = obj.parent / mtl.decode()
            if path.is_file():
                files[path.name] = path.read_bytes()
        bases.append((files, obj.name, list(files)))
    return bases


def read_obj_triangles(data: bytes):
    positions, triangles = [], []
    for line in data.decode(errors="replace").splitlines():
        fields = line.split()
        if fields[:1] == ["v"]:
            positions.append([float(x) for x in fields[1:4]])
        elif fields[:1] == ["f"]:
            corners = [int(f.split("/")[0]) for f in fields[1:]]
            corners = [c - 1 if c > 0 else len(positions) + c for c in corners]
            triangles += [[corners[0], corners[k], corners[k + 1]] for k in range(1, len(corners) - 1)]
    return positions, triangles


def gltf_of(positions, triangles, buffer_uri):
    """A glTF 2.0 document of one mesh and its buffer bytes (float32 positions, uint32 indices)."""
    vertex_bytes = b"".join(struct.pack("<3f", *p) for p in positions)
    index_bytes = b"".join(struct.pack("<3I", *t) for t in triangles)
    low = [min(p[k] for p in positions) for k in range(3)]
    high = [max(p[k] for p in positions) for k in range(3)]
    buffer = vertex_bytes + index_bytes
    document = {
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0]}], "nodes": [{"mesh": 0}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "indices": 1, "material": 0}]}],
        "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [0.8, 0.7, 0.6, 1.0]}}],
        "buffers": [{"byteLength": len(buffer)}],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": len(vertex_bytes), "target": 34962},
                        {"buffer": 0, "byteOffset": len(vertex_bytes), "byteLength": len(index_bytes),
                         "target": 34963}],
        "accessors": [{"bufferView": 0, "componentType": 5126, "count": len(positions), "type": "VEC3",
                       "min": low, "max": high},
                      {"bufferView": 1, "componentType": 5125, "count": 3 * len(triangles), "type": "SCALAR"}],
    }
    if buffer_uri is not None:
        document["buffers"][0]["uri"] = buffer_uri
    return document, buffer


def glb_of(document, buffer):
    body = json.dumps(document).encode()
    body += b" " * (-len(body) % 4)
    binary = buffer + b"\0" * (-len(buffer) % 4)
    chunks = struct.pack("<II", len(body), 0x4E4F534A) + body + struct.pack("<II", len(binary), 0x004E4942) + binary
    return struct.pack("<III", 0x46546C67, 2, 12 + len(chunks)) + chunks


def gltf_bases(scenes: pathlib.Path, shared: pathlib.Path, max_bytes: int):
    bases = []
    for files, obj, _ in obj_bases(scenes, shared, max_bytes)[:6]:
        positions, triangles = read_obj_triangles(files[obj])
        if not triangles:
            continue
        stem = pathlib.Path(obj).stem
        document, buffer = gltf_of(positions, triangles, None)
        uri = "data:application/octet-stream;base64," + base64.b64encode(buffer).decode()
        document["buffers"][0]["uri"] = uri
        bases.append(({stem + ".gltf": json.dumps(document, indent=1).encode()}, stem + ".gltf", [stem + ".gltf"]))
        document["buffers"][0]["uri"] = stem + ".bin"
        files_bin = {stem + "_bin.gltf": json.dumps(document, indent=1).encode(), stem + ".bin": buffer}
        bases.append((files_bin, stem + "_bin.gltf", list(files_bin)))
        del document["buffers"][0]["uri"]
        bases.append(({stem + ".glb": glb_of(document, buffer)}, stem + ".glb", [stem + ".glb"]))
    return bases


def ply_bases(scenes: pathlib.Path, shared: pathlib.Path, max_bytes: int):
    return [({p.name: p.read_bytes()}, p.name, [p.name])
            for p in sorted(shared.rglob("*.ply")) if p.stat().st_size <= max_bytes]


def manifest_bases(scenes: pathlib.Path, shared: pathlib.Path, max_bytes: int):
    """Manifests are mutated in a copy of the scenes folder, beside the meshes they name."""
    return [({m.name: m.read_bytes()}, m.name, [m.name]) for m in sorted(scenes.glob("*.json"))]


KINDS = {"ply": (ply_bases, False), "obj": (obj_bases, True), "gltf": (gltf_bases, True),
         "manifest": (manifest_bases, True)}


# --- the run -----------------------------------------------------------------------------------------------

def classify(run, names):
    """loaded / refused / crashed / bad message, from the exit code and stderr."""
    if run.returncode < 0 or run.returncode > 5:
        return "crashed"
    if run.returncode == 0:
        return "loaded"
    lines = run.stderr.decode(errors="replace").strip().splitlines()
    if len(lines) == 1 and any(name in lines[0] for name in names):
        return "refused"
    return "bad message"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("kind", choices=sorted(KINDS))
    parser.add_argument("ibrr", help="the ibrr executable")
    parser.add_argument("--scenes", default="scenes", help="the built-in scenes folder")
    parser.add_argument("--shared", default="../shared/scenes", help="the shared scenes folder")
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--seed", type=int, default=20261125)
    parser.add_argument("--timeout", type=float, default=30.0, help="seconds before a run counts as hung")
    parser.add_argument("--max-bytes", type=int, default=1 << 20, help="bases larger than this are left out")
    parser.add_argument("--out", default=None, help="folder for the mutants (default: KIND_mutants)")
    args = parser.parse_args()

    make_bases, text = KINDS[args.kind]
    scenes, shared = pathlib.Path(args.scenes), pathlib.Path(args.shared)
    bases = make_bases(scenes, shared, args.max_bytes)
    if not bases:
        print(f"mutate_inputs: no {args.kind} bases under {scenes} and {shared}", file=sys.stderr)
        return 2
    out = pathlib.Path(args.out or f"{args.kind}_mutants")
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    if args.kind == "manifest":  # the meshes the manifests name, once
        shutil.copytree(scenes, out / "scenes")
    rng = random.Random(args.seed)
    tally = {"loaded": 0, "refused": 0, "crashed": 0, "hung": 0, "bad message": 0}
    for k in range(args.count):
        files, given, mutable = bases[k % len(bases)]
        folder = out / "scenes" if args.kind == "manifest" else out / f"mutant_{k:05d}"
        folder.mkdir(exist_ok=True)
        prefix = f"mutant_{k:05d}_" if args.kind == "manifest" else ""
        target = rng.choice(mutable)
        for name, data in files.items():
            content = mutate(data, rng, text and not name.endswith((".bin", ".glb"))) if name == target else data
            (folder / (prefix + name)).write_bytes(content)
        path = folder / (prefix + given)
        try:
            run = subprocess.run([args.ibrr, "-q", "info", str(path)], capture_output=True, timeout=args.timeout)
            verdict = classify(run, [str(folder)])
        except subprocess.TimeoutExpired:
            verdict = "hung"
        tally[verdict] += 1
        if verdict != "loaded" and verdict != "refused":
            detail = "" if verdict == "hung" else f" (exit {run.returncode}): {run.stderr.decode(errors='replace')}"
            print(f"{verdict.upper():8} {path} [{target} mutated]{detail}")
    print(f"{args.count} {args.kind} mutants of {len(bases)} bases: " + ", ".join(f"{v} {k}" for k, v in tally.items()))
    return 0 if tally["crashed"] == tally["hung"] == tally["bad message"] == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
