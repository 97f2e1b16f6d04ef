#pragma once
// Screenshots of the viewer: the current view's linear radiance as EXR (for measurement) and as a
// tone-mapped PNG (for people), under one file stem that neither file has yet. Files are written
// under a temporary name and renamed (writeImage), so a failure leaves nothing behind.
#include "util/image.hpp"

#include <filesystem>
#include <string>

namespace ibrr::viewer {

struct SavedScreenshot {
  std::filesystem::path png;
  std::filesystem::path exr;
};

// "ibrr-view-20261122-114502": local date and time to the second.
std::string timestampedScreenshotName();

// folder/base, or folder/base-1, base-2, ...: the first stem for which neither STEM.png nor
// STEM.exr exists, so that no screenshot ever replaces an earlier file.
std::filesystem::path unusedScreenshotStem(const std::filesystem::path& folder, const std::string& base);

SavedScreenshot saveScreenshot(const Image& image, const std::filesystem::path& folder,
                               const std::string& base, const ToneMapping& tone);

}  // namespace ibrr::viewer
