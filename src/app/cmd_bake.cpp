// `ibrr bake SCENE -o FILE`: precomputes a scene's diffuse global illumination by one of the methods of the
// table (methods.hpp; each method in its own file, method_NAME.cpp) that has a bake. This file declares the
// command's flags, chooses the method, and refuses a flag the method does not read.
#include "app/cli_support.hpp"
#include "app/commands.hpp"
#include "app/methods.hpp"
#include "cluster/cluster.hpp"
#include "lightmap/lightmap_file.hpp"
#include "util/error.hpp"

#include <algorithm>
#include <array>
#include <string>
#include <vector>

namespace ibrr::app {

bool given(const CLI::App& command, const std::string& flag) { return command.get_option(flag)->count() > 0; }

namespace {

// The flags every method takes: the scene, -o and --method.
bool commonFlag(const std::string& name) { return name == "--output" || name == "--method" || name == "SCENE"; }

// The methods of the table with a bake.
std::vector<const Method*> bakeMethods() {
  std::vector<const Method*> baked;
  for (const Method* method : methods())
    if (method->bake) baked.push_back(method);
  return baked;
}

const Method& bakeMethodNamed(const std::string& name) {
  std::vector<std::string_view> names;
  for (const Method* method : bakeMethods()) {
    if (method->name == name) return *method;
    names.push_back(method->name);
  }
  for (const Method* method : methods())
    if (method->name == name)
      throw CLI::ValidationError("--method '" + name + "' has nothing to bake (" + std::string(method->summary) +
                                 "): render it with 'ibrr render --method " + name + "'");
  throw CLI::ValidationError("--method '" + name + "': choose " + listOfNames(names));
}

bool reads(const Method& method, const std::string& flag) {
  return std::find(method.reads.begin(), method.reads.end(), flag) != method.reads.end();
}

// The methods of the table that read `flag`.
std::vector<std::string_view> readersOf(const std::string& flag) {
  std::vector<std::string_view> readers;
  for (const Method* method : bakeMethods())
    if (reads(*method, flag)) readers.push_back(method->name);
  return readers;
}

// Every flag of the command is read by a method of the table (checked as ibrr starts: a flag added without a
// reader fails every run, not only the one that gives it).
void checkEveryFlagIsRead(const CLI::App& command) {
  for (const CLI::Option* option : command.get_options()) {
    const std::string flag = option->get_name();
    if (!commonFlag(flag) && flag != "--help")
      IBRR_CHECK(!readersOf(flag).empty(), "every flag of ibrr bake is read by a method of the table (" + flag + ")");
  }
}

// Refuses every flag given that `method` does not read, naming the methods that do.
void refuseFlagsNotRead(const CLI::App& command, const Method& method) {
  std::vector<FlagReader> readers;
  for (const Method* other : bakeMethods()) readers.push_back({other->name, other->reads});
  app::refuseFlagsNotRead(command, method.name, readers);
}

// --method's help: every method of the table with what it makes.
std::string methodHelp() {
  std::vector<std::string> described;
  for (const Method* method : bakeMethods())
    described.push_back(std::string(method->name) + " (" + std::string(method->summary) + ")");
  return listOfNames(std::vector<std::string_view>(described.begin(), described.end()));
}

void runBake(const CLI::App& command, const BakeCommandOptions& options) {
  const Method& method = bakeMethodNamed(options.method);
  if (cluster::Cluster::world().distributed() && !method.distributed) {
    std::vector<std::string_view> distributed;
    for (const Method* other : bakeMethods())
      if (other->distributed) distributed.push_back(other->name);
    throw Error("--method " + options.method + " bakes in one process; under mpirun only --method " +
                listOfNames(distributed) + " is split over the ranks: start it without mpirun");
  }
  refuseFlagsNotRead(command, method);
  method.bake(BakeRequest{command, options});
}

// The lightmap atlas and the gathering solver's flags (--texel-density, --atlas, --iterations, ...).
void addLightmapFlags(CLI::App* command, BakeCommandOptions& options) {
  lightmap::GatherOptions& g = options.gather;
  CLI::Option* density = command->add_option(
      "--texel-density", options.texelDensity,
      "gather, progressive, stochastic, matrix: lightmap texels per scene unit (instead of --atlas)");
  command
      ->add_option("--atlas", options.atlasSize,
                   "gather, progressive, stochastic, matrix: the atlas side S in texels the charts should fill "
                   "(default " +
                       std::to_string(kGatherDefaultAtlasSize) + " for gather, " +
                       std::to_string(kProgressiveDefaultAtlasSize) + " for progressive, " +
                       std::to_string(kStochasticDefaultAtlasSize) + " for stochastic, " +
                       std::to_string(kMatrixDefaultAtlasSize) + " for matrix, whose patches are its texels)")
      ->excludes(density);
  command
      ->add_option("--refine-near-lights", options.emitterRefinement,
                   "gather, progressive, stochastic: F times the texel density (F² the texels) on the charts within " +
                       std::to_string(int(lightmap::kEmitterReachTexels)) +
                       " texels of a light, whose 1/r² hot spot is narrower than a texel (1 to " +
                       std::to_string(lightmap::kMaxEmitterRefinement) + ")")
      ->capture_default_str();
  command->add_option("--iterations", g.maxIterations,
                      "gather: Jacobi iterations K (default " + std::to_string(kGatherDefaultIterations) +
                          "; with --tolerance alone, until it is met); stochastic: iterations m (default " +
                          std::to_string(lightmap::StochasticOptions{}.iterations) +
                          "; with --time-budget alone, until it ends)");
  command->add_option("--tolerance", g.tolerance,
                      "gather: stop when no texel changes by more than this fraction in an iteration (e.g. 0.01)");
  command->add_option("--time-budget", g.timeBudgetSeconds,
                      "gather, stochastic: stop after the iteration that ends past S seconds; progressive: after "
                      "the shot that ends past S seconds");
  command->add_option("--layers", g.layersPerBatch,
                      "gather, matrix: hemicubes per instanced draw (texture-array layers); 0 = automatic (a 96 MiB "
                      "array on a GPU, 4 MiB on llvmpipe)");
  command->add_flag("--no-rotation", options.noRotation,
                    "gather: no random rotation of the hemicubes about the normal (banding instead of noise)");
}

// The flags of the two shooting solvers, progressive refinement (with adaptive subdivision) and stochastic iteration.
void addShootingFlags(CLI::App* command, BakeCommandOptions& options) {
  lightmap::ProgressiveOptions& pr = options.progressive;
  command
      ->add_option("--cluster", pr.clusterTexels,
                   "progressive, stochastic: reflecting surfaces shoot from blocks of B×B texels of a chart "
                   "(substructuring; default " +
                       std::to_string(lightmap::StochasticOptions{}.clusterTexels) + " for stochastic)")
      ->capture_default_str();
  command
      ->add_option("--emitter-cluster", pr.emitterClusterTexels,
                   "progressive, stochastic: the same for emitting texels (1 = every light texel shoots: sharp "
                   "shadows)")
      ->capture_default_str();
  command
      ->add_option("--hemisphere", pr.hemisphereResolution,
                   "progressive, stochastic: side in pixels of the hemispherical visibility buffer (default " +
                       std::to_string(lightmap::StochasticOptions{}.hemisphereResolution) + " for stochastic)")
      ->capture_default_str();
  command
      ->add_option("--max-edge", pr.maxEdgeFraction,
                   "progressive, stochastic: tessellate the visibility pass until no edge exceeds this fraction "
                   "of the scene diagonal (0 = off)")
      ->capture_default_str();
  command
      ->add_option("--residual", pr.residualFraction,
                   "progressive: stop when the unshot power falls below this fraction of the emitted power")
      ->capture_default_str();
  command->add_option("--shots", pr.maxShots, "progressive: stop after N shots (0 = no limit)");
  command->add_flag("--adaptive", options.adaptive,
                    "progressive: adaptive subdivision (GPU Gems 2 §39.3): every chart the root of quadtrees whose "
                    "leaves of k×k texels split in four where the radiosity's second difference is large; --atlas "
                    "then sizes the roots (default " +
                        std::to_string(lightmap::kAdaptiveDefaultRootAtlas) + "), --cluster counts roots (default " +
                        std::to_string(lightmap::kAdaptiveDefaultClusterRoots) + ")");
  lightmap::QuadtreeOptions& q = options.quadtree;
  command->add_option("--max-depth", q.depth, "--adaptive: levels of splitting below the roots, [1, 6]")
      ->capture_default_str();
  command->add_option("--leaf-texels", q.leafElements, "--adaptive: a leaf holds k×k texels, [1, 32]")
      ->capture_default_str();
  command
      ->add_option("--split-gradient", q.splitThreshold,
                   "--adaptive: split a leaf where a texel's radiance differs from the line through its neighbours "
                   "by more than this fraction of the local radiance (|l₋ − 2l + l₊| / max l)")
      ->capture_default_str();
  command->add_option("--max-texels", q.maxElements, "--adaptive: the texel budget; no split beyond it (0 = none)")
      ->capture_default_str();
  command->add_option("--split-every", pr.splitEveryShots, "--adaptive: test the leaves after every N shots")
      ->capture_default_str();
  command->add_flag("--leaf-borders", pr.drawLeafBorders,
                    "--adaptive: darken the leaves' borders in the lightmap (a picture of the subdivision)");
  command
      ->add_option("--shooters", options.stochastic.shootersPerIteration,
                   "stochastic: shooting texels per iteration, batched into one update pass, [1, 64]")
      ->capture_default_str();
  command
      ->add_option("--shoot", options.shootFrom,
                   "stochastic: what the shooters carry: iterate (the last iterate, then averaged: error falls as "
                   "1/√m) or average (the running average, the paper's eq. 2: slower when albedos are high)")
      ->capture_default_str();
}

// The form-factor matrix's flags (--bounces, --direct, --storage, ...).
void addMatrixFlags(CLI::App* command, BakeCommandOptions& options) {
  lightmap::MatrixOptions& mx = options.matrix;
  command
      ->add_option("--bounces", mx.bounces,
                   "matrix: k of the k-bounce matrix N_k = T + ... + T^k (with --direct rays, paths of up to k+1 "
                   "bounces), [1, 64]")
      ->capture_default_str();
  command
      ->add_option("--direct", options.direct,
                   "ibrr: vpl (the paper's: the VPLs on the lights render hemicubes) or rays (shadow rays to the lights "
                   "from every store layer, unclamped; hemicubes only after a bounce); auto = rays. matrix: the emission "
                   "vector: rays (direct light by shadow rays to the lights, which can then move), matrix (emitters are "
                   "patches; lights fixed) or auto (rays unless every surface emits)")
      ->capture_default_str();
  command->add_option("--light-samples", mx.lightSamples, "matrix: shadow rays per patch and light, [1, 65536]")
      ->capture_default_str();
  command
      ->add_option("--max-patches", mx.maxPatches,
                   "matrix: refuse atlases with more valid texels (the dense matrix takes 12·n² bytes)")
      ->capture_default_str();
  command
      ->add_option("--storage", options.storage,
                   "matrix: what relights: dense (3 × n² floats) or compressed (exact top entries + a BC1 "
                   "texture of the log-mapped rest, ~10x smaller)")
      ->capture_default_str();
  command
      ->add_option("--exact-fraction", mx.exactFraction,
                   "matrix, compressed: the top fraction of each row and channel kept exact, [0, 1]")
      ->capture_default_str();
  command
      ->add_option("--log-range", mx.logRange,
                   "matrix, compressed: R, the natural-log range below each row's maximum that the 8-bit log "
                   "mapping covers, (0, 64]")
      ->capture_default_str();
  command
      ->add_option("--reorder", options.reorder,
                   "matrix, compressed: none, rows or rows-columns (nearest-neighbour chains before BC1 blocking)")
      ->capture_default_str();
  command->add_option("--save-matrix", options.saveMatrix,
                      "matrix: also write the matrix with its patch mapping to FILE (e.g. cornell.ffmatrix; dense "
                      "storage saves N_k, compressed only the compressed form) for 'ibrr render --matrix FILE "
                      "--move-light ...' and 'ibrr view --matrix FILE'");
}

}  // namespace

void addBakeCommand(CLI::App& app) {
  auto options = std::make_shared<BakeCommandOptions>();
  bake::BakeOptions& b = options->bake;
  CLI::App* command = app.add_subcommand(
      "bake",
      "Bake global illumination: the IBRR store (VPL hemicubes warped into a layered depth cube) or a "
      "texel lightmap solved by hemicube gathering, progressive refinement, stochastic iteration or a "
      "form-factor matrix");
  addSceneArgument(*command, options->scene);
  command
      ->add_option("-o,--output", options->output,
                   "file to write: .ibrr store, or .lightmap for --method gather, progressive, stochastic or matrix")
      ->required();
  command->add_option("--method", options->method, methodHelp())->capture_default_str();
  command->add_option("--ldc", b.ldcResolution, "R: pixels per side of each of the three layered depth images")
      ->capture_default_str();
  command
      ->add_option("--indirect-ldc", b.indirectLdcResolution,
                   "R2: the VPLs after a bounce are warped into a coarser cube of R2 pixels per side, whose light every "
                   "layer of the store then adds (bilinear, the same plane); 0 or R: one level; negative: R/2")
      ->capture_default_str();
  command->add_option("--splat", options->splat, "splat kernel: box (the paper's) or gauss")->capture_default_str();
  command
      ->add_option("--warp", options->warp,
                   "where hemicube pixels are inserted into the store: cpu (read back, TBB), gpu (compute passes "
                   "where a batch of hemicubes was rendered, one small readback a batch) or auto (cpu: the faster "
                   "one on llvmpipe and, so far measured, on an NVIDIA GPU)")
      ->capture_default_str();
  command
      ->add_option("--gpu-batch", b.gpuBatchHemicubes,
                   "--warp gpu: hemicubes drawn into the atlas before they are warped, one readback a batch; 0: as "
                   "many as an eighth of the GPU's free memory holds, at most 256 (the store is the same for any)")
      ->check(CLI::Range(0, bake::kMaxGpuBatchHemicubes))
      ->capture_default_str();
  addLightPathOptions(*command, b);
  addBiasCompensationOptions(*command, b);
  command
      ->add_option("--direct-points", b.directPoints,
                   "ibrr --direct rays: jittered points per store layer (a layer whose first 4 points agree, no "
                   "penumbra and under 2% apart, stops at 4)")
      ->capture_default_str();
  command
      ->add_option("--direct-samples", b.directSamples,
                   "ibrr --direct rays: shadow rays per point and emissive triangle (a point or spot light takes one)")
      ->capture_default_str();
  addLightmapFlags(command, *options);
  addShootingFlags(command, *options);
  addMatrixFlags(command, *options);
  command->footer(
      "Examples:\n  ibrr bake cornell -o cornell.ibrr\n  ibrr bake cornell --paths 8192 --ldc 512 -o fine.ibrr\n"
      "  ibrr bake cornell --method gather -o cornell.lightmap\n"
      "  ibrr bake cornell --method gather --atlas 256 --hemicube 128 --tolerance 0.005 -o fine.lightmap\n"
      "  ibrr bake cornell --method progressive -o cornell.lightmap\n"
      "  ibrr bake cornell --method progressive --atlas 1024 --cluster 32 --emitter-cluster 4 -o fine.lightmap\n"
      "  ibrr bake cornell --method progressive --adaptive -o adaptive.lightmap\n"
      "  ibrr bake cornell --method stochastic -o cornell.lightmap\n"
      "  ibrr bake cornell --method stochastic --iterations 2000 --shooters 16 --seed 7 -o more.lightmap\n"
      "  ibrr bake cornell --method matrix --save-matrix cornell.ffmatrix -o cornell.lightmap\n"
      "  ibrr bake cornell --method matrix --storage compressed --reorder rows --bounces 12 -o c.lightmap\n"
      "--hemicube, --indirect-hemicube and --seed serve ibrr and gather (--seed also stochastic, --hemicube and --seed "
      "also matrix: H of its form-factor hemicubes, default " +
      std::to_string(lightmap::MatrixOptions{}.hemicubeResolution) +
      ", and the seed of their rotations and the light samples); for gather they are H of the first "
      "gather (direct light, default " +
      std::to_string(kGatherDefaultHemicube) + "), h of the later ones (default " +
      std::to_string(kGatherDefaultIndirectHemicube) + ") and the seed of the hemicube rotations.");
  checkEveryFlagIsRead(*command);
  command->callback([options, command] { runBake(*command, *options); });
}

}  // namespace ibrr::app
