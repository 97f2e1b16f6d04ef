#include "ibrr/store_file.hpp"

#include "ibrr/checksum.hpp"
#include "ibrr/error.hpp"

#include <bit>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <sstream>

namespace ibrr {

static_assert(std::endian::native == std::endian::little,
              "the store file is little-endian and is written by memcpy; add byte swapping for this target");

namespace {

constexpr char kMagic[8] = {'I', 'B', 'R', 'R', '-', 'L', 'D', 'C'};
constexpr const char* kRebake = "re-bake the store (ibrr bake) or point to an intact copy";

class Writer {
public:
  explicit Writer(std::vector<std::byte>& out) : m_out(out) {}
  template <class T>
  void put(const T& value) {
    putBytes(&value, sizeof(T));
  }
  template <class T>
  void putArray(std::span<const T> values) {
    putBytes(values.data(), values.size_bytes());
  }

private:
  void putBytes(const void* data, std::size_t count) {
    if (count == 0) return;
    const std::size_t at = m_out.size();
    m_out.resize(at + count);
    std::memcpy(m_out.data() + at, data, count);
  }
  std::vector<std::byte>& m_out;
};

// Reads fields at fixed offsets; callers have checked the size first.
template <class T>
T readAt(std::span<const std::byte> bytes, std::size_t offset) {
  T value;
  std::memcpy(&value, bytes.data() + offset, sizeof(T));
  return value;
}

std::string hex(std::uint64_t v) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "0x%016llx", static_cast<unsigned long long>(v));
  return buf;
}

}  // namespace

std::vector<std::byte> serializeStore(const LayeredDepthCube& store) {
  const LdcParams& p = store.params();
  std::vector<std::byte> out;
  out.reserve(kStoreHeaderBytes + store.offsets().size_bytes() + store.layers().size_bytes() + 8);
  Writer w(out);
  w.putArray(std::span<const char>(kMagic, 8));
  w.put(kStoreVersion);
  w.put(static_cast<std::uint32_t>(kStoreHeaderBytes));
  w.put(p.sceneFingerprint);
  w.put(store.vplCount());
  w.put(static_cast<std::uint64_t>(store.layers().size()));
  w.put(static_cast<std::uint32_t>(p.resolution));
  w.put(static_cast<std::uint32_t>(sizeof(PackedLayer)));
  for (int k = 0; k < 3; ++k) w.put(p.bounds.lo[k]);
  for (int k = 0; k < 3; ++k) w.put(p.bounds.hi[k]);
  w.put(p.margin);
  w.put(p.epsDistance);
  w.put(p.epsNormal);
  w.put(store.biasCompensationRays() | (store.biasCompensationPasses() << 16));
  w.putArray(store.offsets());
  w.putArray(store.layers());
  w.put(fnv1a64(out));
  return out;
}

LayeredDepthCube deserializeStore(std::span<const std::byte> bytes, const std::string& sourceName,
                                  std::optional<std::uint64_t> expectedFingerprint) {
  const std::string where = "store file '" + sourceName + "'";
  const std::size_t size = bytes.size();
  if (size < 12)
    throw Error(where + " is truncated (" + std::to_string(size) + " bytes, not even a header); " + kRebake);
  if (std::memcmp(bytes.data(), kMagic, 8) != 0)
    throw Error(where + " is not an ibrr radiosity store (bad magic); pass a file written by ibrr bake");
  const auto version = readAt<std::uint32_t>(bytes, 8);
  if (version != kStoreVersion)
    throw Error(where + " has store version " + std::to_string(version) + " but this build reads version " +
                std::to_string(kStoreVersion) + "; re-bake the store with this version of ibrr");
  if (size < kStoreHeaderBytes + 8)
    throw Error(where + " is truncated (" + std::to_string(size) + " bytes, the header alone needs " +
                std::to_string(kStoreHeaderBytes + 8) + "); " + kRebake);
  const auto headerBytes = readAt<std::uint32_t>(bytes, 12);
  const auto layerCount = readAt<std::uint64_t>(bytes, 32);
  const auto resolution = readAt<std::uint32_t>(bytes, 40);
  const auto layerBytes = readAt<std::uint32_t>(bytes, 44);
  if (headerBytes != kStoreHeaderBytes || layerBytes != sizeof(PackedLayer) ||
      resolution < static_cast<std::uint32_t>(kMinResolution) ||
      resolution > static_cast<std::uint32_t>(kMaxResolution))
    throw Error(where + " has an invalid header (header size " + std::to_string(headerBytes) + ", layer size " +
                std::to_string(layerBytes) + ", resolution " + std::to_string(resolution) +
                "); it is corrupted: " + kRebake);
  // Every quantity below is bounded (R ≤ 8192, layerCount ≤ size/24), so none of this overflows.
  const std::uint64_t offsetCount = 3ull * resolution * resolution + 1;
  if (layerCount > size / sizeof(PackedLayer))
    throw Error(where + " claims " + std::to_string(layerCount) + " layers, more than its " + std::to_string(size) +
                " bytes can hold; it is truncated or corrupted: " + kRebake);
  const std::uint64_t expectedSize =
      kStoreHeaderBytes + offsetCount * sizeof(std::uint32_t) + layerCount * sizeof(PackedLayer) + 8;
  if (size != expectedSize)
    throw Error(
        where + " has " + std::to_string(size) + " bytes but its header describes " + std::to_string(expectedSize) +
        (size < expectedSize ? "; it is truncated (interrupted copy?): " : "; it has trailing bytes: ") + kRebake);
  const auto storedSum = readAt<std::uint64_t>(bytes, size - 8);
  const std::uint64_t actualSum = fnv1a64(bytes.first(size - 8));
  if (storedSum != actualSum)
    throw Error(where + " is corrupted (checksum " + hex(actualSum) + ", recorded " + hex(storedSum) + "); " + kRebake);

  LdcParams params;
  params.sceneFingerprint = readAt<std::uint64_t>(bytes, 16);
  const auto vplCount = readAt<std::uint64_t>(bytes, 24);
  params.resolution = static_cast<int>(resolution);
  for (int k = 0; k < 3; ++k) {
    params.bounds.lo[k] = readAt<float>(bytes, 48 + 4 * static_cast<std::size_t>(k));
    params.bounds.hi[k] = readAt<float>(bytes, 60 + 4 * static_cast<std::size_t>(k));
  }
  params.margin = readAt<float>(bytes, 72);
  params.epsDistance = readAt<float>(bytes, 76);
  params.epsNormal = readAt<float>(bytes, 80);
  const auto compensation = readAt<std::uint32_t>(bytes, 84);
  std::vector<std::uint32_t> offsets(offsetCount);
  std::memcpy(offsets.data(), bytes.data() + kStoreHeaderBytes, offsetCount * sizeof(std::uint32_t));
  std::vector<PackedLayer> layers(layerCount);
  if (layerCount > 0)  // a store with no layers has no array: memcpy to its null data() is undefined
    std::memcpy(layers.data(), bytes.data() + kStoreHeaderBytes + offsetCount * sizeof(std::uint32_t),
                layerCount * sizeof(PackedLayer));

  std::optional<LayeredDepthCube> store;
  try {
    // ε = 0 would be silently replaced by a default: a stored file always holds resolved, positive values.
    if (!(params.epsDistance > 0.0f) || !(params.epsNormal > 0.0f)) throw Error("epsilon parameters are not positive");
    const LdcParams resolved = resolveParams(params);
    store.emplace(resolved, vplCount, std::move(offsets), std::move(layers));
    if (compensation >> 24 != 0) throw Error("the bias compensation field's high byte is not zero");
    store->setBiasCompensation(compensation & 0xffffu, (compensation >> 16) & 0xffu);
  } catch (const Error& e) {
    throw Error(where + " passed its checksum but is inconsistent (" + e.what() + "); " + kRebake);
  }
  if (expectedFingerprint && *expectedFingerprint != params.sceneFingerprint)
    throw Error(where + " was baked for scene fingerprint " + hex(params.sceneFingerprint) +
                " but the current scene has " + hex(*expectedFingerprint) +
                "; the scene changed since the bake: re-bake the store for this scene");
  return std::move(*store);
}

void saveStore(const LayeredDepthCube& store, const std::filesystem::path& path) {
  const std::vector<std::byte> bytes = serializeStore(store);
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  if (!out)
    throw Error("cannot write store file '" + path.string() + "'; check that the directory exists and is writable");
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
  out.flush();
  if (!out) throw Error("writing store file '" + path.string() + "' failed (disk full?); free space and bake again");
}

LayeredDepthCube loadStore(const std::filesystem::path& path, std::optional<std::uint64_t> expectedFingerprint) {
  std::error_code error;
  if (std::filesystem::exists(path, error) && !std::filesystem::is_regular_file(path, error))
    throw Error("store file '" + path.string() + "' is a folder, FIFO or device, not a regular file; give the path "
                "of a store baked with ibrr bake");  // opening a FIFO would block
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error("cannot open store file '" + path.string() + "'; check the path, or bake one with ibrr bake");
  in.seekg(0, std::ios::end);
  const std::streamoff length = in.tellg();
  in.seekg(0, std::ios::beg);
  if (length < 0) throw Error("cannot read the size of store file '" + path.string() + "'; check the file");
  std::vector<char> raw(static_cast<std::size_t>(length));
  in.read(raw.data(), length);
  if (!in) throw Error("reading store file '" + path.string() + "' failed; check the file and the disk");
  return deserializeStore(std::as_bytes(std::span<const char>(raw)), path.string(), expectedFingerprint);
}

}  // namespace ibrr
