#pragma once
// Loading scenes: a JSON manifest (see scenes/README.md for the format) or a bare mesh file
// (OBJ/MTL, PLY, glTF 2.0, anything Assimp reads).
#include "scene/scene.hpp"

#include <filesystem>

namespace ibrr::scene {

// Loads a manifest (.json) or a bare mesh and finalizes it. Throws ibrr::Error with the file
// (and key or line) and what to do on any problem.
Scene loadScene(const std::filesystem::path& path);

// Resolves a scene argument: an existing path, or the name of a built-in scene ("cornell",
// "furnace") looked up in the built-in scene folder.
std::filesystem::path resolveScenePath(const std::string& argument);

// The folder of the built-in scenes (IBRR_SCENE_DIR in the environment overrides the built-in path).
std::filesystem::path builtinSceneFolder();

}  // namespace ibrr::scene
