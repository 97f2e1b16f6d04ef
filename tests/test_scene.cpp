// Scene loading: the built-in Cornell box against its published numbers, mesh formats, manifest
// transforms and overrides, and manifest errors that name the key.
#include "scene/load.hpp"
#include "test_support.hpp"
#include "util/error.hpp"

#include <catch2/catch.hpp>

#include <glm/gtc/constants.hpp>

#include <algorithm>
#include <random>

using namespace ibrr;
using Catch::Contains;
namespace fs = std::filesystem;

TEST_CASE("the built-in Cornell box matches the measured data", "[scene]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "cornell.json");
  // 5 walls + light + 5 faces per block (no bottoms) = 16 quads.
  CHECK(scene.triangleCount() == 32);
  // The light: 130 × 105 mm², radiance (17, 12, 4), facing down, power Φ = π·L·A.
  float area = 0.0f;
  glm::vec3 power(0.0f);
  for (const scene::EmissiveTriangle& emitter : scene.emitters()) {
    area += emitter.area;
    power += emitter.power;
    CHECK(emitter.normal.y == Approx(-1.0f));
    CHECK(emitter.radiance == glm::vec3(17.0f, 12.0f, 4.0f));
    CHECK(emitter.v0.y == Approx(548.7f));
  }
  CHECK(scene.emitters().size() == 2);
  CHECK(area == Approx(130.0f * 105.0f).epsilon(1e-6));
  const glm::vec3 expectedPower = glm::pi<float>() * glm::vec3(17.0f, 12.0f, 4.0f) * (130.0f * 105.0f);
  CHECK(power.x == Approx(expectedPower.x).epsilon(1e-5));
  CHECK(power.y == Approx(expectedPower.y).epsilon(1e-5));
  CHECK(power.z == Approx(expectedPower.z).epsilon(1e-5));
  CHECK(scene.emittedPower().x == Approx(expectedPower.x).epsilon(1e-5));
  // Bounds of the measured box, in millimetres.
  CHECK(scene.bounds().min.x == Approx(0.0f));
  CHECK(scene.bounds().max.x == Approx(556.0f));
  CHECK(scene.bounds().max.y == Approx(548.8f));
  CHECK(scene.bounds().max.z == Approx(559.2f));
  // The measured camera.
  const scene::Camera& camera = scene.camera("cornell");
  CHECK(camera.eye == glm::vec3(278.0f, 273.0f, -800.0f));
  CHECK(camera.verticalFovDegrees == Approx(39.31f));
  // The common RGB albedos.
  int white = 0, red = 0, green = 0;
  for (const scene::Material& material : scene.materials) {
    white += material.albedo == glm::vec3(0.725f, 0.71f, 0.68f);
    red += material.albedo == glm::vec3(0.63f, 0.065f, 0.05f);
    green += material.albedo == glm::vec3(0.14f, 0.45f, 0.091f);
  }
  CHECK((white == 1 && red == 1 && green == 1));
  CHECK_THROWS_WITH(scene.camera("nope"), Contains("no camera named 'nope'") && Contains("cornell"));
}

TEST_CASE("the furnace scene is a closed box of uniform albedo and emission", "[scene]") {
  const scene::Scene scene = scene::loadScene(test::sceneDir() / "furnace.json");
  CHECK(scene.triangleCount() == 12);
  CHECK(scene.emitters().size() == 12);
  float area = 0.0f;
  for (const scene::EmissiveTriangle& emitter : scene.emitters()) {
    area += emitter.area;
    // Every face emits into the box: the normal points towards the centre.
    const glm::vec3 centroid = (emitter.v0 + emitter.v1 + emitter.v2) / 3.0f;
    CHECK(glm::dot(emitter.normal, glm::vec3(0.5f) - centroid) > 0.0f);
    CHECK(emitter.radiance == glm::vec3(1.0f));
  }
  CHECK(area == Approx(6.0f));
  for (const scene::Material& material : scene.materials)
    if (material.name == "furnace") CHECK(material.albedo == glm::vec3(0.5f));
}

TEST_CASE("OBJ, PLY and glTF 2.0 files load with their materials", "[scene]") {
  const fs::path folder = test::outputDir("formats");
  test::writeText(folder / "quad.obj", "mtllib quad.mtl\nusemtl glow\nv 0 0 0\nv 2 0 0\nv 2 0 3\nv 0 0 3\nf 1 4 3 2\n");
  test::writeText(folder / "quad.mtl", "newmtl glow\nKd 0.25 0.5 0.75\nKe 2 3 4\n");
  const scene::Scene obj = scene::loadScene(folder / "quad.obj");
  CHECK(obj.triangleCount() == 2);
  REQUIRE(obj.emitters().size() == 2);
  CHECK(obj.emitters()[0].radiance == glm::vec3(2.0f, 3.0f, 4.0f));
  CHECK(obj.emitters()[0].area + obj.emitters()[1].area == Approx(6.0f));

  test::writeText(folder / "tri.ply",
                  "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                  "property float z\nelement face 1\nproperty list uchar int vertex_indices\n"
                  "end_header\n0 0 0\n1 0 0\n0 1 0\n3 0 1 2\n");
  const scene::Scene ply = scene::loadScene(folder / "tri.ply");
  CHECK(ply.triangleCount() == 1);
  CHECK(ply.bounds().max == glm::vec3(1.0f, 1.0f, 0.0f));
  CHECK_FALSE(ply.hasLights());

  test::writeText(folder / "tri.gltf", R"({
    "asset": {"version": "2.0"},
    "scene": 0, "scenes": [{"nodes": [0]}],
    "nodes": [{"mesh": 0, "translation": [0, 0, 5]}],
    "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "material": 0}]}],
    "materials": [{"pbrMetallicRoughness": {"baseColorFactor": [0.2, 0.4, 0.6, 1.0]}, "emissiveFactor": [1.0, 0.5, 0.0]}],
    "buffers": [{"byteLength": 36, "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}],
    "bufferViews": [{"buffer": 0, "byteLength": 36}],
    "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}]
  })");
  const scene::Scene gltf = scene::loadScene(folder / "tri.gltf");
  CHECK(gltf.triangleCount() == 1);
  CHECK(gltf.bounds().min.z == Approx(5.0f));  // the node transform is applied
  REQUIRE(gltf.emitters().size() == 1);
  CHECK(gltf.emitters()[0].radiance == glm::vec3(1.0f, 0.5f, 0.0f));
  CHECK(gltf.materials.at(gltf.meshes[0].triangleMaterials[0]).albedo.y == Approx(0.4f));
}

TEST_CASE("manifest transforms, overrides, lights and cameras", "[scene]") {
  const fs::path folder = test::outputDir("manifest");
  test::writeText(folder / "tri.obj", "mtllib tri.mtl\nusemtl grey\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  test::writeText(folder / "tri.mtl", "newmtl grey\nKd 0.5 0.5 0.5\n");
  test::writeText(folder / "scene.json", R"({
    "meshes": [
      {"path": "tri.obj", "transform": {"scale": 2, "rotate": {"axis": [0, 0, 1], "degrees": 90}, "translate": [10, 0, 0]},
       "materials": {"grey": {"albedo": [0.1, 0.2, 0.3]}}}
    ],
    "lights": [
      {"type": "quad", "corner": [0, 5, 0], "edge1": [0, 0, 1], "edge2": [1, 0, 0], "radiance": [4, 4, 4]},
      {"type": "point", "position": [0, 3, 0], "intensity": [1, 1, 1]},
      {"type": "spot", "position": [0, 3, 0], "target": [0, 0, 0], "intensity": [2, 2, 2], "angle": 45}
    ],
    "cameras": [{"name": "top", "eye": [0, 10, 0.1], "target": [0, 0, 0], "fov": 60}],
    "image": {"width": 320, "height": 200}
  })");
  const scene::Scene scene = scene::loadScene(folder / "scene.json");
  // M = T·R·S: (1,0,0) → scale 2 → rotate 90° about z → (0,2,0) → translate → (10,2,0).
  const glm::mat4& transform = scene.instances[0].objectToWorld;
  const glm::vec3 moved = glm::vec3(transform * glm::vec4(1.0f, 0.0f, 0.0f, 1.0f));
  CHECK(moved.x == Approx(10.0f));
  CHECK(moved.y == Approx(2.0f));
  CHECK(moved.z == Approx(0.0f).margin(1e-5));
  CHECK(scene.bounds().max.x == Approx(10.0f));  // the mesh spans x in [8, 10], the quad light [0, 1]
  CHECK(scene.bounds().min.x == Approx(0.0f));
  CHECK(scene.materials[scene.meshes[0].triangleMaterials[0]].albedo == glm::vec3(0.1f, 0.2f, 0.3f));
  REQUIRE(scene.emitters().size() == 2);
  CHECK(scene.emitters()[0].normal.y == Approx(1.0f));  // edge1 × edge2 = z × x = +y
  CHECK(scene.pointLights.size() == 1);
  REQUIRE(scene.spotLights.size() == 1);
  CHECK(scene.spotLights[0].direction.y == Approx(-1.0f));
  CHECK(scene.spotLights[0].cosOuter == Approx(std::cos(glm::radians(45.0f))));
  CHECK(scene.camera("top").verticalFovDegrees == Approx(60.0f));
  CHECK(scene.defaultImageSize.width == 320);
  CHECK(scene.defaultImageSize.height == 200);
}

TEST_CASE("manifest errors name the file and the key", "[scene][errors]") {
  const fs::path folder = test::outputDir("manifest_errors");
  test::writeText(folder / "tri.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  auto load = [&](const std::string& text) {
    test::writeText(folder / "scene.json", text);
    return scene::loadScene(folder / "scene.json");
  };
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj"}], "meshs": []})"),
                    Contains("scene.json") && Contains("unknown key 'meshs'"));
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj", "transfrom": {}}]})"),
                    Contains("unknown key 'meshes[0].transfrom'"));
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj", "transform": {"scale": [1, 2]}}]})"),
                    Contains("'meshes[0].transform.scale'"));
  CHECK_THROWS_WITH(
      load(R"({"meshes": [{"path": "tri.obj"}], "cameras": [{"eye": [0, 0, 0], "target": [0, 0, 1], "fvo": 40}]})"),
      Contains("unknown key 'cameras[0].fvo'"));
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj", "materials": {"gold": {"albedo": [1, 1, 0]}}}]})"),
                    Contains("'meshes[0].materials.gold'") && Contains("no material of that name"));
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "missing.obj"}]})"),
                    Contains("'meshes[0].path'") && Contains("missing.obj") && Contains("not found"));
  CHECK_THROWS_WITH(load(R"({"lights": []})"), Contains("'meshes'") && Contains("missing"));
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj"}], "lights": [{"type": "laser"}]})"),
                    Contains("'lights[0].type'") && Contains("laser"));
  // Lights that give nothing, or less than nothing, and materials of NaN colour were accepted.
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj"}], "lights": [{"type": "point", "position": [0, 1, 0],
                            "intensity": [-1, 2, 2]}]})"),
                    Contains("'lights[0].intensity'") && Contains("≥ 0"));
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj"}], "lights": [{"type": "spot", "position": [0, 1, 0],
                            "direction": [0, -1, 0], "intensity": [0, 0, 0]}]})"),
                    Contains("'lights[0].intensity'") && Contains("above 0"));
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj"}], "lights": [{"type": "quad", "corner": [0, 0, 0],
                            "edge1": [1, 0, 0], "edge2": [0, 0, 1], "radiance": [0, 0, 0]}]})"),
                    Contains("'lights[0].radiance'"));
  test::writeText(folder / "nan.mtl", "newmtl broken\nKd nan 0.5 0.5\n");
  test::writeText(folder / "nan_kd.obj", "mtllib nan.mtl\nusemtl broken\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "nan_kd.obj"}]})"),
                    Contains("nan_kd.obj") && Contains("'broken'") && Contains("non-finite diffuse colour"));
  // Numbers finite in double but not in float (Embree aborted on the eye at 1e39), and integers that wrap.
  CHECK_THROWS_WITH(
      load(R"({"meshes": [{"path": "tri.obj"}], "cameras": [{"eye": [1e39, 0, 0], "target": [0, 0, 1]}]})"),
      Contains("'cameras[0].eye'") && Contains("within ±1e9"));
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj"}], "lights": [{"type": "quad", "corner": [0, 0, 0],
                            "edge1": [1e20, 0, 0], "edge2": [0, 0, 1e20], "radiance": [1, 1, 1]}]})"),
                    Contains("'lights[0].edge1'") && Contains("within ±1e9"));
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj"}], "image": {"width": 4294967808, "height": 64}})"),
                    Contains("'image.width'") && Contains("integer"));
  CHECK_THROWS_WITH(load("{\n  \"meshes\": [\n    {\"path\": \"tri.obj\",}\n  ]\n}"),
                    Contains("scene.json:3:") && Contains("syntax error"));
  // A number beyond a double's range escaped as nlohmann's out_of_range, not a parse_error (what the fuzz
  // targets found in the view script and lightmap loaders; tests/fuzz).
  CHECK_THROWS_WITH(load(R"({"meshes": [{"path": "tri.obj"}], "image": {"width": 1e999}})"),
                    Contains("scene.json") && Contains("out of range"));
}

TEST_CASE("a negative emission or albedo in a mesh file is refused, naming the file and the material",
          "[scene][errors]") {
  const fs::path folder = test::outputDir("negative_material");
  const std::string triangle = "v 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n";
  // The mistakes the manifest refuses ("emission must not be negative") were loaded from an MTL with the emission
  // clamped to zero and the albedo to [0, 1], no word said.
  test::writeText(folder / "ke.mtl", "newmtl lamp\nKd 0.5 0.5 0.5\nKe -17 -12 -4\n");
  test::writeText(folder / "ke.obj", "mtllib ke.mtl\nusemtl lamp\n" + triangle);
  CHECK_THROWS_WITH(scene::loadScene(folder / "ke.obj"),
                    Contains("ke.obj") && Contains("'lamp'") && Contains("negative emission") && Contains("-17"));
  test::writeText(folder / "kd.mtl", "newmtl wall\nKd 0.5 -0.1 0.5\n");
  test::writeText(folder / "kd.obj", "mtllib kd.mtl\nusemtl wall\n" + triangle);
  CHECK_THROWS_WITH(scene::loadScene(folder / "kd.obj"),
                    Contains("kd.obj") && Contains("'wall'") && Contains("negative diffuse colour"));
  // glTF's factors, through the same check.
  const auto gltf = [&](const std::string& name, const std::string& material) {
    test::writeText(folder / name, R"({
    "asset": {"version": "2.0"},
    "scene": 0, "scenes": [{"nodes": [0]}],
    "nodes": [{"mesh": 0}],
    "meshes": [{"primitives": [{"attributes": {"POSITION": 0}, "material": 0}]}],
    "materials": [)" + material + R"(],
    "buffers": [{"byteLength": 36, "uri": "data:application/octet-stream;base64,AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAA"}],
    "bufferViews": [{"buffer": 0, "byteLength": 36}],
    "accessors": [{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3", "min": [0, 0, 0], "max": [1, 1, 0]}]
  })");
    return folder / name;
  };
  CHECK_THROWS_WITH(scene::loadScene(gltf("emissive.gltf", R"({"name": "glow", "emissiveFactor": [1, -0.5, 0]})")),
                    Contains("emissive.gltf") && Contains("'glow'") && Contains("negative emission"));
  CHECK_THROWS_WITH(
      scene::loadScene(gltf("base.gltf", R"({"name": "paint", "pbrMetallicRoughness": {"baseColorFactor": [-1, 0.4, 0.6, 1]}})")),
      Contains("base.gltf") && Contains("'paint'") && Contains("negative diffuse colour"));
  // A reflectance above 1 from a modelling tool is clamped, as before, and zero emission stays zero.
  test::writeText(folder / "bright.mtl", "newmtl white\nKd 1.2 0.5 0.5\nKe 0 0 0\n");
  test::writeText(folder / "bright.obj", "mtllib bright.mtl\nusemtl white\n" + triangle);
  const scene::Scene bright = scene::loadScene(folder / "bright.obj");
  CHECK(bright.materials.at(bright.meshes[0].triangleMaterials[0]).albedo == glm::vec3(1.0f, 0.5f, 0.5f));
  CHECK_FALSE(bright.hasLights());
}

TEST_CASE("degenerate and NaN triangles are dropped, and a mesh of only NaNs is an error", "[scene][errors]") {
  const fs::path folder = test::outputDir("nan_mesh");
  test::writeText(folder / "partial.obj",
                  "v 0 0 0\nv 1 0 0\nv 0 1 0\nv nan nan nan\nv 2 0 0\nf 1 2 3\nf 1 2 4\nf 1 2 5\n");
  const scene::Scene partial = scene::loadScene(folder / "partial.obj");
  CHECK(partial.triangleCount() == 1);  // one NaN, one degenerate (collinear) dropped
  // Vertices beyond ±1e9 (scene.hpp's kMaxCoordinate) are as unusable as NaN ones.
  test::writeText(folder / "far.obj", "v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1e20 0 0\nf 1 2 3\nf 1 2 4\n");
  CHECK(scene::loadScene(folder / "far.obj").triangleCount() == 1);
  test::writeText(folder / "nan.obj", "v nan 0 0\nv 1 nan 0\nv 0 1 nan\nf 1 2 3\n");
  CHECK_THROWS_WITH(scene::loadScene(folder / "nan.obj"), Contains("nan.obj") && Contains("no valid triangles"));
}

TEST_CASE("missing and unreadable scene files give clear errors", "[scene][errors]") {
  const fs::path folder = test::outputDir("unreadable");
  CHECK_THROWS_WITH(scene::loadScene(folder / "absent.json"), Contains("absent.json") && Contains("not found"));
  test::writeText(folder / "garbage.ply", "this is not a mesh\n\x01\x02\x03");
  CHECK_THROWS_WITH(scene::loadScene(folder / "garbage.ply"), Contains("garbage.ply") && Contains("not a PLY file"));
  CHECK(scene::resolveScenePath("cornell") == scene::builtinSceneFolder() / "cornell.json");
}

namespace {

// The Cornell box's triangles as a PLY file: ASCII, or binary in either byte order.
std::string cornellPly(const std::string& format) {
  const scene::Scene cornell = scene::loadScene(test::sceneDir() / "cornell.json");
  const scene::TriangleMesh& mesh = cornell.meshes.at(0);
  std::string out = "ply\nformat " + format + " 1.0\ncomment the built-in Cornell box\nelement vertex " +
                    std::to_string(mesh.positions.size()) +
                    "\nproperty float x\nproperty float y\nproperty float z\nelement face " +
                    std::to_string(mesh.triangles.size()) + "\nproperty list uchar int vertex_indices\nend_header\n";
  auto put = [&](const void* data, std::size_t bytes) {
    std::string raw(static_cast<const char*>(data), bytes);
    if (format == "binary_big_endian") std::reverse(raw.begin(), raw.end());
    out += raw;
  };
  for (const glm::vec3& p : mesh.positions) {
    if (format == "ascii") {
      out += std::to_string(p.x) + " " + std::to_string(p.y) + " " + std::to_string(p.z) + "\n";
    } else {
      for (int c = 0; c < 3; ++c) put(&p[c], 4);
    }
  }
  for (const glm::uvec3& t : mesh.triangles) {
    if (format == "ascii") {
      out += "3 " + std::to_string(t.x) + " " + std::to_string(t.y) + " " + std::to_string(t.z) + "\n";
    } else {
      out += char(3);
      for (int c = 0; c < 3; ++c) {
        const std::int32_t index = std::int32_t(t[c]);
        put(&index, 4);
      }
    }
  }
  return out;
}

// Loads `file`: it must load, or be refused with one line that names it.
void expectLoadedOrRefused(const fs::path& file, std::size_t& refused) {
  try {
    scene::loadScene(file);
  } catch (const Error& e) {
    const std::string message = e.what();
    INFO(message);
    CHECK(message.find(file.string()) != std::string::npos);
    CHECK(std::none_of(message.begin(), message.end(), [](char c) { return static_cast<unsigned char>(c) < 0x20; }));
    ++refused;
  }
}

}  // namespace

TEST_CASE("malformed PLY files are refused before Assimp reads them, naming the file and the fault", "[scene][errors]") {
  const fs::path folder = test::outputDir("ply_faults");
  const std::string header = "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nproperty float y\n"
                             "property float z\nelement face 1\nproperty list uchar int vertex_indices\nend_header\n";
  struct Case {
    std::string name, contents, expected;
  };
  const std::string binary = cornellPly("binary_little_endian");
  const Case cases[] = {
      {"cut_header.ply", header.substr(0, 50), "no end_header"},  // Assimp looped on it
      {"empty.ply", "", "no end_header"},  // memchr of a null pointer (UBSan, tests/fuzz/fuzz_mesh)
      {"vertex_twice.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty float x\nelement vertex 1\n"
                           "property float x\nend_header\n0\n0\n", "declared twice"},  // a bad free in Assimp
      {"index_out_of_range.ply", header + "0 0 0\n1 0 0\n0 1 0\n3 0 1 7\n", "vertex index 7"},  // segfault
      {"short_body.ply", binary.substr(0, binary.size() - 30), "ends before"},  // read past the end
      {"cut_after_header.ply", header, "more than the file"},  // aborted in triangulation
      // Every value there, but on fewer lines than items: Assimp reads an item a line, ran out of lines
      // and aborted in triangulation (found by tests/fuzz/fuzz_mesh).
      {"values_on_one_line.ply", header + "0 0 0 1 0 0 0 1 0 3 0 1 2\n", "ends before"},
      {"item_over_two_lines.ply", header + "0 0\n0\n1 0 0\n0 1 0\n3 0 1 2\n", "line ends before"},
      {"nul_in_a_line.ply", header + "0 0 0\n1 0 0\n0 1 0 " + std::string(1, '\0') + "\n3 0 1 2\n", "a \\0 or \\f"},
      {"two_vertex_face.ply", header + "0 0 0\n1 0 0\n0 1 0\n2 0 1\n", "at least 3"},
      {"negative_list.ply", header + "0 0 0\n1 0 0\n0 1 0\n-3 0 1 2\n", "a list of"},
      {"huge_count.ply", "ply\nformat ascii 1.0\nelement vertex 2000000000\nproperty float x\nend_header\n1\n",
       "more than the file"},
      // Beyond 64 bits: read as 0 (an empty element), and Assimp allocated 15 GB (found by tests/fuzz/fuzz_mesh).
      {"count_beyond_64_bits.ply",
       "ply\nformat ascii 1.0\nelement vertex 3\nproperty float x\nelement face " + std::string(40, '8') +
           "\nproperty list uchar int vertex_indices\nend_header\n0\n1\n2\n",
       "header line 5"},
      {"index_beyond_64_bits.ply", header + "0 0 0\n1 0 0\n0 1 0\n3 0 1 " + std::string(30, '9') + "\n",
       "is not a number"},
      {"not_a_number.ply", header + "0 0 0\n1 zero 0\n0 1 0\n3 0 1 2\n", "'zero' is not a number"},
      {"unknown_type.ply", "ply\nformat ascii 1.0\nelement vertex 1\nproperty quad x\nend_header\n1\n", "header line 4"},
  };
  for (const Case& c : cases) {
    test::writeText(folder / c.name, c.contents);
    CHECK_THROWS_WITH(scene::loadScene(folder / c.name), Contains(c.name) && Contains(c.expected));
  }
  // The well-formed files of every encoding load.
  for (const char* format : {"ascii", "binary_little_endian", "binary_big_endian"}) {
    INFO(format);
    test::writeText(folder / (std::string(format) + ".ply"), cornellPly(format));
    CHECK(scene::loadScene(folder / (std::string(format) + ".ply")).triangleCount() ==
          scene::loadScene(test::sceneDir() / "cornell.json").triangleCount());
  }
}

// Found by tests/fuzz/fuzz_mesh: Assimp 5.2.5 reads \0, \f and \r as line ends and mishandles them inside a
// line; an MTL "d" followed by one made it follow a null material (a segfault).
TEST_CASE("OBJ and MTL files with a NUL, a form feed or a lone CR are kept from Assimp", "[scene][errors]") {
  const fs::path folder = test::outputDir("obj_line_ends");
  test::writeText(folder / "old_mac.obj", "v 0 0 0\rv 1 0 0\rv 0 1 0\rf 1 2 3\r");
  CHECK_THROWS_WITH(scene::loadScene(folder / "old_mac.obj"), Contains("old_mac.obj") && Contains("without \\n"));
  test::writeText(folder / "odd.mtl", "# a material line cut by a lone CR\nd\ra0.54\n");
  test::writeText(folder / "uses_odd.obj", "mtllib odd.mtl\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  CHECK(scene::loadScene(folder / "uses_odd.obj").triangleCount() == 1);  // default materials
  test::writeText(folder / "windows.obj", "v 0 0 0\r\nv 1 0 0\r\nv 0 1 0\r\nf 1 2 3\r\n");
  CHECK(scene::loadScene(folder / "windows.obj").triangleCount() == 1);
}

// Found by tests/fuzz/fuzz_mesh: Assimp 5.2.5 follows a null material for a statement (map_Kd, s, ...)
// before an MTL's first newmtl (a segfault), and allocates a GLB chunk's claimed length (4 GB) first.
TEST_CASE("an MTL statement before newmtl and a GLB chunk past the end are kept from Assimp", "[scene][errors]") {
  const fs::path folder = test::outputDir("assimp_faults");
  for (const char* early : {"map_Kd foo.png", "s 1"}) {
    test::writeText(folder / "early.mtl", std::string("# a comment\r\n\r\n") + early + "\nnewmtl m\nKd 1 0 0\n");
    test::writeText(folder / "early.obj", "mtllib early.mtl\nusemtl m\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
    const scene::Scene scene = scene::loadScene(folder / "early.obj");  // default materials
    CHECK(scene.materials.at(scene.meshes[0].triangleMaterials[0]).albedo != glm::vec3(1, 0, 0));
  }
  // An OBJ that names itself as its MTL file, which Assimp then read as one (found by tests/fuzz/fuzz_mesh).
  test::writeText(folder / "itself.obj", "mtllib itself.obj\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  CHECK_THROWS_WITH(scene::loadScene(folder / "itself.obj"), Contains("itself.obj") && Contains("names itself"));
  test::writeText(folder / "fine.mtl", "# a comment\r\n\r\nnewmtl m\r\nKd 1 0 0\r\nmap_Kd missing.png\r\n");
  test::writeText(folder / "fine.obj", "mtllib fine.mtl\nusemtl m\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  const scene::Scene fine = scene::loadScene(folder / "fine.obj");
  CHECK(fine.materials.at(fine.meshes[0].triangleMaterials[0]).albedo == glm::vec3(1, 0, 0));
  std::string glb = "glTF";
  for (const std::uint32_t word : {2u, 20u, 0xf9ff01ecu, 0x4e4f534au})  // version, length, chunk length, "JSON"
    glb.append(reinterpret_cast<const char*>(&word), 4);
  test::writeText(folder / "long_chunk.glb", glb);
  CHECK_THROWS_WITH(scene::loadScene(folder / "long_chunk.glb"),
                    Contains("long_chunk.glb") && Contains("past the end"));
}

// Found by tests/fuzz/fuzz_mesh: Assimp tried every reader on a .gltf its glTF reader refused, read it as an
// OBJ, and that OBJ's MTL (another file, checked by none of the MTL rules) made it follow a null material.
TEST_CASE("a .gltf, .glb, .ply or .obj file is read by its own format's reader only", "[scene][errors]") {
  const fs::path folder = test::outputDir("own_reader");
  test::writeText(folder / "other.obj", "s\na\r\n");
  test::writeText(folder / "not_gltf.gltf", "mtllib other.obj\nv 0 0 0\nv 1 0 0\nv 0 1 0\nf 1 2 3\n");
  CHECK_THROWS_WITH(scene::loadScene(folder / "not_gltf.gltf"), Contains("not_gltf.gltf") && Contains("cannot read"));
}

// Found by tests/fuzz/fuzz_mesh with stb_image instrumented: Debian 12's stb_image reads past its buffer
// when it converts a binary PNM of more than 8 bits a channel (maxval above 255) to 8 bits.
TEST_CASE("a PNM texture of more than 8 bits a channel is not decoded, one of 8 bits is", "[scene][errors]") {
  const fs::path folder = test::outputDir("pnm_textures");
  test::writeText(folder / "wide.pgm", std::string("P5\n2 2\n65535\n") + std::string(8, '\x7f'));
  test::writeText(folder / "narrow.pgm", std::string("P5\n2 2\n255\n") + std::string(4, '\x7f'));
  for (const char* texture : {"wide.pgm", "narrow.pgm"}) {
    INFO(texture);
    test::writeText(folder / "textured.mtl", std::string("newmtl m\nKd 1 1 1\nmap_Kd ") + texture + "\n");
    test::writeText(folder / "textured.obj", "mtllib textured.mtl\nusemtl m\nv 0 0 0\nv 1 0 0\nv 0 1 0\n"
                                             "vt 0 0\nvt 1 0\nvt 0 1\nf 1/1 2/2 3/3\n");
    CHECK(scene::loadScene(folder / "textured.obj").textures.size() == (texture == std::string("wide.pgm") ? 0u : 1u));
  }
}

TEST_CASE("2,000 mutated PLY files each load or are refused with one line naming the file", "[scene][errors]") {
  // Mutations as a careless copy or a fuzzer makes them, from a fixed seed: bytes flipped, the file cut,
  // a header count changed, a line dropped. Before ply_check, 10% of such files crashed or hung inside Assimp.
  std::vector<std::string> bases = {cornellPly("ascii"), cornellPly("binary_little_endian"),
                                    cornellPly("binary_big_endian")};
  if (const fs::path bunny = test::sharedScenesDir() / "bunny" / "bun_zipper_res4.ply"; fs::exists(bunny))
    bases.push_back(test::readText(bunny));
  const fs::path folder = test::outputDir("ply_mutations");
  std::mt19937 random(20261125u);
  auto uniform = [&](std::size_t n) { return std::size_t(random() % std::max<std::size_t>(n, 1)); };
  std::size_t refused = 0;
  constexpr int kFiles = 2000;
  for (int k = 0; k < kFiles; ++k) {
    std::string bytes = bases[std::size_t(k) % bases.size()];
    switch (uniform(4)) {
      case 0:  // flip 1 to 8 bytes
        for (std::size_t n = 1 + uniform(8); n > 0; --n) bytes[uniform(bytes.size())] ^= char(1 + uniform(255));
        break;
      case 1:  // cut the file anywhere
        bytes.resize(uniform(bytes.size()));
        break;
      case 2: {  // change one header count
        const std::size_t at = bytes.find(uniform(2) ? "element face " : "element vertex ");
        if (at == std::string::npos) break;
        const std::size_t digits = bytes.find_first_of("0123456789", at);
        const std::size_t end = bytes.find('\n', digits);
        const char* counts[] = {"0", "1", "4294967295", "-1", "99999999", "3"};
        bytes.replace(digits, end - digits, counts[uniform(6)]);
        break;
      }
      default: {  // drop one line
        const std::size_t at = uniform(bytes.size());
        const std::size_t begin = bytes.rfind('\n', at), end = bytes.find('\n', at);
        if (begin != std::string::npos && end != std::string::npos) bytes.erase(begin, end - begin);
        break;
      }
    }
    const fs::path file = folder / ("mutant_" + std::to_string(k) + ".ply");
    test::writeText(file, bytes);
    expectLoadedOrRefused(file, refused);
  }
  INFO(refused << " of " << kFiles << " refused");
  CHECK(refused > kFiles / 4);  // the mutations do break files: the loader sees both kinds
  CHECK(refused < kFiles);
}
