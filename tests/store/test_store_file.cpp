// The store file: exact round trip, clear errors for every kind of bad file, and a mutation fuzz.

#include "store_test_scenes.hpp"

#include "ibrr/checksum.hpp"
#include "ibrr/error.hpp"
#include "ibrr/store_file.hpp"

#include <catch2/catch.hpp>

#include <cstring>
#include <filesystem>
#include <fstream>
#include <random>

using namespace ibrr;
using namespace ibrr::test;

namespace {

constexpr std::uint64_t kFingerprint = 0x1234abcd5678ef00ull;

std::vector<std::byte> smallStoreBytes() {
  const AnalyticScene scene = boxRoom();
  return serializeStore(build(scene, boxRoomLights(), 16, 32, SplatKernel::Box, kFingerprint));
}

// Recomputes the trailing checksum so a mutation reaches the structural checks behind it.
void resealChecksum(std::vector<std::byte>& bytes) {
  if (bytes.size() < 8) return;
  const std::uint64_t sum = fnv1a64(std::span(bytes).first(bytes.size() - 8));
  std::memcpy(bytes.data() + bytes.size() - 8, &sum, 8);
}

// The error message for these bytes, or "" if they load.
std::string loadError(const std::vector<std::byte>& bytes, std::optional<std::uint64_t> expected = std::nullopt) {
  try {
    (void)deserializeStore(bytes, "test.ldc", expected);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

bool contains(const std::string& text, const char* part) { return text.find(part) != std::string::npos; }

std::filesystem::path tempDir() {
  const auto dir = std::filesystem::temp_directory_path() / "ibrr_store_tests";
  std::filesystem::create_directories(dir);
  return dir;
}

}  // namespace

TEST_CASE("save and load round-trip exactly", "[store][file]") {
  const AnalyticScene scene = boxRoom();
  const LayeredDepthCube store = build(scene, boxRoomLights(), 64, 128, SplatKernel::Gaussian, kFingerprint);
  const auto path = tempDir() / "roundtrip.ldc";
  saveStore(store, path);
  CHECK_FALSE(std::filesystem::exists(path.string() + ".tmp"));
  const LayeredDepthCube loaded = loadStore(path, kFingerprint);
  CHECK(sameLayout(loaded.params(), store.params()));
  CHECK(loaded.vplCount() == 3);
  REQUIRE(loaded.layers().size() == store.layers().size());
  CHECK(std::memcmp(loaded.layers().data(), store.layers().data(), store.layers().size_bytes()) == 0);
  CHECK(std::equal(loaded.offsets().begin(), loaded.offsets().end(), store.offsets().begin()));
  CHECK(serializeStore(loaded) == serializeStore(store));
  const glm::vec3 p(2.0f, 0.0f, 2.5f), n(0, 1, 0);
  CHECK(*loaded.radiosity(p, n) == *store.radiosity(p, n));
  std::filesystem::remove(path);
}

// Found by tests/fuzz/fuzz_store: loading a store without layers passed memcpy a null pointer, which
// UBSan (the store suite's sanitizer build) reports as undefined behaviour.
TEST_CASE("a store with no layers round-trips", "[store][file]") {
  const LayeredDepthCube empty = build(boxRoom(), {}, 4, 8, SplatKernel::Box, kFingerprint);
  REQUIRE(empty.layers().empty());
  const std::vector<std::byte> bytes = serializeStore(empty);
  const LayeredDepthCube loaded = deserializeStore(bytes, "empty.ibrr", kFingerprint);
  CHECK(loaded.layers().empty());
  CHECK(serializeStore(loaded) == bytes);
  CHECK_FALSE(loaded.radiosity(glm::vec3(2.0f, 0.0f, 2.5f), glm::vec3(0, 1, 0)));
}

TEST_CASE("truncated store files give a clear error", "[store][file]") {
  const auto bytes = smallStoreBytes();
  const std::size_t offsetsEnd = kStoreHeaderBytes + 4 * (3 * 16 * 16 + 1);
  for (std::size_t cut :
       {std::size_t{0}, std::size_t{4}, std::size_t{8}, std::size_t{11}, std::size_t{12}, std::size_t{50},
        kStoreHeaderBytes - 1, kStoreHeaderBytes, kStoreHeaderBytes + 8, offsetsEnd / 2, offsetsEnd, offsetsEnd + 100,
        bytes.size() - 9, bytes.size() - 8, bytes.size() - 1}) {
    const std::vector<std::byte> cutBytes(bytes.begin(), bytes.begin() + static_cast<std::ptrdiff_t>(cut));
    const std::string err = loadError(cutBytes);
    INFO("cut at " << cut << ": " << err);
    CHECK(err.find("truncated") != std::string::npos);
    CHECK(err.find("test.ldc") != std::string::npos);
  }
  // On disk too, with the path in the message.
  const auto path = tempDir() / "truncated.ldc";
  {
    std::ofstream out(path, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size() / 2));
  }
  try {
    (void)loadStore(path);
    FAIL("a truncated file loaded");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find(path.string()) != std::string::npos);
    CHECK(std::string(e.what()).find("truncated") != std::string::npos);
  }
  std::filesystem::remove(path);
  try {
    (void)loadStore(tempDir() / "does_not_exist.ldc");
    FAIL("a missing file loaded");
  } catch (const Error& e) {
    CHECK(contains(e.what(), "cannot open"));
  }
}

TEST_CASE("flipped bytes, wrong magic, wrong version and wrong scene are refused", "[store][file]") {
  const auto bytes = smallStoreBytes();
  REQUIRE(loadError(bytes).empty());
  // A flipped bit anywhere is caught (by the magic, version, header or checksum checks).
  int caught = 0, tried = 0;
  for (std::size_t pos = 0; pos < bytes.size(); pos += 37) {
    for (std::uint8_t mask : {std::uint8_t{0x01}, std::uint8_t{0x80}}) {
      auto bad = bytes;
      bad[pos] ^= std::byte{mask};
      ++tried;
      if (!loadError(bad).empty()) ++caught;
    }
  }
  CHECK(caught == tried);
  {
    auto bad = bytes;
    bad[0] = std::byte{'X'};
    CHECK(contains(loadError(bad), "not an ibrr radiosity store"));
  }
  {
    auto bad = bytes;
    const std::uint32_t version = kStoreVersion + 1;
    std::memcpy(bad.data() + 8, &version, 4);
    resealChecksum(bad);
    CHECK((contains(loadError(bad), "version 2") && contains(loadError(bad), "re-bake")));
  }
  {
    auto bad = bytes;
    bad[kStoreHeaderBytes + 200] ^= std::byte{0x10};
    CHECK((contains(loadError(bad), "corrupted") && contains(loadError(bad), "checksum")));
  }
  CHECK((contains(loadError(bytes, kFingerprint + 1), "fingerprint") &&
         contains(loadError(bytes, kFingerprint + 1), "re-bake")));
  CHECK(loadError(bytes, kFingerprint).empty());
  {
    // Trailing garbage.
    auto bad = bytes;
    bad.push_back(std::byte{0});
    CHECK(contains(loadError(bad), "trailing"));
  }
  {
    // A decreasing offset behind a valid checksum.
    auto bad = bytes;
    const std::uint32_t big = 0xfffffff0u;
    std::memcpy(bad.data() + kStoreHeaderBytes + 4 * 10, &big, 4);
    resealChecksum(bad);
    CHECK(contains(loadError(bad), "inconsistent"));
  }
  {
    // A NaN radiosity behind a valid checksum.
    auto bad = bytes;
    const std::size_t layers = kStoreHeaderBytes + 4 * (3 * 16 * 16 + 1);
    const float nan = std::numeric_limits<float>::quiet_NaN();
    std::memcpy(bad.data() + layers + 8, &nan, 4);
    resealChecksum(bad);
    CHECK(contains(loadError(bad), "non-finite"));
  }
}

TEST_CASE("fuzz: thousands of mutated store files never crash", "[store][file][fuzz]") {
  const auto bytes = smallStoreBytes();
  std::mt19937_64 rng(20240522);
  int loaded = 0, refused = 0;
  for (int iteration = 0; iteration < 3000; ++iteration) {
    auto bad = bytes;
    const int kind = iteration % 4;
    if (kind == 0 || kind == 1) {  // random byte changes, half of them resealed to reach the deep checks
      const int count = 1 + static_cast<int>(rng() % 8);
      for (int k = 0; k < count; ++k) {
        // Bias towards the header, where the interesting fields are.
        const std::size_t pos = (rng() % 2) ? rng() % kStoreHeaderBytes : rng() % bad.size();
        bad[pos] = static_cast<std::byte>(rng());
      }
      if (kind == 1) resealChecksum(bad);
    } else if (kind == 2) {  // truncate or extend
      const std::size_t size = rng() % (bytes.size() + 64);
      bad.resize(size, static_cast<std::byte>(rng()));
      if (rng() % 2) resealChecksum(bad);
    } else {  // overwrite a random 32-bit field with an extreme value, resealed
      const std::uint32_t extremes[] = {0u,          1u,          0x7fffffffu,
                                        0x80000000u, 0xffffffffu, 0x7f800000u,
                                        0x7fc00000u, 0xff800000u, static_cast<std::uint32_t>(rng())};
      const std::uint32_t value = extremes[rng() % 9];
      const std::size_t pos = (rng() % bad.size()) & ~std::size_t{3};
      if (pos + 4 <= bad.size()) std::memcpy(bad.data() + pos, &value, 4);
      resealChecksum(bad);
    }
    try {
      const LayeredDepthCube store = deserializeStore(bad, "fuzz.ldc");
      // Whatever loaded must be usable: queries and stats stay in bounds.
      const StoreStats s = store.stats();
      CHECK(s.layerCount == store.layers().size());
      for (const glm::vec3& p : {glm::vec3(2, 0, 2.5f), glm::vec3(0, 1.5f, 2), glm::vec3(4, 3, 5)})
        for (RetrievalFilter f : {RetrievalFilter::Nearest, RetrievalFilter::Bilinear, RetrievalFilter::Average})
          (void)store.radiosity(p, glm::vec3(0, 1, 0), f);
      ++loaded;
    } catch (const Error& e) {
      CHECK(std::string(e.what()).find("fuzz.ldc") != std::string::npos);
      ++refused;
    }
  }
  CHECK(loaded + refused == 3000);
  CHECK(refused > 2000);  // most mutations are caught; the rest are valid stores with other values
}
