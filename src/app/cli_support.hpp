#pragma once
// Helpers shared by the subcommands: option parsing for common types and scene loading with the
// standard messages.
#include "scene/scene.hpp"

#include <CLI/CLI.hpp>

#include <filesystem>
#include <string>

namespace ibrr::app {

// Parses "WxH" (e.g. 512x512); throws ibrr::Error naming the flag on a malformed value.
scene::ImageSize parseImageSize(const std::string& text, const std::string& flag = "--size");

// Resolves a scene argument (path or built-in name) and loads it, printing a one-line summary.
scene::Scene loadSceneArgument(const std::string& argument);

// Adds the SCENE positional argument (required) with the standard help text.
CLI::Option* addSceneArgument(CLI::App& command, std::string& scene);

}  // namespace ibrr::app
