// The form-factor matrix file (lightmap/matrix.hpp, saveMatrix / loadMatrix).
#include "lightmap/matrix.hpp"

#include "lightmap/gather.hpp"
#include "util/atomic_file.hpp"
#include "util/input_file.hpp"
#include "util/error.hpp"

#include <cstring>
#include <fstream>
#include <iterator>
#include <type_traits>

namespace ibrr::lightmap {
namespace {

constexpr char kMagic[8] = {'I', 'B', 'R', 'R', 'M', 'T', 'X', '\0'};
constexpr std::uint32_t kVersion = 1;

std::uint64_t fnv1a(const char* data, std::size_t size) {
  std::uint64_t h = 0xcbf29ce484222325ull;
  for (std::size_t k = 0; k < size; ++k) {
    h ^= std::uint8_t(data[k]);
    h *= 0x100000001b3ull;
  }
  return h;
}

class Writer {
public:
  template <typename T>
  void value(const T& v) {
    static_assert(std::is_trivially_copyable_v<T>);
    const char* p = reinterpret_cast<const char*>(&v);
    m_bytes.insert(m_bytes.end(), p, p + sizeof(T));
  }
  template <typename T>
  void array(const std::vector<T>& v) {
    value(std::uint64_t(v.size()));
    const char* p = reinterpret_cast<const char*>(v.data());
    m_bytes.insert(m_bytes.end(), p, p + v.size() * sizeof(T));
  }
  void text(const std::string& s) {
    value(std::uint64_t(s.size()));
    m_bytes.insert(m_bytes.end(), s.begin(), s.end());
  }
  std::string& bytes() { return m_bytes; }

private:
  std::string m_bytes;
};

class Reader {
public:
  Reader(const std::string& bytes, std::size_t end, std::string file)
      : m_bytes(bytes), m_end(end), m_file(std::move(file)) {}
  template <typename T>
  T value() {
    need(sizeof(T));
    T v;
    std::memcpy(&v, m_bytes.data() + m_at, sizeof(T));
    m_at += sizeof(T);
    return v;
  }
  template <typename T>
  std::vector<T> array(std::uint64_t expected) {
    const auto count = value<std::uint64_t>();
    if (count != expected)
      throw Error(m_file + ": corrupt form-factor matrix file (an array of " + std::to_string(count) +
                  " entries where " + std::to_string(expected) + " were expected); precompute it again");
    need(count * sizeof(T));
    std::vector<T> v(count);
    if (count > 0)  // an empty array (no exact entries) has a null data(): memcpy to it is undefined
      std::memcpy(v.data(), m_bytes.data() + m_at, count * sizeof(T));
    m_at += count * sizeof(T);
    return v;
  }
  std::string text() {
    const auto size = value<std::uint64_t>();
    need(size);
    std::string s = m_bytes.substr(m_at, size);
    m_at += size;
    return s;
  }
  [[nodiscard]] std::size_t at() const { return m_at; }

private:
  void need(std::uint64_t size) const {
    if (size > m_end - m_at) throw Error(m_file + ": truncated form-factor matrix file; precompute it again");
  }
  const std::string& m_bytes;
  std::size_t m_end;
  std::string m_file;
  std::size_t m_at = 0;
};

}  // namespace

void stageMatrix(OutputSet& outputs, const std::filesystem::path& path, const MatrixSolution& s, bool includeDense) {
  const std::size_t n = s.size();
  Writer w;
  for (const char c : kMagic) w.value(c);
  w.value(kVersion);
  w.value(s.sceneFingerprint);
  w.value(s.atlasOptions.texelsPerUnit);
  w.value(std::int32_t(s.atlasOptions.targetSize));
  w.value(std::int32_t(s.atlasOptions.paddingTexels));
  w.value(s.atlasOptions.chartNormalCosine);
  w.value(std::int32_t(s.width));
  w.value(std::int32_t(s.height));
  w.value(std::uint64_t(n));
  w.value(std::int32_t(s.bounces));
  w.value(std::uint8_t(s.direct));
  w.array(s.texels);
  w.array(s.position);
  w.array(s.normal);
  w.array(s.albedo);
  w.array(s.emission);
  const bool dense = includeDense && s.dense[0].size() == n * n;
  w.value(std::uint8_t(dense));
  if (dense)
    for (const std::vector<float>& channel : s.dense) w.array(channel);
  w.value(std::uint8_t(s.compressed != nullptr));
  if (s.compressed) {
    const CompressedMatrix& c = *s.compressed;
    w.value(std::int32_t(c.paddedSize));
    w.value(c.logRange);
    w.array(c.rowOrder);
    w.array(c.columnOrder);
    w.array(c.rowScale);
    w.array(c.blocks);
    w.array(c.exactStart);
    w.array(c.exactColumn);
    w.array(c.exactValue);
  }
  w.text(s.settingsJson);
  w.value(s.formFactorSeconds);
  w.value(s.powerSeconds);
  w.value(s.compressSeconds);
  w.value(fnv1a(w.bytes().data(), w.bytes().size()));
  outputs.stage(path, [&](const std::filesystem::path& temporary) {
    std::ofstream out(temporary, std::ios::binary);
    out.write(w.bytes().data(), std::streamsize(w.bytes().size()));
    out.close();
    if (!out) throw Error(path.string() + ": could not write the form-factor matrix (disk full?)");
  });
}

void saveMatrix(const std::filesystem::path& path, const MatrixSolution& solution, bool includeDense) {
  OutputSet outputs;
  stageMatrix(outputs, path, solution, includeDense);
  outputs.commit();
}

MatrixSolution loadMatrix(const std::filesystem::path& path, const scene::Scene& scene) {
  const std::string file = path.string();
  requireRegularFile(path, "form-factor matrix file");
  std::ifstream in(path, std::ios::binary);
  if (!in)
    throw Error(file + ": form-factor matrix file not found; precompute one with 'ibrr bake SCENE --method matrix'");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (bytes.size() < sizeof(kMagic) || std::memcmp(bytes.data(), kMagic, sizeof(kMagic)) != 0)
    throw Error(file + ": not a form-factor matrix file (no IBRRMTX header)");
  if (bytes.size() < sizeof(kMagic) + 4 + 8)
    throw Error(file + ": truncated form-factor matrix file; precompute it again");
  std::uint64_t stored = 0;
  std::memcpy(&stored, bytes.data() + bytes.size() - 8, 8);
  if (stored != fnv1a(bytes.data(), bytes.size() - 8))
    throw Error(file + ": truncated or corrupt form-factor matrix file (checksum mismatch); precompute it again");
  Reader r(bytes, bytes.size() - 8, file);
  for (std::size_t k = 0; k < sizeof(kMagic); ++k) (void)r.value<char>();
  const auto version = r.value<std::uint32_t>();
  if (version != kVersion)
    throw Error(file + ": form-factor matrix file version " + std::to_string(version) + ", this build reads " +
                std::to_string(kVersion) + "; precompute it again");
  MatrixSolution s;
  s.sceneFingerprint = r.value<std::uint64_t>();
  if (s.sceneFingerprint != scene.fingerprint())
    throw Error(file + ": the form-factor matrix was computed for another scene; precompute it for " +
                scene.sourcePath.string());
  s.atlasOptions.texelsPerUnit = r.value<float>();
  s.atlasOptions.targetSize = r.value<std::int32_t>();
  s.atlasOptions.paddingTexels = r.value<std::int32_t>();
  s.atlasOptions.chartNormalCosine = r.value<float>();
  s.width = r.value<std::int32_t>();
  s.height = r.value<std::int32_t>();
  const auto n = r.value<std::uint64_t>();
  s.bounces = r.value<std::int32_t>();
  const auto direct = r.value<std::uint8_t>();
  if (s.width <= 0 || s.height <= 0 || n == 0 || n > std::uint64_t(s.width) * std::uint64_t(s.height) || n > 20000 ||
      s.bounces < 1 || (direct != std::uint8_t(MatrixDirect::Rays) && direct != std::uint8_t(MatrixDirect::Matrix)))
    throw Error(file + ": corrupt form-factor matrix file (sizes); precompute it again");
  s.direct = MatrixDirect(direct);
  s.texels = r.array<std::uint32_t>(n);
  for (const std::uint32_t t : s.texels)
    if (t >= std::uint64_t(s.width) * std::uint64_t(s.height))
      throw Error(file + ": corrupt form-factor matrix file (a patch outside the atlas); precompute it again");
  s.position = r.array<glm::vec3>(n);
  s.normal = r.array<glm::vec3>(n);
  s.albedo = r.array<glm::vec3>(n);
  s.emission = r.array<glm::vec3>(n);
  if (r.value<std::uint8_t>())
    for (std::vector<float>& channel : s.dense) channel = r.array<float>(n * n);
  if (r.value<std::uint8_t>()) {
    auto c = std::make_shared<CompressedMatrix>();
    c->paddedSize = r.value<std::int32_t>();
    if (std::uint64_t(c->paddedSize) != (n + 3) / 4 * 4)
      throw Error(file + ": corrupt form-factor matrix file (compressed size); precompute it again");
    c->logRange = r.value<float>();
    c->rowOrder = r.array<std::uint32_t>(n);
    c->columnOrder = r.array<std::uint32_t>(n);
    c->rowScale = r.array<glm::vec3>(n);
    const std::uint64_t blocksPerRow = std::uint64_t(c->paddedSize) / 4;
    c->blocks = r.array<std::uint64_t>(blocksPerRow * blocksPerRow);
    c->exactStart = r.array<std::uint32_t>(n + 1);
    const std::uint64_t exact = c->exactStart.back();
    c->exactColumn = r.array<std::uint32_t>(exact);
    c->exactValue = r.array<glm::vec3>(exact);
    for (const std::uint32_t o : c->rowOrder)
      if (o >= n) throw Error(file + ": corrupt form-factor matrix file (row order); precompute it again");
    for (const std::uint32_t o : c->columnOrder)
      if (o >= n) throw Error(file + ": corrupt form-factor matrix file (column order); precompute it again");
    for (const std::uint32_t o : c->exactColumn)
      if (o >= n) throw Error(file + ": corrupt form-factor matrix file (exact columns); precompute it again");
    for (std::size_t k = 1; k < c->exactStart.size(); ++k)
      if (c->exactStart[k] < c->exactStart[k - 1] || c->exactStart[0] != 0)
        throw Error(file + ": corrupt form-factor matrix file (exact rows); precompute it again");
    s.compressed = std::move(c);
  }
  s.settingsJson = r.text();
  s.formFactorSeconds = r.value<double>();
  s.powerSeconds = r.value<double>();
  s.compressSeconds = r.value<double>();
  if (r.at() != bytes.size() - 8)
    throw Error(file + ": corrupt form-factor matrix file (trailing bytes); precompute it again");
  if (s.dense[0].empty() && !s.compressed)
    throw Error(file + ": the form-factor matrix file holds neither a dense nor a compressed matrix");
  return s;
}

void checkMatrixAtlas(const MatrixSolution& solution, const LightmapAtlas& atlas, const PatchList& patches,
                      const std::filesystem::path& path) {
  if (atlas.width != solution.width || atlas.height != solution.height || patches.width != atlas.width ||
      patches.height != atlas.height)
    throw Error(path.string() + ": the atlas rebuilt from its options is " + std::to_string(atlas.width) + "×" +
                std::to_string(atlas.height) + " texels, the matrix's is " + std::to_string(solution.width) + "×" +
                std::to_string(solution.height) + " (made by another version of the atlas code); precompute it again");
  if (validTexels(patches) != solution.texels)
    throw Error(path.string() +
                ": the matrix's patches are not the valid texels of the rebuilt atlas (made by another version of the "
                "atlas code); precompute it again");
}

}  // namespace ibrr::lightmap
