#include "test_support.hpp"

#include <catch2/catch.hpp>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <memory>
#include <sstream>

#include <unistd.h>

namespace ibrr::test {

namespace fs = std::filesystem;

fs::path sourceDir() { return IBRR_SOURCE_DIR; }
fs::path sceneDir() { return sourceDir() / "scenes"; }
fs::path sharedScenesDir() { return sourceDir() / ".." / "shared" / "scenes"; }

fs::path outputDir(const std::string& testName) {
  std::string safe = testName;
  for (char& c : safe)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  const fs::path folder = fs::path(IBRR_TEST_OUTPUT_DIR) / safe;
  fs::remove_all(folder);
  fs::create_directories(folder);
  return folder;
}

gpu::Context& glContext() {
  static std::unique_ptr<gpu::Context> context = gpu::createHeadlessContext();
  context->makeCurrent();
  return *context;
}

void writeText(const fs::path& path, const std::string& text) {
  std::ofstream out(path, std::ios::binary);
  out << text;
}

std::string readText(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

std::string shellQuote(const std::string& text) {
  std::string quoted = "'";
  for (char c : text) quoted += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return quoted + "'";
}

CommandResult runIbrr(const std::vector<std::string>& arguments, const std::vector<std::string>& environment) {
  static int counter = 0;
  const fs::path folder = fs::path(IBRR_TEST_OUTPUT_DIR) / "commands";
  fs::create_directories(folder);
  // Named by process and call: CTest runs test cases as parallel processes sharing this folder.
  const std::string id = std::to_string(getpid()) + "_" + std::to_string(counter++);
  const fs::path outPath = folder / ("out" + id + ".txt");
  const fs::path errPath = folder / ("err" + id + ".txt");
  std::string command = "env";
  for (const std::string& variable : environment) command += " " + shellQuote(variable);
  command += " " + shellQuote(IBRR_EXECUTABLE);
  for (const std::string& argument : arguments) command += " " + shellQuote(argument);
  command += " >" + shellQuote(outPath.string()) + " 2>" + shellQuote(errPath.string()) + " </dev/null";
  const int status = std::system(command.c_str());
  CommandResult result;
  result.exitCode = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  result.out = readText(outPath);
  result.err = readText(errPath);
  return result;
}

ImageComparison compareImages(const Image& actual, const Image& expected, float absoluteTolerance,
                              double allowedMismatch, const fs::path& folder, const std::string& name) {
  ImageComparison comparison;
  if (actual.width != expected.width || actual.height != expected.height) {
    comparison.report = "size differs: actual " + std::to_string(actual.width) + "x" + std::to_string(actual.height) +
                        ", expected " + std::to_string(expected.width) + "x" + std::to_string(expected.height);
    return comparison;
  }
  Image difference(actual.width, actual.height);
  std::size_t mismatches = 0;
  for (std::size_t i = 0; i < actual.pixels.size(); ++i) {
    const glm::vec3 delta = glm::abs(actual.pixels[i] - expected.pixels[i]);
    difference.pixels[i] = delta;
    if (glm::any(glm::greaterThan(delta, glm::vec3(absoluteTolerance))) || glm::any(glm::isnan(actual.pixels[i])))
      ++mismatches;
  }
  comparison.mismatchFraction = double(mismatches) / double(actual.pixels.size());
  comparison.passed = comparison.mismatchFraction <= allowedMismatch;
  std::ostringstream report;
  report << name << ": " << mismatches << " of " << actual.pixels.size() << " pixels differ by more than "
         << absoluteTolerance << " (" << 100.0 * comparison.mismatchFraction << "%, allowed " << 100.0 * allowedMismatch
         << "%)";
  if (!comparison.passed) {
    for (const char* extension : {".png", ".exr"}) {
      writeImage(actual, folder / (name + "_actual" + extension));
      writeImage(expected, folder / (name + "_expected" + extension));
      writeImage(difference, folder / (name + "_difference" + extension));
    }
    report << "; wrote " << (folder / (name + "_{actual,expected,difference}.{png,exr}")).string();
  }
  comparison.report = report.str();
  return comparison;
}

Image rayCast(const scene::Scene& scene, const scene::Camera& camera, int width, int height,
                       CastProperty property) {
  struct WorldTriangle {
    glm::vec3 a, b, c;
    glm::vec3 albedo;
    glm::vec3 emission;
  };
  std::vector<WorldTriangle> triangles;
  for (const scene::MeshInstance& instance : scene.instances) {
    const scene::TriangleMesh& mesh = scene.meshes[instance.mesh];
    for (std::size_t t = 0; t < mesh.triangles.size(); ++t) {
      auto world = [&](unsigned v) { return glm::vec3(instance.objectToWorld * glm::vec4(mesh.positions[v], 1.0f)); };
      triangles.push_back({world(mesh.triangles[t].x), world(mesh.triangles[t].y), world(mesh.triangles[t].z),
                           scene.materials[mesh.triangleMaterials[t]].albedo,
                           scene.materials[mesh.triangleMaterials[t]].emission});
    }
  }
  const glm::vec3 forward = glm::normalize(camera.target - camera.eye);
  const glm::vec3 right = glm::normalize(glm::cross(forward, camera.up));
  const glm::vec3 up = glm::cross(right, forward);
  const float tanHalf = std::tan(glm::radians(camera.verticalFovDegrees) * 0.5f);
  const float aspect = float(width) / float(height);
  Image image(width, height);
  for (int y = 0; y < height; ++y) {
    for (int x = 0; x < width; ++x) {
      // Pixel centre in normalised device coordinates; row 0 is the top.
      const float u = (2.0f * (float(x) + 0.5f) / float(width) - 1.0f) * tanHalf * aspect;
      const float v = (1.0f - 2.0f * (float(y) + 0.5f) / float(height)) * tanHalf;
      const glm::vec3 direction = glm::normalize(forward + u * right + v * up);
      float nearest = std::numeric_limits<float>::max();
      glm::vec3 value(0.0f);
      for (const WorldTriangle& triangle : triangles) {
        // Möller–Trumbore.
        const glm::vec3 e1 = triangle.b - triangle.a, e2 = triangle.c - triangle.a;
        const glm::vec3 p = glm::cross(direction, e2);
        const float determinant = glm::dot(e1, p);
        if (std::abs(determinant) < 1e-12f) continue;
        const glm::vec3 s = camera.eye - triangle.a;
        const float b1 = glm::dot(s, p) / determinant;
        if (b1 < 0.0f || b1 > 1.0f) continue;
        const glm::vec3 q = glm::cross(s, e1);
        const float b2 = glm::dot(direction, q) / determinant;
        if (b2 < 0.0f || b1 + b2 > 1.0f) continue;
        const float distance = glm::dot(e2, q) / determinant;
        if (distance > 0.0f && distance < nearest) {
          nearest = distance;
          const bool frontFace = determinant < 0.0f;  // the ray meets the counter-clockwise side
          value =
              property == CastProperty::Albedo ? triangle.albedo : (frontFace ? triangle.emission : glm::vec3(0.0f));
        }
      }
      image.at(x, y) = value;
    }
  }
  return image;
}

void checkRefusedByName(const std::filesystem::path& folder, const std::vector<RefusedCommand>& commands) {
  for (const RefusedCommand& command : commands) {
    const CommandResult result = runIbrr(command.arguments);
    INFO(command.named << ": " << result.err);
    CHECK(result.exitCode != 0);
    CHECK_THAT(result.err, Catch::Contains(command.named));
  }
  CHECK(std::filesystem::is_empty(folder));  // nothing written
}

void checkInterruptedCleanly(const std::filesystem::path& folder, const std::string& arguments, double seconds) {
  const std::string command = "cd " + folder.string() + " && (" + std::string(IBRR_EXECUTABLE) + " " + arguments +
                              " >out.txt 2>err.txt & pid=$!; sleep " + std::to_string(seconds) +
                              "; kill -INT $pid; wait $pid; echo $? > code.txt)";
  REQUIRE(std::system(command.c_str()) == 0);
  CHECK(readText(folder / "code.txt") == "130\n");
  CHECK_THAT(readText(folder / "err.txt"), Catch::Contains("interrupted") && Catch::Contains("nothing was written"));
  for (const auto& entry : std::filesystem::directory_iterator(folder))
    CHECK(entry.path().extension() == ".txt");  // no output or temporary file beside the logs
}

}  // namespace ibrr::test
