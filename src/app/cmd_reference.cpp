// `ibrr reference SCENE [--camera NAME] [--size WxH] [--spp N | --time SECONDS] -o ref.exr`: the
// ground-truth path tracer. Writes the linear image as EXR and PFM, a PNG for people, the per-pixel
// variance of the estimate (STEM.variance.exr, for error bars) and the settings used (STEM.json). Under mpirun
// the ranks split the image's tiles (cluster/distributed_reference.hpp) and rank 0 writes the same files.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "cluster/distributed_reference.hpp"
#include "rays/embree_scene.hpp"
#include "rays/reference.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/image.hpp"
#include "util/log.hpp"
#include "util/progress.hpp"

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <memory>

namespace ibrr::app {
namespace {

constexpr std::uint32_t kDefaultSpp = 256;  // when neither --spp nor --time is given

struct ReferenceCommandOptions {
  std::string scene;
  std::string camera;
  std::string size;
  std::uint32_t spp = 0;
  double seconds = 0.0;
  std::uint32_t seed = 0;
  std::uint32_t maxDepth = 1024;
  std::string output;
  float exposure = 0.0f;
};

struct OutputFiles {
  std::filesystem::path exr, pfm, png, variance, settings;
};

OutputFiles outputFiles(const std::filesystem::path& output) {
  // Any of .exr/.pfm/.png names the set; the others are written beside it.
  (void)imageFormatFor(output);
  std::filesystem::path stem = output;
  stem.replace_extension();
  OutputFiles files;
  files.exr = stem.string() + ".exr";
  files.pfm = stem.string() + ".pfm";
  files.png = stem.string() + ".png";
  files.variance = stem.string() + ".variance.exr";
  files.settings = stem.string() + ".json";
  return files;
}

std::string jsonString(const std::string& text) {
  std::string quoted = "\"";
  for (char c : text) {
    if (c == '"' || c == '\\') quoted += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    quoted += c;
  }
  return quoted + "\"";
}

void runReference(const ReferenceCommandOptions& options) {
  const OutputFiles files = outputFiles(options.output);
  const scene::Scene scene = loadSceneArgument(options.scene);
  // After the scene's files are read and recorded, so that none of them is an output.
  for (const auto& path : {files.exr, files.pfm, files.png, files.variance}) checkOutputPath(path);
  checkOutputFile(files.settings);
  const scene::Camera& camera = scene.camera(options.camera);
  const scene::ImageSize size = options.size.empty() ? scene.defaultImageSize : parseImageSize(options.size);

  const rays::EmbreeScene embree(scene);
  verbose("Embree: " + std::to_string(embree.triangleCount()) + " triangles, BVH built in " +
          std::to_string(embree.buildSeconds() * 1e3) + " ms");
  rays::ReferenceOptions reference;
  reference.camera = camera.name;
  reference.width = size.width;
  reference.height = size.height;
  reference.spp = options.spp == 0 && options.seconds <= 0.0 ? kDefaultSpp : options.spp;
  reference.seconds = options.seconds;
  reference.seed = options.seed;
  reference.maxDepth = options.maxDepth;
  reference.showProgress = logLevel() != LogLevel::Quiet;

  cluster::Cluster& cluster = cluster::Cluster::world();
  cluster.agree();  // under mpirun: every rank has its scene and outputs checked
  const rays::ReferenceImage image = cluster.distributed()
                                         ? cluster::renderReferenceAcrossRanks(cluster, embree, reference)
                                         : rays::renderReference(embree, reference);
  if (!cluster.isRoot()) return;  // rank 0 writes the image of every rank

  ToneMapping tone;
  tone.exposureStops = options.exposure;
  OutputSet outputs;  // the five files are written all or none
  stageImage(outputs, image.radiance, files.exr);
  stageImage(outputs, image.radiance, files.pfm);
  stageImage(outputs, image.radiance, files.png, tone);
  stageImage(outputs, image.variance, files.variance);
  char fingerprint[32];
  std::snprintf(fingerprint, sizeof fingerprint, "%016llx", static_cast<unsigned long long>(scene.fingerprint()));
  char numbers[512];
  std::snprintf(numbers, sizeof numbers,
                "  \"width\": %d,\n  \"height\": %d,\n  \"spp\": %u,\n  \"seed\": %u,\n  \"maxDepth\": %u,\n"
                "  \"seconds\": %.3f,\n  \"rays\": %llu,\n  \"raysPerSecond\": %.0f,\n",
                size.width, size.height, image.spp, options.seed, options.maxDepth, image.seconds,
                static_cast<unsigned long long>(image.rayCount), image.raysPerSecond());
  const std::string json =
      "{\n  \"method\": \"reference\",\n  \"scene\": " + jsonString(scene.sourcePath.string()) +
      ",\n  \"sceneFingerprint\": \"" + fingerprint + "\",\n  \"camera\": " + jsonString(camera.name) + ",\n" +
      numbers + "  \"image\": " + jsonString(files.exr.filename().string()) +
      ",\n  \"variance\": " + jsonString(files.variance.filename().string()) +
      ",\n  \"varianceMeaning\": \"per pixel and channel, the estimated variance of the pixel value "
      "(from independent batches of 16 scrambled samples)\"\n}\n";
  outputs.stage(files.settings, [&](const std::filesystem::path& temporary) {
    std::ofstream out(temporary);
    out << json;
    if (!out) throw Error("could not write " + files.settings.string());
  });
  outputs.commit();
  std::printf("wrote %s, %s, %s, %s and %s (%dx%d, %u spp, camera %s, %.1f s, %.2f Mrays/s)\n",
              files.exr.string().c_str(), files.pfm.string().c_str(), files.png.string().c_str(),
              files.variance.string().c_str(), files.settings.string().c_str(), size.width, size.height, image.spp,
              camera.name.c_str(), image.seconds, image.raysPerSecond() * 1e-6);
}

}  // namespace

void addReferenceCommand(CLI::App& app) {
  auto options = std::make_shared<ReferenceCommandOptions>();
  CLI::App* command =
      app.add_subcommand("reference", "Render the ground truth with the CPU path tracer (Embree, NEE + MIS)");
  addSceneArgument(*command, options->scene);
  command->add_option("--camera", options->camera, "camera name from the manifest (default: the first)");
  command->add_option("--size", options->size, "image size WxH (default: the manifest's image size, else 512x512)");
  CLI::Option* spp = command->add_option("--spp", options->spp,
                                         "samples per pixel (default 256; multiples of 16 give the best error bars)");
  CLI::Option* time = command->add_option("--time", options->seconds,
                                          "render for this many seconds instead (with --spp: at most that many)");
  spp->check(CLI::Range(1u, 1u << 24));
  time->check(finiteNumber())->check(CLI::PositiveNumber);
  command->add_option("--seed", options->seed, "random seed; the same seed gives the same image")
      ->capture_default_str();
  command
      ->add_option("--max-depth", options->maxDepth,
                   "most reflections along a path (Russian roulette ends most sooner)")
      ->capture_default_str()
      ->check(CLI::Range(1u, 1000000u));
  command
      ->add_option("-o,--output", options->output,
                   "output: STEM.exr (or .pfm/.png); writes STEM.exr, STEM.pfm, STEM.png, STEM.variance.exr, STEM.json")
      ->required();
  command->add_option("--exposure", options->exposure, "PNG exposure in stops (value × 2^stops)")
      ->capture_default_str()
      ->check(finiteNumber());
  command->footer(
      "Examples:\n  ibrr reference cornell --size 256x256 --spp 1024 -o ref.exr\n"
      "  ibrr reference scenes/furnace.json --time 30 -o furnace.exr");
  command->callback([options] { runReference(*options); });
}

}  // namespace ibrr::app
