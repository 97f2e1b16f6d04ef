#pragma once
// The form-factor matrix solver with a k-bounce matrix and compressed form factors (Sopin et al.,
// seeds/002: "Real-time multi-bounce radiosity on the GPU with a compressed form-factor matrix").
//
// Patches are the valid texels of a *coarse* lightmap atlas (buildAtlas at a low density, e.g.
// kDefaultMatrixAtlasSize: 2,192 patches on the Cornell box), so the patch count stays in the
// thousands and a dense matrix fits in memory. The lightmap shown is that coarse atlas, dilated and
// sampled bilinearly at every pixel's lightmap UV (lightmap_display.hpp): that is the "smooth
// interpolation" transfer from the simplified scene to the full one.
//
// Precompute (once per scene, saved to a file and reused):
//   F_ij  the form factor from patch i to patch j: the multiplier-map weight of the pixels of i's
//         hemicube that see j (form_factors.hpp, the gathering solver's hemicubes), Σ_j F_ij ≤ 1;
//   T     the colour matrix, per channel c:  T^c_ij = ρ^c_i F_ij. The radiance system is
//         L_i = L_e,i + ρ_i Σ_j F_ij L_j, so the reflectance belongs to the *receiving* row i (the
//         paper's eq. 5 puts colour_j on the column because its vector is the incident light);
//   N_k   the k-bounce matrix without its identity term:  N_k = Σ_{h=1..k} T^h  (paper §3.4 stores
//         Σ_{h=0..k} T^h; the identity is kept implicit here so compression never has to carry
//         the diagonal's 1s). Computed densely by binary powering, ~2·log2(k) n³ products per
//         channel (computeBounceMatrix).
//
// Run time (relight), for the current light positions:
//   e     the emission vector. MatrixDirect::Rays: e_i = D_i, the direct light reflected once,
//           D_i = ρ_i/π · E_i,   E_i = Σ_lights ∫ L_e cosθ_i cosθ_l / r² V dA   (irradiance, W·m⁻²),
//         by Embree shadow rays from patch i's centre to a fixed, per-patch scrambled Sobol set
//         of points on each light (point and spot lights: I cosθ_i / r² · profile). Lights are
//         the scene's emissive surfaces, one light per (instance, emissive material), then its
//         point lights and spot lights; each can be translated without touching the matrix.
//         MatrixDirect::Matrix: e_i = L_e,i, the emitters are ordinary patches (lights cannot
//         move; used where every surface emits, e.g. the furnace box).
//   L = L_e + s·e + N_k e      (radiance, W·sr⁻¹·m⁻², per texel; s = 1 for Rays, 0 for Matrix):
//         one matrix-vector product on the GPU (a compute shader, one invocation per 4 rows) gives
//         every bounce up to k after the first, then a transfer pass writes L into the atlas
//         texture. Rays: paths of 1..k+1 bounces; Matrix: 0..k.
//
// Why direct light by rays, and what it costs: a fixed matrix knows its patches at their baked
// place, so a moved emitter cannot be a column of it. Emitter texels stay patches (at their baked
// place, as reflectors of the light that reaches them: the Cornell light's 0.78 albedo on 0.7% of
// the area) but their emission enters only through D. Shadow rays see the scene without its
// emissive triangles (lights do not shadow each other or themselves); the form factors see the
// emitters where they were baked (a moved light still occludes, weakly, at its old place).
//
// Compression (paper §3.5; MatrixStorage::Compressed, compressMatrix): per row the largest
// `exactFraction` of the entries of each channel are kept exact (the union over channels, as
// (column, RGB) pairs); the rest are divided by the row's per-channel maximum of the rest,
// log-mapped, q = round(255 · (ln(v / max) + R) / R) in [1, 255] (q = 0: v < max·e^−R, read as
// 0; R = logRange), and the three channels stored as the RGB of one BC1 (DXT1) texture, 4×4 blocks,
// 0.5 byte per entry. Rows and columns are first reordered by the nearest-neighbour chain of the
// paper (MatrixReorder). The exact list stores N_ij − decoded(N_ij) at its entries, so they are
// exact whatever the BC1 block did to them, and their texels are filled with the mean of their
// block so they do not spoil it (an improvement on zeroing them). The GPU decodes the BC1 texture
// itself (GL_EXT_texture_compression_s3tc, which llvmpipe and NVIDIA expose), or the shader
// decodes the blocks from a buffer (same arithmetic as decodeBc1Block) and undoes the log mapping
// once per palette colour: on llvmpipe that is 3–4× faster than the GL's decoder (a texel fetch per
// entry), so it is the default on software rasterisers (MatrixRelighter::Bc1Decoder).
#include "lightmap/atlas.hpp"
#include "scene/scene.hpp"
#include "util/atomic_file.hpp"
#include "util/progress.hpp"

#include <glm/glm.hpp>

#include <array>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace ibrr::lightmap {

// The atlas side that `ibrr bake --method matrix` uses unless told (--atlas / --texel-density):
// Cornell 64×58, 2,192 patches, a 58 MB dense k-bounce matrix (3 channels of n² floats), 5.7 MB
// compressed.
inline constexpr int kDefaultMatrixAtlasSize = 64;

enum class MatrixDirect : std::uint8_t {
  Auto,    // Rays when some valid texel does not emit, else Matrix
  Rays,    // direct light by shadow rays to the lights: lights can move
  Matrix,  // emitters are patches: e = L_e; lights cannot move
};
enum class MatrixStorage : std::uint8_t {
  Dense,       // 3 × n² floats, exact
  Compressed,  // exact top entries + BC1 remainder (see above)
};
enum class MatrixReorder : std::uint8_t {
  None,         // patch order
  Rows,         // rows by the nearest-neighbour chain, columns in patch order
  RowsColumns,  // rows, then columns, each by its own chain (the paper's best)
};

struct MatrixOptions {
  int bounces = 8;              // k ≥ 1: N_k = Σ_{h=1..k} T^h (with Rays, paths of up to k+1 bounces)
  int hemicubeResolution = 64;  // H of the form-factor hemicubes: even, in [2, 1024]
  int layersPerBatch = 0;       // hemicubes per draw for the form factors; 0 = automatic
  std::uint32_t seed = 1;       // the hemicubes' rotations and the light samples' scrambling
  MatrixDirect direct = MatrixDirect::Auto;
  int lightSamples = 256;         // shadow rays per patch and emissive light, [1, 65536]
  std::size_t maxPatches = 6000;  // refuse atlases with more valid texels (dense memory: 12·n² bytes + temporaries)
  MatrixStorage storage = MatrixStorage::Dense;  // what solveMatrix relights with (both kept when compressed)
  double exactFraction = 0.04;                   // compressed: top fraction per row and channel kept exact, [0, 1]
  float logRange = 16.0f;                        // compressed: R, natural-log range below the row maximum, (0, 64]
  MatrixReorder reorder = MatrixReorder::RowsColumns;
};

// Throws ibrr::Error naming the flag (--bounces, --hemicube, --layers, --light-samples,
// --max-patches, --exact-fraction, --log-range) for an out-of-range value. precomputeMatrix() checks too.
void validateMatrixOptions(const MatrixOptions& options);
// Names for flags and settings: "auto"/"rays"/"matrix", "dense"/"compressed", "none"/"rows"/"rows-columns".
// The parse functions throw ibrr::Error naming the flag (--direct, --storage, --reorder) and the choices.
const char* matrixDirectName(MatrixDirect direct);
const char* matrixStorageName(MatrixStorage storage);
const char* matrixReorderName(MatrixReorder reorder);
MatrixDirect parseMatrixDirect(const std::string& name);
MatrixStorage parseMatrixStorage(const std::string& name);
MatrixReorder parseMatrixReorder(const std::string& name);

// The compressed k-bounce matrix (n patches).
struct CompressedMatrix {
  int paddedSize = 0;                       // n rounded up to a multiple of 4 (texture side)
  std::vector<std::uint32_t> rowOrder;      // stored row r holds patch rowOrder[r]'s row
  std::vector<std::uint32_t> columnOrder;   // stored column c holds patch columnOrder[c]
  std::vector<glm::vec3> rowScale;          // per stored row, the per-channel maximum of the remainder
  float logRange = 16.0f;                   // R
  std::vector<std::uint64_t> blocks;        // BC1 blocks, row-major over (paddedSize/4)² blocks
  std::vector<std::uint32_t> exactStart;    // per stored row r, [exactStart[r], exactStart[r+1])
  std::vector<std::uint32_t> exactColumn;   // patch index j (not stored order)
  std::vector<glm::vec3> exactValue;        // N_ij − decoded remainder at (i, j)
  [[nodiscard]] std::size_t bytes() const;  // what the GPU holds: blocks, exact lists, orders, scales
};

// The precomputed solver state: the patch mapping and the k-bounce matrix.
struct MatrixSolution {
  AtlasOptions atlasOptions;  // only texelsPerUnit is set by precomputeMatrix; the caller sets the rest
  int width = 0;              // atlas size
  int height = 0;
  std::uint64_t sceneFingerprint = 0;
  int bounces = 0;
  MatrixDirect direct = MatrixDirect::Rays;                   // resolved: Rays or Matrix
  std::vector<std::uint32_t> texels;                          // patch i → atlas texel index (validTexels order)
  std::vector<glm::vec3> position, normal, albedo, emission;  // per patch (PatchList values)
  // N_k per channel, row-major n × n (row i = receiver). Empty after loading a file saved without it.
  std::array<std::vector<float>, 3> dense;
  std::shared_ptr<const CompressedMatrix> compressed;  // null unless compressed
  std::string settingsJson;
  double formFactorSeconds = 0.0;  // hemicubes → F
  double powerSeconds = 0.0;       // F → N_k
  double compressSeconds = 0.0;    // N_k → CompressedMatrix
  [[nodiscard]] std::size_t size() const { return texels.size(); }
  [[nodiscard]] std::size_t denseBytes() const { return 3 * size() * size() * sizeof(float); }
};

// Checks that the matrix solver can light the scene: Rays needs some non-emissive surface; throws
// ibrr::Error naming the scene file otherwise.
void checkMatrixScene(const scene::Scene& scene, MatrixDirect direct);

// Form factors on the GPU (a GL 4.5 context must be current), the k-bounce matrix on the CPU
// (TBB), and, for MatrixStorage::Compressed, its compressed form. Throws ibrr::Error on bad options
// or when the atlas has more than maxPatches valid texels (naming --atlas / --texel-density), and
// ibrr::Interrupted on Ctrl-C (checked between the stages and the products). `progress`, when
// given, reports phase "matrix" after each stage (util/progress.hpp): the stages are the form factors, the
// k-bounce matrix of each of the 3 channels, and the compression (planned = 4 dense, 5 compressed).
[[nodiscard]] MatrixSolution precomputeMatrix(const scene::Scene& scene, const LightmapAtlas& atlas,
                                              const PatchList& patches, const MatrixOptions& options,
                                              const ProgressObserver& progress = {});

// N_k = Σ_{h=1..k} (diag(ρ) F)^h for one channel, dense row-major n × n, from the dense F and the
// per-row reflectance of that channel. Binary powering: S_{2m} = S_m + T^m S_m, S_{m+1} = I + T S_m.
// Throws ibrr::Interrupted on Ctrl-C (checked between products).
[[nodiscard]] std::vector<float> computeBounceMatrix(std::span<const float> formFactors, std::span<const float> albedo,
                                                     std::size_t n, int bounces);
// C = A · B, dense row-major n × n floats (TBB, register-blocked; AVX2 where the CPU has it).
void multiplyMatrices(std::span<const float> a, std::span<const float> b, std::span<float> c, std::size_t n);

// Compresses the solution's dense N_k (which must be present) into solution.compressed.
void compressMatrix(MatrixSolution& solution, double exactFraction, float logRange, MatrixReorder reorder);

// The paper's Fig. 7 figures of a compressed matrix against the dense one, over all n² entries
// and channels: mean and max |N − decoded|, and their sum.
struct CompressionError {
  double mean = 0.0;
  double max = 0.0;
  double total = 0.0;
};
[[nodiscard]] CompressionError compressionError(const MatrixSolution& solution);
// Stored row r of a compressed matrix decoded (remainder plus exact corrections), in stored column
// order: entry c is N[rowOrder[r]][columnOrder[c]].
[[nodiscard]] std::vector<glm::vec3> decodeStoredRow(const CompressedMatrix& matrix, std::size_t storedRow);
// The stored matrix entry (patch row i, patch column j) as decoded, per channel (slow: for tests).
[[nodiscard]] glm::vec3 decodedEntry(const CompressedMatrix& matrix, std::uint32_t i, std::uint32_t j);

// BC1 (DXT1) one block: 16 RGB texels (8 bits per channel, row-major 4×4) → 8 bytes, and back
// (the 4-colour rule when colour0 > colour1, else 3 colours and black; 5/6-bit endpoints expanded
// by bit replication, interpolants (2a + b)/3 and (a + b)/2 rounded down).
[[nodiscard]] std::uint64_t encodeBc1Block(const std::array<glm::u8vec3, 16>& texels);
[[nodiscard]] std::array<glm::u8vec3, 16> decodeBc1Block(std::uint64_t block);

// r = N_k e on the CPU, in double, per patch (the reference the GPU is tested against).
[[nodiscard]] std::vector<glm::vec3> multiplyOnCpu(const MatrixSolution& solution, MatrixStorage storage,
                                                   std::span<const glm::vec3> e);

// The lights a relight can move: one per (instance, emissive material) of the scene's emissive
// triangles in scene order, then point lights, then spot lights.
struct MatrixLight {
  std::string name;
  enum class Kind : std::uint8_t { Surface, Point, Spot } kind = Kind::Surface;
  std::vector<std::uint32_t> emitters;  // Surface: indices into Scene::emitters()
  std::uint32_t index = 0;              // Point / Spot: index into pointLights / spotLights
};
[[nodiscard]] std::vector<MatrixLight> matrixLights(const scene::Scene& scene);
// "0: light (instance 0), 1: lamp" for messages and help.
[[nodiscard]] std::string describeMatrixLights(std::span<const MatrixLight> lights);
// The translations of `--move-light LIGHT:DX,DY,DZ` flags (scene units, world space), one per
// lights() entry (zero for lights not named), or empty when `moves` is. Throws ibrr::Error naming
// --move-light for a malformed or non-finite offset, a light moved twice, or a light index out of
// range (listing the movable lights).
[[nodiscard]] std::vector<glm::vec3> parseLightMoves(std::span<const std::string> moves,
                                                     std::span<const MatrixLight> lights);
// The scene with each light of matrixLights(scene) translated by offsets[l] (world space): a
// surface light's triangles get their own, moved copies of their corners (a mesh shared with
// other instances is copied first, so nothing else moves), point and spot lights their position.
// Triangle order and count are kept, so the scene's lightmap atlas still fits it (its charts move
// with the light). offsets: one per light, or empty for none. What a relight with those offsets
// approximates (the reference of the moved scene; the picture draws the light where it went).
[[nodiscard]] scene::Scene translateLights(const scene::Scene& scene, std::span<const glm::vec3> offsets);
// The scene's lightmap atlas with the same translations applied to its world-space vertices (the
// lightmap display draws those): the moved lights are drawn where they went, with their own
// texels. The atlas must be the scene's (one triangle per scene triangle, instance-major).
[[nodiscard]] LightmapAtlas translateAtlasLights(const scene::Scene& scene, const LightmapAtlas& atlas,
                                                 std::span<const glm::vec3> offsets);

// Timings of one relight (milliseconds, wall clock).
struct RelightTiming {
  double directMs = 0.0;    // the emission vector on the CPU (Embree shadow rays, TBB) and its upload
  double productMs = 0.0;   // GPU matrix-vector product, to glFinish
  double transferMs = 0.0;  // GPU transfer of L = L_e + s·e + N e into the atlas texture, to glFinish
};

// Relights the solved scene on the GPU. A GL 4.5 context must be current on this thread for the
// object's life. The matrix is uploaded once (dense: 3 SSBOs; compressed: a BC1 texture or block
// buffer, exact lists, orders); the scene must be the one it was computed for (fingerprint) and
// outlive this object.
class MatrixRelighter {
public:
  // bc1: which BC1 decoder the compressed product uses (Automatic: the GL's on a GPU, the shader's
  // on a software rasteriser, where it measured 3–4× faster; Hardware falls back to the shader's
  // when the GL lacks GL_EXT_texture_compression_s3tc).
  enum class Bc1Decoder : std::uint8_t { Automatic, Hardware, Shader };
  MatrixRelighter(const scene::Scene& scene, std::shared_ptr<const MatrixSolution> solution, MatrixStorage storage,
                  Bc1Decoder bc1 = Bc1Decoder::Automatic);
  ~MatrixRelighter();
  MatrixRelighter(const MatrixRelighter&) = delete;
  MatrixRelighter& operator=(const MatrixRelighter&) = delete;

  [[nodiscard]] const std::vector<MatrixLight>& lights() const;
  // True when the compressed matrix is decoded by the GL's own BC1 texture support.
  [[nodiscard]] bool hardwareBc1() const;

  // The emission vector e per patch for the lights translated by `lightOffsets` (scene units, one
  // per lights() entry, or empty for none). Matrix direct: L_e (offsets must be zero).
  [[nodiscard]] std::vector<glm::vec3> emissionVector(std::span<const glm::vec3> lightOffsets) const;
  // Uploads e, runs the product and the transfer: atlasTexture() then holds L per texel (RGBA32F,
  // 0 on invalid texels).
  RelightTiming relight(std::span<const glm::vec3> lightOffsets);
  RelightTiming relightWith(std::span<const glm::vec3> e);
  [[nodiscard]] std::uint32_t atlasTexture() const;  // a GL texture name
  // L per atlas texel read back (width × height).
  [[nodiscard]] std::vector<glm::vec3> readRadiance() const;

  // y = Σ_{h=1..repeats} N^h x on the GPU by `repeats` chained products (no read-back between
  // them), read back per patch. With repeats = 1: N x (compared with multiplyOnCpu).
  [[nodiscard]] std::vector<glm::vec3> multiply(std::span<const glm::vec3> x, int repeats = 1);
  // GPU milliseconds of `repeats` chained products (to glFinish), best of `trials`.
  [[nodiscard]] double timeProducts(int repeats, int trials);

private:
  struct Impl;
  std::unique_ptr<Impl> m_impl;
};

// The lightmap of a relight: the solution's atlas options, size, settings and scene, with the
// radiance given (per atlas texel, e.g. MatrixRelighter::readRadiance()), method "matrix".
[[nodiscard]] Lightmap matrixLightmap(const MatrixSolution& solution, std::vector<glm::vec3> radiance);

// L = L_e + s·e + r per atlas texel (0 on invalid ones), on the CPU.
[[nodiscard]] std::vector<glm::vec3> assembleRadiance(const MatrixSolution& solution, std::span<const glm::vec3> e,
                                                      std::span<const glm::vec3> r);

// A whole bake: precompute, relight with the lights where the scene has them, read back. The
// lightmap's atlasOptions carry only the density: the caller sets the options it built the atlas
// with (as for the other solvers), and likewise solution->atlasOptions before saveMatrix().
struct MatrixResult {
  std::shared_ptr<MatrixSolution> solution;
  Lightmap lightmap;
  RelightTiming timing;
  double seconds = 0.0;  // everything
};
[[nodiscard]] MatrixResult solveMatrix(const scene::Scene& scene, const LightmapAtlas& atlas, const PatchList& patches,
                                       const MatrixOptions& options, const ProgressObserver& progress = {});

// The settings as one JSON object (for Lightmap::settingsJson and reports).
std::string matrixSettingsJson(const MatrixOptions& options, MatrixDirect resolvedDirect);

// The matrix file: binary, little-endian; a header ("IBRRMTX", version), the scene fingerprint,
// the atlas options and size, the patch mapping and per-patch data, the dense N_k (optional) and
// the compressed matrix (optional), the settings, and an FNV-1a 64 checksum of everything before
// it. Written under a temporary name and renamed. Loading throws ibrr::Error naming the file for
// a missing, truncated or corrupt file, another format or version, or another scene.
void saveMatrix(const std::filesystem::path& path, const MatrixSolution& solution, bool includeDense = true);
// The same, as one of several outputs written all or none (committed by the caller).
void stageMatrix(OutputSet& outputs, const std::filesystem::path& path, const MatrixSolution& solution,
                 bool includeDense = true);
[[nodiscard]] MatrixSolution loadMatrix(const std::filesystem::path& path, const scene::Scene& scene);
// Checks that a loaded matrix belongs to the atlas rebuilt from its atlasOptions (same size, the
// same valid texels as patches); throws ibrr::Error naming `path` otherwise.
void checkMatrixAtlas(const MatrixSolution& solution, const LightmapAtlas& atlas, const PatchList& patches,
                      const std::filesystem::path& path);
// The form a loaded matrix is relit from: the dense N_k when the file holds them, else the compressed form.
[[nodiscard]] MatrixStorage relightStorage(const MatrixSolution& solution);
// The relighter of a matrix loaded from `path`, once checkMatrixAtlas has found `atlas` and `patches` to be its
// own; it relights from relightStorage(*solution). `render --matrix` and the viewer's --matrix start here.
[[nodiscard]] std::unique_ptr<MatrixRelighter> relighterFor(const scene::Scene& scene,
                                                            std::shared_ptr<const MatrixSolution> solution,
                                                            const LightmapAtlas& atlas, const PatchList& patches,
                                                            const std::filesystem::path& path);

}  // namespace ibrr::lightmap
