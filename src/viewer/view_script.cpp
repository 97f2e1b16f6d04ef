#include "viewer/view_script.hpp"

#include "ibrr/ldc.hpp"
#include "util/input_file.hpp"
#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <limits>
#include <set>

namespace ibrr::viewer {
namespace {

using nlohmann::json;

class ScriptReader {
public:
  explicit ScriptReader(std::filesystem::path path) : m_path(std::move(path)) {}

  [[noreturn]] void fail(const std::string& key, const std::string& what) const {
    throw Error(m_path.string() + ": " + (key.empty() ? "" : key + ": ") + what);
  }

  void refuseUnknownKeys(const json& object, const std::string& where, const std::set<std::string>& known) const {
    if (!object.is_object()) fail(where, "expected an object { ... }");
    for (const auto& [key, value] : object.items())
      if (!known.count(key)) {
        std::string list;
        for (const std::string& name : known) list += (list.empty() ? "" : ", ") + name;
        fail(where.empty() ? key : where + "." + key, "unknown key; known keys: " + list);
      }
  }

  int frame(const json& object, const std::string& where) const {
    const auto it = object.find("frame");
    if (it == object.end() || !it->is_number_integer() || it->get<long long>() < 0 || it->get<long long>() > 10'000'000)
      fail(where + ".frame", "required: a frame number ≥ 0");
    return it->get<int>();
  }

  // Within ±1e9 (scene::kMaxCoordinate), as a manifest's numbers: 1e39 is a finite double but an infinite float.
  glm::vec3 vector3(const json& value, const std::string& key) const {
    if (!value.is_array() || value.size() != 3 || !std::all_of(value.begin(), value.end(), [](const json& v) {
          return v.is_number() && std::fabs(v.get<double>()) <= scene::kMaxCoordinate;
        }))
      fail(key, "expected [x, y, z] (three finite numbers within ±1e9)");
    return {value[0].get<float>(), value[1].get<float>(), value[2].get<float>()};
  }

  std::string text(const json& value, const std::string& key) const {
    if (!value.is_string()) fail(key, "expected a string");
    return value.get<std::string>();
  }

private:
  std::filesystem::path m_path;
};

}  // namespace

std::optional<scene::Camera> ViewScript::cameraAt(int frame) const {
  if (keyframes.empty()) return std::nullopt;
  if (frame <= keyframes.front().frame) return keyframes.front().camera;
  if (frame >= keyframes.back().frame) return keyframes.back().camera;
  const auto next = std::upper_bound(keyframes.begin(), keyframes.end(), frame,
                                     [](int f, const ScriptKeyframe& key) { return f < key.frame; });
  const ScriptKeyframe& a = *(next - 1);
  const ScriptKeyframe& b = *next;
  if (frame == a.frame) return a.camera;  // exact, not interpolated
  const float t = float(frame - a.frame) / float(b.frame - a.frame);
  scene::Camera camera = a.camera;
  camera.name = "script";
  camera.eye = glm::mix(a.camera.eye, b.camera.eye, t);
  camera.target = glm::mix(a.camera.target, b.camera.target, t);
  camera.verticalFovDegrees = glm::mix(a.camera.verticalFovDegrees, b.camera.verticalFovDegrees, t);
  return camera;
}

int ViewScript::lastFrame() const {
  int last = 0;
  for (const ScriptKeyframe& key : keyframes) last = std::max(last, key.frame);
  for (const ScriptScreenshot& shot : screenshots) last = std::max(last, shot.frame);
  for (const ScriptLightMove& move : lightMoves) last = std::max(last, move.frame);
  return last;
}

ViewScript loadViewScript(const std::filesystem::path& path, const scene::Scene& scene) {
  const ScriptReader reader(path);
  requireRegularFile(path, "view script");
  std::ifstream in(path);
  if (!in) throw Error(path.string() + ": cannot read the script (missing or unreadable file)");
  json root;
  try {
    root = json::parse(in);
  } catch (const json::exception& error) {  // a syntax error, or a number beyond a double's range ("1e999")
    throw Error(path.string() + ": not valid JSON: " + error.what());
  }
  reader.refuseUnknownKeys(root, "", {"keyframes", "screenshots", "lights"});

  ViewScript script;
  const scene::Camera* previous = &scene.camera("");
  if (root.contains("keyframes")) {
    const json& keys = root["keyframes"];
    if (!keys.is_array()) reader.fail("keyframes", "expected a list of keyframes");
    for (std::size_t i = 0; i < keys.size(); ++i) {
      const std::string where = "keyframes[" + std::to_string(i) + "]";
      const json& key = keys[i];
      reader.refuseUnknownKeys(key, where, {"frame", "camera", "eye", "target", "direction", "fov"});
      ScriptKeyframe keyframe;
      keyframe.frame = reader.frame(key, where);
      if (!script.keyframes.empty() && keyframe.frame <= script.keyframes.back().frame)
        reader.fail(where + ".frame", "keyframes must have increasing frame numbers");
      if (key.contains("camera")) {
        try {
          keyframe.camera = scene.camera(reader.text(key["camera"], where + ".camera"));
        } catch (const Error& error) {
          reader.fail(where + ".camera", error.what());
        }
      } else {
        keyframe.camera = *previous;
      }
      if (key.contains("eye")) keyframe.camera.eye = reader.vector3(key["eye"], where + ".eye");
      if (key.contains("target") && key.contains("direction")) reader.fail(where, "give target or direction, not both");
      if (key.contains("target")) keyframe.camera.target = reader.vector3(key["target"], where + ".target");
      if (key.contains("direction"))
        keyframe.camera.target = keyframe.camera.eye + reader.vector3(key["direction"], where + ".direction");
      if (key.contains("fov")) {
        if (!key["fov"].is_number() || !(key["fov"].get<float>() > 0.0f && key["fov"].get<float>() < 180.0f))
          reader.fail(where + ".fov", "expected a vertical field of view in (0, 180) degrees");
        keyframe.camera.verticalFovDegrees = key["fov"].get<float>();
      }
      if (!(glm::length(glm::cross(keyframe.camera.target - keyframe.camera.eye, keyframe.camera.up)) > 0.0f))
        reader.fail(where, "the view direction must not be zero or parallel to the camera's up vector");
      if (key.contains("eye") || key.contains("target") || key.contains("direction") || key.contains("fov"))
        keyframe.camera.name = "script";
      script.keyframes.push_back(std::move(keyframe));
      previous = &script.keyframes.back().camera;
    }
  }
  if (root.contains("screenshots")) {
    const json& shots = root["screenshots"];
    if (!shots.is_array()) reader.fail("screenshots", "expected a list of screenshots");
    for (std::size_t i = 0; i < shots.size(); ++i) {
      const std::string where = "screenshots[" + std::to_string(i) + "]";
      const json& entry = shots[i];
      reader.refuseUnknownKeys(entry, where, {"frame", "name", "method", "filter", "window"});
      ScriptScreenshot shot;
      shot.frame = reader.frame(entry, where);
      if (entry.contains("name")) {
        shot.name = reader.text(entry["name"], where + ".name");
        if (shot.name.empty() || shot.name.find_first_of("/\\") != std::string::npos)
          reader.fail(where + ".name", "expected a file stem without folders (the folder is --screenshot-dir)");
      }
      if (entry.contains("method")) shot.method = reader.text(entry["method"], where + ".method");
      if (entry.contains("filter")) {
        shot.filter = reader.text(entry["filter"], where + ".filter");
        if (!retrievalFilterNamed(shot.filter))
          reader.fail(where + ".filter", "choose none, box or bilinear");
      }
      if (entry.contains("window")) {
        if (!entry["window"].is_boolean()) reader.fail(where + ".window", "expected true or false");
        shot.window = entry["window"].get<bool>();
      }
      script.screenshots.push_back(std::move(shot));
    }
  }
  if (root.contains("lights")) {
    const json& moves = root["lights"];
    if (!moves.is_array()) reader.fail("lights", "expected a list of light moves");
    for (std::size_t i = 0; i < moves.size(); ++i) {
      const std::string where = "lights[" + std::to_string(i) + "]";
      const json& entry = moves[i];
      reader.refuseUnknownKeys(entry, where, {"frame", "light", "offset"});
      ScriptLightMove move;
      move.frame = reader.frame(entry, where);
      // Read as 64 bits first: get<int>() wraps 4294967296 to light 0.
      if (!entry.contains("light") || !entry["light"].is_number_integer() || entry["light"].get<long long>() < 0 ||
          entry["light"].get<long long>() > std::numeric_limits<int>::max())
        reader.fail(where + ".light", "expected a light index ≥ 0 (as 'ibrr bake --method matrix' lists them)");
      move.light = entry["light"].get<int>();
      if (!entry.contains("offset")) reader.fail(where + ".offset", "missing (a translation [x, y, z])");
      move.offset = reader.vector3(entry["offset"], where + ".offset");
      script.lightMoves.push_back(move);
    }
  }
  return script;
}

}  // namespace ibrr::viewer
