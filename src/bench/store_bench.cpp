#include "bench/store_bench.hpp"

#include "ibrr/error.hpp"
#include "ibrr/ldc_builder.hpp"
#include "ibrr/synthetic.hpp"
#include "util/atomic_file.hpp"
#include "util/progress.hpp"

#include <tbb/info.h>
#include <tbb/task_arena.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <fstream>
#include <iomanip>
#include <ostream>
#include <sstream>
#include <string>

namespace ibrr::bench {

namespace {

using Clock = std::chrono::steady_clock;

// Small deterministic generator (PCG-style LCG); the benchmark must not vary from run to run.
class Rng {
public:
  explicit Rng(std::uint64_t seed) : m_state(seed * 6364136223846793005ull + 1442695040888963407ull) {}
  float uniform() {  // [0, 1)
    m_state = m_state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<float>(m_state >> 40) * (1.0f / 16777216.0f);
  }

private:
  std::uint64_t m_state;
};

// A 4 × 3 × 5 m room with a 0.6 m box on the floor and a 2 mm thin partition: a few layers deep per pixel.
synthetic::AnalyticScene benchScene() {
  synthetic::AnalyticScene scene;
  scene.addRoom({0, 0, 0}, {4, 3, 5});
  scene.addBox({1.5f, 0, 2}, {2.1f, 0.6f, 2.6f});
  scene.addQuad({{3.0f, 0.0f, 0.0f}, {0, 0, 2.0f}, {0, 2.0f, 0}});    // x = 3.000, facing −x
  scene.addQuad({{3.002f, 0.0f, 0.0f}, {0, 2.0f, 0}, {0, 0, 2.0f}});  // x = 3.002, facing +x
  return scene;
}

// A random point on a random quad, with the quad's normal.
struct SurfacePoint {
  glm::vec3 position;
  glm::vec3 normal;
};
SurfacePoint randomSurfacePoint(const synthetic::AnalyticScene& scene, Rng& rng) {
  const auto quads = scene.quads();
  const auto k = std::min(quads.size() - 1, static_cast<std::size_t>(rng.uniform() * quads.size()));
  const synthetic::Quad& q = quads[k];
  const float a = 0.02f + 0.96f * rng.uniform();
  const float b = 0.02f + 0.96f * rng.uniform();
  return {q.origin + a * q.edgeU + b * q.edgeV, q.normal()};
}

template <class F>
double timeAtLeast(double seconds, F&& body, std::uint64_t& work) {
  work = 0;
  const auto start = Clock::now();
  double elapsed = 0.0;
  do {
    throwIfInterrupted();  // Ctrl-C between two passes
    work += body();
    elapsed = std::chrono::duration<double>(Clock::now() - start).count();
  } while (elapsed < seconds);
  return elapsed;
}

struct Row {
  int resolution = 0;
  int hemicubeResolution = 0;
  int hemicubes = 0;
  std::uint64_t samplesPerPass = 0;
  double insert1 = 0, insertN = 0;                                  // samples/s
  double lookupNearest = 0, lookupBilinear = 0, lookupAverage = 0;  // lookups/s, one thread
  double hitFraction = 0;
  StoreStats stats;
};

std::string millions(double v) {
  std::ostringstream s;
  s << std::fixed << std::setprecision(2) << v / 1e6;
  return s.str();
}

}  // namespace

namespace {

// Insertion (1 thread and `allThreads`) and lookup throughput, and the store's figures, at one resolution.
Row measureResolution(const synthetic::AnalyticScene& scene, LdcParams params, int resolution,
                      const StoreBenchOptions& options, int allThreads) {
  Row row;
  row.resolution = resolution;
  int h = options.hemicubeResolution > 0 ? options.hemicubeResolution : resolution;
  h += h % 2;
  row.hemicubeResolution = h;
  // About two million samples in the pool: enough to time, small enough to hold.
  row.hemicubes = std::clamp(2000000 / (3 * h * h), 2, 32);
  Rng rng(1234u + static_cast<std::uint64_t>(resolution));
  std::vector<HemicubeSamples> pool;
  for (int k = 0; k < row.hemicubes; ++k) {
    const SurfacePoint sp = randomSurfacePoint(scene, rng);
    synthetic::PointLight light{sp.position + 0.01f * sp.normal, sp.normal, glm::vec3(1.0f)};
    pool.push_back(synthetic::renderHemicube(scene, light, h));
    row.samplesPerPass += pool.back().size();
  }
  std::vector<HemicubeSampleView> views;
  for (const HemicubeSamples& s : pool) views.push_back(s.view());

  params.resolution = resolution;
  LdcBuilder builder(params);
  auto insertPass = [&]() -> std::uint64_t {
    builder.insert(views);
    return row.samplesPerPass;
  };
  std::uint64_t work = 0;
  builder.insert(views);  // warm-up: creates the layers; the timed passes then measure steady state
  {
    tbb::task_arena arena(1);
    double t = 0;
    arena.execute([&] { t = timeAtLeast(options.secondsPerMeasure, insertPass, work); });
    row.insert1 = static_cast<double>(work) / t;
  }
  {
    tbb::task_arena arena(allThreads);
    double t = 0;
    arena.execute([&] { t = timeAtLeast(options.secondsPerMeasure, insertPass, work); });
    row.insertN = static_cast<double>(work) / t;
  }
  const LayeredDepthCube store = builder.finalize();
  row.stats = store.stats();

  std::vector<SurfacePoint> queries;
  Rng qrng(99);
  for (int k = 0; k < 200000; ++k) queries.push_back(randomSurfacePoint(scene, qrng));
  std::uint64_t hits = 0;
  auto lookupPass = [&](RetrievalFilter filter) {
    return [&, filter]() -> std::uint64_t {
      hits = 0;
      for (const SurfacePoint& q : queries)
        if (store.radiosity(q.position, q.normal, filter)) ++hits;
      return queries.size();
    };
  };
  double t = timeAtLeast(options.secondsPerMeasure / 2, lookupPass(RetrievalFilter::Nearest), work);
  row.lookupNearest = static_cast<double>(work) / t;
  row.hitFraction = static_cast<double>(hits) / static_cast<double>(queries.size());
  t = timeAtLeast(options.secondsPerMeasure / 2, lookupPass(RetrievalFilter::Bilinear), work);
  row.lookupBilinear = static_cast<double>(work) / t;
  t = timeAtLeast(options.secondsPerMeasure / 2, lookupPass(RetrievalFilter::Average), work);
  row.lookupAverage = static_cast<double>(work) / t;
  return row;
}

void printRows(std::ostream& out, const std::vector<Row>& rows, int allThreads) {
  out << std::left << std::setw(6) << "R" << std::setw(6) << "H" << std::setw(7) << "VPLs" << std::setw(12)
      << "Msamples/s" << std::setw(12) << "Msamples/s" << std::setw(11) << "Mlookup/s" << std::setw(11) << "Mlookup/s"
      << std::setw(11) << "Mlookup/s" << std::setw(10) << "layers" << std::setw(8) << "B/layer" << std::setw(10)
      << "B/layer" << std::setw(11) << "layers/px" << std::setw(8) << "max" << std::setw(8) << "MB"
      << "\n";
  out << std::setw(6) << "" << std::setw(6) << "" << std::setw(7) << "" << std::setw(12) << "1 thread" << std::setw(12)
      << (std::to_string(allThreads) + " threads") << std::setw(11) << "nearest" << std::setw(11) << "bilinear"
      << std::setw(11) << "avg 3x3" << std::setw(10) << "" << std::setw(8) << "layer" << std::setw(10) << "+offsets"
      << std::setw(11) << "(occupied)" << std::setw(8) << "depth" << std::setw(8) << ""
      << "\n";
  for (const Row& r : rows) {
    std::ostringstream mb, bpl, lpp;
    mb << std::fixed << std::setprecision(1) << static_cast<double>(r.stats.totalBytes) / (1024.0 * 1024.0);
    bpl << std::fixed << std::setprecision(1) << r.stats.bytesPerLayerAll;
    lpp << std::fixed << std::setprecision(2) << r.stats.layersPerOccupiedPixel;
    out << std::setw(6) << r.resolution << std::setw(6) << r.hemicubeResolution << std::setw(7) << r.hemicubes
        << std::setw(12) << millions(r.insert1) << std::setw(12) << millions(r.insertN) << std::setw(11)
        << millions(r.lookupNearest) << std::setw(11) << millions(r.lookupBilinear) << std::setw(11)
        << millions(r.lookupAverage) << std::setw(10) << r.stats.layerCount << std::setw(8) << r.stats.bytesPerLayer
        << std::setw(10) << bpl.str() << std::setw(11) << lpp.str() << std::setw(8) << r.stats.maxLayersPerPixel
        << std::setw(8) << mb.str() << "\n";
  }
  out << "\nlookups: 200000 random surface points, one thread; hit fraction at R=" << rows.back().resolution << ": "
      << std::setprecision(3) << rows.back().hitFraction << "\n";

}

void writeRowsJson(const std::filesystem::path& path, const std::vector<Row>& rows, int allThreads) {
  std::ostringstream json;
  json << "{\n  \"benchmark\": \"store\",\n  \"threads\": " << allThreads << ",\n  \"rows\": [\n";
  for (std::size_t k = 0; k < rows.size(); ++k) {
    const Row& r = rows[k];
    json << "    {\"resolution\": " << r.resolution << ", \"hemicube_resolution\": " << r.hemicubeResolution
         << ", \"hemicubes\": " << r.hemicubes << ", \"samples_per_pass\": " << r.samplesPerPass
         << ", \"insert_samples_per_s_1_thread\": " << r.insert1
         << ", \"insert_samples_per_s_all_threads\": " << r.insertN
         << ", \"lookups_per_s_nearest\": " << r.lookupNearest << ", \"lookups_per_s_bilinear\": " << r.lookupBilinear
         << ", \"lookups_per_s_average\": " << r.lookupAverage << ", \"lookup_hit_fraction\": " << r.hitFraction
         << ", \"layers\": " << r.stats.layerCount << ", \"bytes_per_layer\": " << r.stats.bytesPerLayer
         << ", \"bytes_per_layer_with_offsets\": " << r.stats.bytesPerLayerAll
         << ", \"layers_per_occupied_pixel\": " << r.stats.layersPerOccupiedPixel
         << ", \"max_layers_per_pixel\": " << r.stats.maxLayersPerPixel << ", \"total_bytes\": " << r.stats.totalBytes
         << "}" << (k + 1 < rows.size() ? "," : "") << "\n";
  }
  json << "  ]\n}\n";
  writeFileAtomically(path, [&](const std::filesystem::path& temporary) {
    std::ofstream file(temporary, std::ios::binary);
    file << json.str();
    file.close();
    if (!file) throw Error(path.string() + ": writing the store benchmark's JSON failed (disk full?)");
  });
}

}  // namespace

int runStoreBenchmark(const StoreBenchOptions& options, std::ostream& out) {
  if (options.resolutions.empty()) throw Error("store benchmark: give at least one LDC resolution");
  for (int r : options.resolutions)
    if (r < kMinResolution || r > kMaxResolution)
      throw Error("store benchmark: resolution " + std::to_string(r) + " is outside [4, 8192]");
  if (!(options.secondsPerMeasure > 0.0 && options.secondsPerMeasure <= 60.0))
    throw Error("store benchmark: secondsPerMeasure must be in (0, 60]");
  if (options.threads < 0) throw Error("store benchmark: threads must be >= 0 (0 = all)");
  if (options.jsonPath) checkOutputFile(*options.jsonPath);  // before the minutes of measuring, not after
  const int allThreads = options.threads > 0 ? options.threads : tbb::info::default_concurrency();

  const synthetic::AnalyticScene scene = benchScene();
  LdcParams params;
  params.bounds = scene.bounds();
  std::vector<Row> rows;
  out << "ibrr store benchmark: box room 4x3x5 m with a box and a thin wall; VPL hemicubes on the surfaces\n"
      << "threads: 1 and " << allThreads << "; each figure timed for at least " << options.secondsPerMeasure
      << " s\n\n";
  Progress progress("store benchmark", options.resolutions.size(), "resolutions");
  for (int resolution : options.resolutions) {
    rows.push_back(measureResolution(scene, params, resolution, options, allThreads));
    progress.advance();
  }
  progress.finish();
  printRows(out, rows, allThreads);
  if (options.jsonPath) writeRowsJson(*options.jsonPath, rows, allThreads);
  return 0;
}

}  // namespace ibrr::bench
