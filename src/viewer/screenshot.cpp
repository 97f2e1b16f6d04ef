#include "viewer/screenshot.hpp"

#include <ctime>

namespace ibrr::viewer {

std::string timestampedScreenshotName() {
  const std::time_t now = std::time(nullptr);
  std::tm local{};
  localtime_r(&now, &local);
  char text[64];
  std::strftime(text, sizeof text, "ibrr-view-%Y%m%d-%H%M%S", &local);
  return text;
}

std::filesystem::path unusedScreenshotStem(const std::filesystem::path& folder, const std::string& base) {
  for (int counter = 0;; ++counter) {
    const std::filesystem::path stem = folder / (counter == 0 ? base : base + "-" + std::to_string(counter));
    std::error_code ignored;
    if (!std::filesystem::exists(stem.string() + ".png", ignored) &&
        !std::filesystem::exists(stem.string() + ".exr", ignored))
      return stem;
  }
}

SavedScreenshot saveScreenshot(const Image& image, const std::filesystem::path& folder,
                               const std::string& base, const ToneMapping& tone) {
  const std::filesystem::path stem = unusedScreenshotStem(folder, base);
  SavedScreenshot saved{stem.string() + ".png", stem.string() + ".exr"};
  OutputSet outputs;  // the linear EXR and the PNG are written both or neither
  stageImage(outputs, image, saved.exr);
  stageImage(outputs, image, saved.png, tone);
  outputs.commit();
  return saved;
}

}  // namespace ibrr::viewer
