#pragma once
// Scripted viewer runs (tests, demos, benchmarks): camera keyframes and screenshots at given
// frames, read from a JSON file:
//
//   { "keyframes":   [ { "frame": 0, "camera": "cornell" },
//                      { "frame": 199, "eye": [100, 300, -200], "target": [278, 200, 300], "fov": 60 } ],
//     "screenshots": [ { "frame": 0, "name": "front" },
//                      { "frame": 50, "name": "walk", "method": "albedo", "filter": "box" },
//                      { "frame": 60, "name": "ui", "window": true } ],
//     "lights":      [ { "frame": 10, "light": 0, "offset": [50, 0, 0] } ] }
//
// A keyframe starts from the named camera (else the previous keyframe's, else the scene's first)
// and overrides eye, target (or direction) and fov (vertical, degrees). Between keyframes eye,
// target and fov are interpolated linearly in the frame number; before the first and after the
// last the camera holds. At a keyframe's frame its camera is used as is, so a screenshot there
// matches `ibrr render` of the same camera. A "lights" entry sets a light's translation (scene
// units, from its baked place) from its frame on, as the arrow keys do: with --matrix FILE the
// lightmap is relit before that frame is drawn (`ibrr render --matrix FILE --move-light L:X,Y,Z`).
// A screenshot with "window": true saves what the window shows, overlay included, as NAME.png
// only (display values, no radiance to put in an EXR).
#include "scene/scene.hpp"

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

namespace ibrr::viewer {

struct ScriptKeyframe {
  int frame = 0;
  scene::Camera camera;  // fully resolved
};

struct ScriptScreenshot {
  int frame = 0;
  std::string name;    // file stem: NAME.png and NAME.exr (NAME-1, NAME-2, ... if taken)
  std::string method;  // display method to switch to first ("" = keep the current one)
  std::string filter;  // IBRR filter to switch to first: none, box, bilinear ("" = keep)
  bool window = false;  // the window as shown (overlay included) as NAME.png, instead of the view's PNG + EXR
};

struct ScriptLightMove {
  int frame = 0;
  int light = 0;             // index into lightmap::matrixLights(scene)
  glm::vec3 offset{0.0f};   // translation from the baked place, scene units
};

struct ViewScript {
  std::vector<ScriptKeyframe> keyframes;      // strictly increasing frames
  std::vector<ScriptScreenshot> screenshots;  // in file order
  std::vector<ScriptLightMove> lightMoves;    // in file order

  // The camera at a frame, or nullopt when the script has no keyframes.
  [[nodiscard]] std::optional<scene::Camera> cameraAt(int frame) const;
  // The last frame the script refers to (0 when empty).
  [[nodiscard]] int lastFrame() const;
};

// Reads and checks a script against the scene (camera names). Throws ibrr::Error naming the file
// and the key (e.g. "keyframes[1].eye") for a malformed or unknown entry.
ViewScript loadViewScript(const std::filesystem::path& path, const scene::Scene& scene);

}  // namespace ibrr::viewer
