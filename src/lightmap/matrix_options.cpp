// The form-factor matrix solver's options: their checks, names, settings JSON and the scene check
// (lightmap/matrix.hpp).
#include "lightmap/matrix.hpp"

#include "util/error.hpp"

#include <nlohmann/json.hpp>

#include <string>

namespace ibrr::lightmap {
namespace {

bool anyNonEmissiveTriangle(const scene::Scene& scene) {
  for (const scene::MeshInstance& instance : scene.instances)
    for (const std::uint32_t material : scene.meshes[instance.mesh].triangleMaterials)
      if (!scene.materials[material].isEmissive()) return true;
  return false;
}

}  // namespace

void validateMatrixOptions(const MatrixOptions& options) {
  if (options.bounces < 1 || options.bounces > 64)
    throw OptionError("--bounces " + std::to_string(options.bounces) +
                ": give k in [1, 64] (bounces in the k-bounce matrix)");
  const int h = options.hemicubeResolution;
  if (h < 2 || h % 2 != 0 || h > 1024)
    throw OptionError("--hemicube " + std::to_string(h) + ": the hemicube resolution must be even and in [2, 1024]");
  if (options.layersPerBatch < 0 || options.layersPerBatch > 2048)
    throw OptionError("--layers " + std::to_string(options.layersPerBatch) +
                ": hemicubes per batch must be in [1, 2048], or 0 for automatic");
  if (options.lightSamples < 1 || options.lightSamples > 65536)
    throw OptionError("--light-samples " + std::to_string(options.lightSamples) +
                ": give shadow rays per patch and light in [1, 65536]");
  if (options.maxPatches < 1 || options.maxPatches > 20000)
    throw OptionError("--max-patches " + std::to_string(options.maxPatches) +
                ": give a patch limit in [1, 20000] (the dense matrix takes 12·n² bytes)");
  if (!(options.exactFraction >= 0.0 && options.exactFraction <= 1.0))
    throw OptionError("--exact-fraction " + std::to_string(options.exactFraction) +
                ": give the fraction of each row kept exact in [0, 1] (the paper: 0.04)");
  if (!(options.logRange > 0.0f && options.logRange <= 64.0f))
    throw OptionError("--log-range " + std::to_string(options.logRange) +
                ": give the natural-log range kept below each row's maximum in (0, 64] (e.g. 16)");
}

const char* matrixDirectName(MatrixDirect direct) {
  switch (direct) {
    case MatrixDirect::Auto:
      return "auto";
    case MatrixDirect::Rays:
      return "rays";
    case MatrixDirect::Matrix:
      return "matrix";
  }
  return "?";
}
const char* matrixStorageName(MatrixStorage storage) {
  return storage == MatrixStorage::Dense ? "dense" : "compressed";
}
const char* matrixReorderName(MatrixReorder reorder) {
  switch (reorder) {
    case MatrixReorder::None:
      return "none";
    case MatrixReorder::Rows:
      return "rows";
    case MatrixReorder::RowsColumns:
      return "rows-columns";
  }
  return "?";
}
MatrixDirect parseMatrixDirect(const std::string& name) {
  for (const MatrixDirect d : {MatrixDirect::Auto, MatrixDirect::Rays, MatrixDirect::Matrix})
    if (name == matrixDirectName(d)) return d;
  throw OptionError("--direct " + name + ": give auto, rays or matrix");
}
MatrixStorage parseMatrixStorage(const std::string& name) {
  for (const MatrixStorage s : {MatrixStorage::Dense, MatrixStorage::Compressed})
    if (name == matrixStorageName(s)) return s;
  throw OptionError("--storage " + name + ": give dense or compressed");
}
MatrixReorder parseMatrixReorder(const std::string& name) {
  for (const MatrixReorder r : {MatrixReorder::None, MatrixReorder::Rows, MatrixReorder::RowsColumns})
    if (name == matrixReorderName(r)) return r;
  throw OptionError("--reorder " + name + ": give none, rows or rows-columns");
}

std::string matrixSettingsJson(const MatrixOptions& options, MatrixDirect resolvedDirect) {
  const nlohmann::json json = {{"bounces", options.bounces},
                               {"hemicube", options.hemicubeResolution},
                               {"seed", options.seed},
                               {"direct", matrixDirectName(resolvedDirect)},
                               {"light_samples", options.lightSamples},
                               {"storage", matrixStorageName(options.storage)},
                               {"exact_fraction", options.exactFraction},
                               {"log_range", options.logRange},
                               {"reorder", matrixReorderName(options.reorder)}};
  return json.dump();
}

void checkMatrixScene(const scene::Scene& scene, MatrixDirect direct) {
  if (direct == MatrixDirect::Matrix && (!scene.pointLights.empty() || !scene.spotLights.empty()))
    throw Error(scene.sourcePath.string() +
                ": --direct matrix lights the scene from emissive patches only; its point and spot lights need "
                "--direct rays");
  if (direct == MatrixDirect::Matrix && scene.emitters().empty())
    throw Error(scene.sourcePath.string() + ": --direct matrix needs emissive surfaces");
  if (direct == MatrixDirect::Rays && !anyNonEmissiveTriangle(scene))
    throw Error(scene.sourcePath.string() +
                ": every surface emits, so there is nothing for --direct rays to light; use --direct matrix");
  if (!scene.hasLights())
    throw Error(scene.sourcePath.string() +
                ": the form-factor matrix solver needs a light (an emissive surface, a quad, point or spot light)");
}


}  // namespace ibrr::lightmap
