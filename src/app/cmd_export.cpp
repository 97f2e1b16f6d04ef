// `ibrr export SCENE (--store X.ibrr | --lightmap X.lightmap) -o OUT.glb [--html OUT.html]
// [--irradiance OUT.exr]`: the scene with its baked light as a binary glTF 2.0 file any glTF tool opens,
// and optionally a self-contained walkthrough page for a browser (export/scene_export.hpp; the format
// and how viewers show it: docs/export.md).
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "bake/bake.hpp"
#include "export/scene_export.hpp"
#include "gpu/context.hpp"
#include "lightmap/lightmap_file.hpp"
#include "util/atomic_file.hpp"
#include "util/error.hpp"
#include "util/log.hpp"
#include "util/stopwatch.hpp"

#include <cstdio>
#include <memory>

namespace ibrr::app {
namespace {

struct ExportOptions {
  std::string scene;
  std::string store;
  std::string lightmap;
  std::string output;
  std::string html;
  std::string irradiance;
  int atlasSize = exporter::kDefaultAtlasSize;
  float texelDensity = 0.0f;
  std::string filter = "bilinear";
  float exposure = 0.0f;
  std::string tone = "srgb";
};

void requireExtension(const std::string& path, const std::string& extension, const std::string& flag) {
  if (std::filesystem::path(path).extension() != extension)
    throw Error(flag + " " + path + ": give a file ending in " + extension);
}

// Fails on bad arguments before any work.
void checkExportArguments(const ExportOptions& options, const CLI::App& command) {
  if (options.store.empty() == options.lightmap.empty())
    throw Error("give the baked light: --store FILE.ibrr (from 'ibrr bake SCENE') or --lightmap FILE.lightmap "
                "(from 'ibrr bake SCENE --method gather'), one of the two");
  requireExtension(options.output, ".glb", "-o");
  checkOutputFile(options.output);
  if (!options.html.empty()) {
    requireExtension(options.html, ".html", "--html");
    checkOutputFile(options.html);
    exporter::checkWebFiles();
  }
  if (!options.irradiance.empty()) checkOutputPath(options.irradiance);
  if (options.tone != "srgb" && options.tone != "filmic")
    throw Error("--tone '" + options.tone + "': choose srgb or filmic");
  const bool atlasGiven = command.count("--atlas") > 0 || command.count("--texel-density") > 0;
  if (!options.lightmap.empty() && atlasGiven)
    throw Error("--atlas and --texel-density are for --store: a lightmap is exported on its own atlas");
  (void)atlasSideFlag(options.atlasSize);
  if (command.count("--texel-density") > 0) (void)texelDensityFlag(options.texelDensity);
  (void)parseRetrievalFilter(options.filter, "--filter");
}

void runExport(const ExportOptions& options, const CLI::App& command) {
  checkExportArguments(options, command);
  const scene::Scene scene = loadSceneArgument(options.scene);
  const ToneMapping tone{options.exposure, options.tone == "filmic" ? ToneCurve::Filmic : ToneCurve::Srgb};
  LayeredDepthCube store;
  lightmap::Lightmap lightmap;
  lightmap::LightmapAtlas atlas;
  if (!options.store.empty())
    store = bake::readStoreFile(options.store, scene.fingerprint());  // refuses a store of another scene
  else
    lightmap = lightmap::loadLightmap(options.lightmap, scene, &atlas);  // refuses another scene's
  const exporter::ExportDescription description =
      options.store.empty() ? exporter::ExportDescription{"lightmap", lightmap.method, tone}
                            : exporter::ExportDescription{"store", "ibrr", tone};
  // Every input is read: no output may be one of them.
  checkOutputFile(options.output);
  if (!options.html.empty()) checkOutputFile(options.html);
  if (!options.irradiance.empty()) checkOutputPath(options.irradiance);

  const Stopwatch stopwatch;
  const auto context = gpu::createHeadlessContext();  // the atlas's texels are rasterised on the GPU
  exporter::BakedLight light;
  if (!options.store.empty()) {
    lightmap::AtlasOptions atlasOptions;
    atlasOptions.targetSize = options.atlasSize;
    if (command.count("--texel-density") > 0) atlasOptions.texelsPerUnit = options.texelDensity;
    exporter::AtlasLight baked = exporter::storeLightOnAtlas(scene, store, atlasOptions,
                                                             parseRetrievalFilter(options.filter, "--filter"));
    atlas = std::move(baked.atlas);
    light = std::move(baked.light);
  } else {
    light = exporter::lightmapLight(scene, lightmap, atlas);
  }
  throwIfInterrupted();
  info("export: encoding the glTF file" + std::string(options.html.empty() ? "" : " and the page"));
  const std::vector<std::uint8_t> glb = exporter::buildGlb(scene, atlas, light, description);
  const std::string page = options.html.empty() ? std::string()
                                                 : exporter::buildPage(exporter::pageTitle(scene, description.method),
                                                                       glb, description);

  OutputSet outputs;  // the glb, the page and the irradiance image are written all or none
  outputs.stage(options.output, [&](const std::filesystem::path& temporary) {
    writeBytes(temporary, {reinterpret_cast<const char*>(glb.data()), glb.size()});
  });
  if (!options.html.empty())
    outputs.stage(options.html, [&](const std::filesystem::path& temporary) {
      writeBytes(temporary, page);
    });
  if (!options.irradiance.empty()) {
    Image irradiance(light.width, light.height);
    irradiance.pixels = light.incident;
    stageImage(outputs, irradiance, options.irradiance);
  }
  outputs.commit();
  std::printf("wrote %s (%.1f MB: %zu triangles, light %dx%d texels from the %s, %zu of %zu texels filled from "
              "neighbours, %zu cameras) in %.2f s\n",
              options.output.c_str(), double(glb.size()) / 1e6, atlas.triangleCount(), light.width, light.height,
              description.source.c_str(), light.holeTexels, light.validTexels, scene.cameras.size(),
              stopwatch.seconds());
  if (!options.html.empty())
    std::printf("wrote %s (%.1f MB): open it in a browser with WebGL 2\n", options.html.c_str(),
                double(page.size()) / 1e6);
  if (!options.irradiance.empty())
    std::printf("wrote %s (linear incident radiance H on the atlas, TEXCOORD_1)\n", options.irradiance.c_str());
}

}  // namespace

void addExportCommand(CLI::App& app) {
  auto options = std::make_shared<ExportOptions>();
  CLI::App* command = app.add_subcommand(
      "export", "Write the scene with its baked light as a binary glTF 2.0 file, and a walkthrough page for browsers");
  addSceneArgument(*command, options->scene);
  command->add_option("--store", options->store, "baked IBRR store (.ibrr) to export");
  command->add_option("--lightmap", options->lightmap, "solved texel lightmap (.lightmap) to export, on its own atlas");
  command->add_option("-o,--output", options->output, "the binary glTF file (.glb)")->required();
  command->add_option("--html", options->html,
                      "also write one self-contained page (.html) that walks through the scene in a browser with "
                      "WebGL 2 (three.js inline, nothing fetched)");
  command->add_option("--irradiance", options->irradiance,
                      "also write the linear incident radiance H on the atlas (.exr or .pfm; TEXCOORD_1's layout)");
  command
      ->add_option("--atlas", options->atlasSize,
                   "with --store: the light texture's atlas side in texels (the density is chosen to fill it)")
      ->capture_default_str();
  command->add_option("--texel-density", options->texelDensity,
                      "with --store: texels per scene unit instead of --atlas");
  command
      ->add_option("--filter", options->filter,
                   "with --store: how each texel reads the store: none, box or bilinear (as 'ibrr render')")
      ->capture_default_str();
  command->add_option("--exposure", options->exposure, "the light texture's exposure in stops (value × 2^stops)")
      ->capture_default_str()
      ->check(finiteNumber());
  command->add_option("--tone", options->tone, "the light texture's tone curve: srgb (clamp) or filmic (ACES fit)")
      ->capture_default_str();
  command->footer(
      "The light texture is what a glTF viewer shows (KHR_materials_unlit); the linear light and the albedo are in\n"
      "the file's extras for engines that apply their own (docs/export.md).\n"
      "Examples:\n  ibrr export cornell --store cornell.ibrr -o cornell.glb --html cornell.html\n"
      "  ibrr export cornell --lightmap cornell.lightmap -o cornell_lightmap.glb\n"
      "  ibrr export scenes/sibenik.json --store sibenik.ibrr --atlas 2048 --exposure 1 -o sibenik.glb");
  command->callback([options, command] { runExport(*options, *command); });
}

}  // namespace ibrr::app
