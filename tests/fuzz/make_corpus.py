#!/usr/bin/env python3
"""Makes the seed corpora of the libFuzzer targets (tests/fuzz/corpus/<target>/) from the shipped scenes and
test data, and small synthetic files where none ship (glTF/GLB, PLY variants, view scripts, CLI numbers). The
binary seeds (stores, matrices, lightmaps for the fixture scene) come from the seed maker built with the fuzz
targets (make_seeds.cpp); the inputs in tests/fuzz/regressions/<target>/, which once crashed a loader, join
them. Deterministic; rerun it when a file format or the fixture scene changes:

  python3 tests/fuzz/make_corpus.py --seed-maker build-fuzz/fuzz/fuzz_make_seeds

Shipped scenes that are too large for a corpus (the Stanford meshes, Sibenik, the conference room) give only
their manifests, with "path" pointing at the small meshes the manifest target writes beside each input, and
the head of a PLY: a corpus holds short files the fuzzer can mutate quickly.
"""
import argparse
import base64
import json
import pathlib
import re
import shutil
import struct
import subprocess
import sys

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent.parent
SHARED = ROOT.parent / "shared" / "scenes"  # the large scenes, beside the repository (may be absent)
SEPARATOR = b"\n@@ibrr-fuzz-next-file@@\n"  # fuzz::kFileSeparator (fuzz_support.hpp)
MESH_FORMATS = {"obj": 0, "ply": 1, "gltf": 2, "glb": 3}  # the first byte of a fuzz_mesh input (mod 4)


def write(folder: pathlib.Path, name: str, data: bytes) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / name).write_bytes(data)


# --- fuzz_manifest: the shipped manifests on the meshes it writes beside them, and every key once -----------

def small_mesh_for(path: str) -> str:
    return "furnace.obj" if "furnace" in path else "cornell.obj"


def manifest_seeds(out: pathlib.Path) -> None:
    for manifest in sorted((ROOT / "scenes").glob("*.json")):
        data = json.loads(manifest.read_text())
        for mesh in data.get("meshes", []):
            mesh["path"] = small_mesh_for(mesh["path"])
        write(out, manifest.name, json.dumps(data, indent=1).encode())
    every_key = {
        "description": "every manifest key", "units": "mm",
        "meshes": [
            {"path": "cornell.obj", "name": "box",
             "transform": {"translate": [1, 2, 3], "scale": [1, 2, 0.5],
                           "rotate": [{"axis": [0, 1, 0], "degrees": 30}, {"axis": [1, 0, 0], "degrees": -10}]},
             "materials": {"white": {"albedo": [0.5, 0.5, 0.5]}, "light": {"emission": [10, 10, 10]}}},
            {"path": "furnace.obj", "transform": {"scale": 2, "rotate": {"axis": [0, 0, 1], "degrees": 90}},
             "materials": {"*": {"albedo": [0.2, 0.3, 0.4], "emission": [0, 0, 0]}}},
        ],
        "lights": [
            {"type": "quad", "name": "panel", "corner": [0, 500, 0], "edge1": [100, 0, 0], "edge2": [0, 0, 100],
             "radiance": [5, 5, 5], "albedo": [0.5, 0.5, 0.5]},
            {"type": "point", "name": "bulb", "position": [250, 400, 250], "intensity": [1000, 900, 800]},
            {"type": "spot", "position": [0, 500, 0], "target": [250, 0, 250], "intensity": [1, 1, 1],
             "angle": 40, "inner_angle": 20},
            {"type": "spot", "position": [0, 500, 0], "direction": [0, -1, 0], "intensity": [2, 0, 0]},
        ],
        "cameras": [
            {"name": "front", "eye": [278, 273, -800], "target": [278, 273, 0], "up": [0, 1, 0], "fov": 40},
            {"eye": [0, 0, 0], "direction": [0, 0, 1]},
        ],
        "image": {"width": 64, "height": 48},
    }
    write(out, "every_key.json", json.dumps(every_key, indent=1).encode())


# --- fuzz_mesh: OBJ+MTL from the shipped scenes, PLY (the bunny's header on a few faces, binary variants),
# glTF with a buffer file and with a data URI, GLB ----------------------------------------------------------

def obj_seed(obj: pathlib.Path, mtl: pathlib.Path) -> bytes:
    text = re.sub(rb"^mtllib .*$", b"mtllib mesh.mtl", obj.read_bytes(), flags=re.M)
    return bytes([MESH_FORMATS["obj"]]) + text + SEPARATOR + mtl.read_bytes()


TETRA_VERTICES = [(0.0, 0.0, 0.0), (1.0, 0.0, 0.0), (0.0, 1.0, 0.0), (0.0, 0.0, 1.0)]
TETRA_FACES = [(0, 2, 1), (0, 1, 3), (0, 3, 2), (1, 2, 3)]


def ply_ascii_tetra() -> bytes:
    header = ("ply\nformat ascii 1.0\ncomment a tetrahedron with normals and a quad face\n"
              "element vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
              "property float nx\nproperty float ny\nproperty float nz\n"
              "element face 4\nproperty list uchar int vertex_indices\nend_header\n")
    body = "".join(f"{x} {y} {z} 0 0 1\n" for x, y, z in TETRA_VERTICES)
    body += "3 0 2 1\n3 0 1 3\n4 0 3 2 1\n3 1 2 3\n"
    return header.encode() + body.encode()


def ply_binary_tetra(endian: str) -> bytes:
    name = "binary_little_endian" if endian == "<" else "binary_big_endian"
    header = (f"ply\nformat {name} 1.0\nelement vertex 4\nproperty float x\nproperty float y\nproperty float z\n"
              "property uchar red\nproperty uchar green\nproperty uchar blue\n"
              "element face 4\nproperty list uchar uint vertex_indices\nend_header\n").encode()
    body = b"".join(struct.pack(endian + "fffBBB", *v, 200, 100, 50) for v in TETRA_VERTICES)
    body += b"".join(struct.pack(endian + "BIII", 3, *f) for f in TETRA_FACES)
    return header + body


def ply_bunny_head(ply: pathlib.Path, vertices: int = 40) -> bytes:
    """The bunny's own header and first vertices, with the faces among them: a shipped PLY, small."""
    lines = [l.rstrip() for l in ply.read_bytes().split(b"\n")]
    end = lines.index(b"end_header")
    header = lines[:end + 1]
    vertex_count = int(header[3].split()[2])
    body_vertices = lines[end + 1:end + 1 + vertices]
    faces = [l for l in lines[end + 1 + vertex_count:] if l.strip()
             and all(int(i) < vertices for i in l.split()[1:])][:60]
    header = [re.sub(rb"element vertex \d+", b"element vertex %d" % vertices, l) for l in header]
    header = [re.sub(rb"element face \d+", b"element face %d" % len(faces), l) for l in header]
    return b"\n".join(header + body_vertices + faces) + b"\n"


def gltf_quad(uri: str | None) -> tuple[dict, bytes]:
    """A unit quad (two triangles, uint16 indices, normals) with a glTF material, its buffer bytes."""
    positions = [(0, 0, 0), (1, 0, 0), (1, 1, 0), (0, 1, 0)]
    buffer = b"".join(struct.pack("<3f", *p) for p in positions)
    buffer += b"".join(struct.pack("<3f", 0, 0, 1) for _ in positions)
    buffer += struct.pack("<6H", 0, 1, 2, 0, 2, 3)
    gltf = {
        "asset": {"version": "2.0"},
        "scene": 0, "scenes": [{"nodes": [0]}],
        "nodes": [{"mesh": 0, "translation": [0, 0, 1], "scale": [2, 2, 2]}],
        "meshes": [{"primitives": [{"attributes": {"POSITION": 0, "NORMAL": 1}, "indices": 2, "material": 0}]}],
        "materials": [{"name": "lamp", "pbrMetallicRoughness": {"baseColorFactor": [0.8, 0.7, 0.6, 1]},
                       "emissiveFactor": [1, 0.5, 0.25]}],
        "buffers": [{"byteLength": len(buffer)} | ({"uri": uri} if uri is not None else {})],
        "bufferViews": [{"buffer": 0, "byteOffset": 0, "byteLength": 48},
                        {"buffer": 0, "byteOffset": 48, "byteLength": 48},
                        {"buffer": 0, "byteOffset": 96, "byteLength": 12}],
        "accessors": [
            {"bufferView": 0, "componentType": 5126, "count": 4, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]},
            {"bufferView": 1, "componentType": 5126, "count": 4, "type": "VEC3"},
            {"bufferView": 2, "componentType": 5123, "count": 6, "type": "SCALAR"}],
    }
    return gltf, buffer


def glb(gltf: dict, buffer: bytes) -> bytes:
    chunk_json = json.dumps(gltf, separators=(",", ":")).encode()
    chunk_json += b" " * (-len(chunk_json) % 4)
    chunk_bin = buffer + b"\0" * (-len(buffer) % 4)
    body = struct.pack("<II", len(chunk_json), 0x4E4F534A) + chunk_json
    body += struct.pack("<II", len(chunk_bin), 0x004E4942) + chunk_bin
    return struct.pack("<III", 0x46546C67, 2, 12 + len(body)) + body


def mesh_seeds(out: pathlib.Path) -> None:
    scenes = ROOT / "scenes"
    write(out, "cornell.obj", obj_seed(scenes / "cornell.obj", scenes / "cornell.mtl"))
    write(out, "furnace.obj", obj_seed(scenes / "furnace.obj", scenes / "furnace.mtl"))
    mcguire = SHARED / "cornell_mcguire"
    for name in ("CornellBox-Original", "CornellBox-Mirror"):
        if (mcguire / f"{name}.obj").exists():
            write(out, f"{name}.obj", obj_seed(mcguire / f"{name}.obj", mcguire / f"{name}.mtl"))
    ply = bytes([MESH_FORMATS["ply"]])
    write(out, "tetra_ascii.ply", ply + ply_ascii_tetra())
    write(out, "tetra_le.ply", ply + ply_binary_tetra("<"))
    write(out, "tetra_be.ply", ply + ply_binary_tetra(">"))
    bunny = SHARED / "bunny" / "bun_zipper_res4.ply"
    if bunny.exists():
        write(out, "bunny_head.ply", ply + ply_bunny_head(bunny))
    gltf, buffer = gltf_quad("mesh.bin")
    write(out, "quad_bin.gltf", bytes([MESH_FORMATS["gltf"]]) + json.dumps(gltf).encode() + SEPARATOR + buffer)
    gltf, buffer = gltf_quad("data:application/octet-stream;base64," + base64.b64encode(buffer).decode())
    write(out, "quad_data_uri.gltf", bytes([MESH_FORMATS["gltf"]]) + json.dumps(gltf).encode())
    gltf, buffer = gltf_quad(None)
    write(out, "quad.glb", bytes([MESH_FORMATS["glb"]]) + glb(gltf, buffer))


# --- fuzz_view_script: the test data's walks (for the fixture scene, the Cornell box) and every key -----------

def view_script_seeds(out: pathlib.Path) -> None:
    for script in sorted((ROOT / "tests" / "data").glob("view_walk_*.json")):
        write(out, script.name, script.read_bytes())
    every_key = {
        "keyframes": [{"frame": 0, "camera": "cornell"},
                      {"frame": 10, "eye": [100, 300, -200], "direction": [1, 0, 1], "fov": 60},
                      {"frame": 20, "target": [278, 200, 300]}],
        "screenshots": [{"frame": 0, "name": "front"},
                        {"frame": 5, "name": "walk", "method": "albedo", "filter": "box"},
                        {"frame": 20, "name": "ui", "window": True}],
        "lights": [{"frame": 3, "light": 0, "offset": [50, 0, 0]}],
    }
    write(out, "every_key.json", json.dumps(every_key, indent=1).encode())


# --- fuzz_cli_numbers: the first byte picks parseImageSize (0), finiteNumber (1), a float flag (2), a method's
# whole-number flag (3) -------------------------------------------------------------------------------------

def cli_number_seeds(out: pathlib.Path) -> None:
    seeds = {"size_512x512": (0, "512x512"), "size_max": (0, "16384X1"), "size_bad": (0, "0x-3"),
             "finite_decimal": (1, "1.5"), "finite_exponent": (1, "-2.5e-7"), "finite_nan": (1, "nan"),
             "flag_decimal": (2, "0.75"), "flag_negative": (2, "-3"), "flag_large": (2, "3e38"),
             "whole_decimal": (3, "4096"), "whole_signed": (3, "+12"), "whole_huge": (3, "18446744073709551616")}
    for name, (mode, text) in seeds.items():
        write(out, name, bytes([mode]) + text.encode())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seed-maker", required=True, help="the fuzz_make_seeds executable of a fuzz build")
    parser.add_argument("--out", default=str(HERE / "corpus"), help="the corpus folder (default: tests/fuzz/corpus)")
    args = parser.parse_args()
    out = pathlib.Path(args.out)
    if out.exists():
        shutil.rmtree(out)
    manifest_seeds(out / "manifest")
    mesh_seeds(out / "mesh")
    view_script_seeds(out / "view_script")
    cli_number_seeds(out / "cli_numbers")
    subprocess.run([args.seed_maker, str(out)], check=True, stdout=subprocess.DEVNULL)
    # Inputs that once crashed a loader (tests/fuzz/regressions/<target>/): every run replays them first.
    for regression in sorted((HERE / "regressions").glob("*/*")):
        write(out / regression.parent.name, "regression_" + regression.name, regression.read_bytes())
    total = sum(f.stat().st_size for f in out.rglob("*") if f.is_file())
    print(f"{out}: {sum(1 for f in out.rglob('*') if f.is_file())} seeds, {total} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
