#include "bake/gpu_insertion.hpp"

#include "gpu/debug.hpp"
#include "gpu/memory.hpp"
#include "gpu/shader.hpp"
#include "ibrr/octahedral.hpp"
#include "shaders/interface.glsl"
#include "util/error.hpp"

#include <glm/gtc/type_ptr.hpp>

#include <algorithm>
#include <limits>
#include <string>

namespace ibrr::bake {
namespace {

// Bindings of shaders/ldc_insertion.glsl and uniform locations of shaders/ldc_insert.comp (shaders/interface.glsl).
enum Binding : GLuint {
  kOffsets = IBRR_B_WARP_OFFSETS,
  kPlanes = IBRR_B_WARP_PLANES,
  kSums = IBRR_B_WARP_SUMS,
  kStamps = IBRR_B_WARP_STAMPS,
  kTouched = IBRR_B_WARP_TOUCHED,
  kTotals = IBRR_B_WARP_TOTALS,
  kControl = IBRR_B_WARP_CONTROL,
  kExtraHeads = IBRR_B_WARP_EXTRA_HEADS,
  kExtraNext = IBRR_B_WARP_EXTRA_NEXT,
  kBirths = IBRR_B_WARP_BIRTHS,
  kMisses = IBRR_B_WARP_MISSES,
  kHemicubeRecords = IBRR_B_WARP_HEMICUBES,
  kMissHeads = IBRR_B_WARP_MISS_HEADS,
  kMissedPixels = IBRR_B_WARP_MISSED_PIXELS,
  kBindingCount = IBRR_B_WARP_COUNT
};
enum InsertUniform : GLint {
  kFirstHemicube = IBRR_U_WARP_FIRST_HEMICUBE,
  kGroup = IBRR_U_WARP_GROUP,
  kClamp = IBRR_U_WARP_CLAMP,
  kOrigin = IBRR_U_WARP_ORIGIN,
  kInvPixelSize = IBRR_U_WARP_INV_PIXEL_SIZE,
  kLdcResolution = IBRR_U_WARP_LDC_RESOLUTION,
  kEpsDistance = IBRR_U_WARP_EPS_DISTANCE,
  kMinCos = IBRR_U_WARP_MIN_COS,
  kGaussian = IBRR_U_WARP_GAUSSIAN,
  kMinArea = IBRR_U_WARP_MIN_AREA,
  kMinFootprintCosU = IBRR_U_WARP_MIN_FOOTPRINT_COS,
  kSplatCoverageU = IBRR_U_WARP_SPLAT_COVERAGE,
  kMaxHalfExtentU = IBRR_U_WARP_MAX_HALF_EXTENT,
  kGaussianCutoff2U = IBRR_U_WARP_GAUSSIAN_CUTOFF2,
  kEdgeSlackU = IBRR_U_WARP_EDGE_SLACK,
  kMissPass = IBRR_U_WARP_MISS_PASS,
  kEdgeNormalCosU = IBRR_U_WARP_EDGE_NORMAL_COS,
  kEdgeMeetFootprints2U = IBRR_U_WARP_EDGE_MEET_FOOTPRINTS2,
  kMaxEdgeReachU = IBRR_U_WARP_MAX_EDGE_REACH,
  kEdgeSweepU = IBRR_U_WARP_EDGE_SWEEP,
  kMergeNormalCosU = IBRR_U_WARP_MERGE_NORMAL_COS,
  kMergeOffPlane2U = IBRR_U_WARP_MERGE_OFF_PLANE2,
  kMergeApart2U = IBRR_U_WARP_MERGE_APART2
};
// Uniform locations of shaders/ldc_flush.comp.
enum FlushUniform : GLint {
  kFlushFirstHemicube = IBRR_U_FLUSH_FIRST_HEMICUBE,
  kPixelArea = IBRR_U_FLUSH_PIXEL_AREA,
  kFlushHemicubes = IBRR_U_FLUSH_HEMICUBES
};
// Uniform locations of shaders/ldc_open.comp.
enum OpenUniform : GLint { kOpenEpsDistance = IBRR_U_OPEN_EPS_DISTANCE, kOpenMinCos = IBRR_U_OPEN_MIN_COS };
// Words of the control buffer (shaders/ldc_insertion.glsl): the indirect dispatches, the lists' counts, the
// layers and the counters.
enum ControlWord : std::uint32_t {
  kGroups = 0,
  kTouchedCount = 3,
  kWritesLow = 4,
  kWritesHigh = 5,
  kDropped = 6,
  kUnopened = 7,
  kSamplesLow = 8,
  kSamplesHigh = 9,
  kMissCount = 10,
  kMissCapacity = 11,
  kOpenGroups = 12,
  kMissedPixelCount = 15,
  kLayerCount = 16,
  kLayerCapacity = 17,
  kLayersWithoutRoom = 18,
  kControlWords = 19
};
constexpr std::size_t kBatchesInFlight = 2;  // the warp's batches the GPU may be working on at once
constexpr std::uint32_t kLayerCountRingSlots = 4;
constexpr GLuint kInsertGroup = 8;             // ldc_insert.comp local size, each side
constexpr float kMinSampleAreaPixels = 1e-9f;  // as ibrr/ldc_builder.cpp: a zero footprint still counts, barely
// Per-layer buffers: bytes per layer for the sums (of one hemicube), stamps, touched list, totals, planes, next
// links, births.
constexpr std::size_t kSumBytes = 16, kStampBytes = 4, kTouchedBytes = 4, kTotalBytes = 16, kPlaneBytes = 16,
                      kNextBytes = 4, kBirthBytes = 8;
// The miss list: three blocks of uvec4, one entry each (shaders/ldc_insertion.glsl, b_misses), and its pixels.
constexpr std::size_t kMissBlocks = 3, kMissEntryBytes = kMissBlocks * 16, kMissedPixelBytes = 4;
// Every per-layer buffer, a set of sums included.
constexpr std::uint64_t kBytesPerLayer =
    kPlaneBytes + kSumBytes + kStampBytes + kTouchedBytes + kTotalBytes + kNextBytes + kBirthBytes;
// The sums of a dispatch's hemicubes, a set a hemicube: at most an eighth of the GPU's free memory, 64 MiB on a
// software GL (whose memory is the process's).
constexpr std::uint64_t kSoftwareSumBudget = 64u << 20;

// A buffer of `bytes` (at least 16) with `word` in every 32-bit word, created with that content rather than
// cleared. On the NVIDIA driver (580.159, an H200), glNamedBufferSubData into a buffer just cleared with
// glClearNamedBufferData was lost, even after a glFinish: the seeded planes read back as zeros, so no sample
// matched a seeded layer (with a glFinish between the clear and the upload the data stayed).
gpu::Buffer filledBuffer(std::size_t bytes, std::uint32_t word) {
  const std::size_t size = std::max<std::size_t>(bytes, 16);
  const std::vector<std::uint32_t> words((size + 3) / 4, word);
  return gpu::Buffer(GLsizeiptr(size), words.data(), GL_DYNAMIC_STORAGE_BIT);
}

// A larger copy of `buffer`: its first `used` bytes kept, the rest filled with `word`.
void growBuffer(gpu::Buffer& buffer, std::size_t used, std::size_t bytes, std::uint32_t word) {
  gpu::Buffer grown = filledBuffer(bytes, word);
  if (used > 0) glCopyNamedBufferSubData(buffer.id(), grown.id(), 0, 0, GLsizeiptr(used));
  buffer = std::move(grown);
}

template <class T>
std::vector<T> readBack(const gpu::Buffer& buffer, std::size_t count) {
  std::vector<T> values(count);
  if (count > 0) glGetNamedBufferSubData(buffer.id(), 0, GLsizeiptr(count * sizeof(T)), values.data());
  return values;
}

// The most layers a batch can open: one a texel in use.
std::uint64_t texelsInUse(std::span<const GpuInsertion::Hemicube> batch) {
  std::uint64_t texels = 0;
  for (const GpuInsertion::Hemicube& hemicube : batch) {
    const gpu::HemicubeCapture& layout = *hemicube.layout;
    texels += std::uint64_t(layout.resolution) * std::uint64_t(layout.atlasRows());
  }
  return texels;
}

}  // namespace

std::uint64_t GpuInsertion::missListBytes(int maxHemicubeResolution, int slots) {
  // Every texel of a full cube at the largest H can miss, in every slot.
  return kMissEntryBytes * 6 * std::uint64_t(maxHemicubeResolution) * std::uint64_t(maxHemicubeResolution) *
         std::uint64_t(slots);
}

std::uint64_t GpuInsertion::slotBytes(int maxHemicubeResolution) {
  const std::uint64_t texels = 6 * std::uint64_t(maxHemicubeResolution) * std::uint64_t(maxHemicubeResolution);
  return missListBytes(maxHemicubeResolution, 1) + texels * (kMissedPixelBytes + kBatchesInFlight * kBytesPerLayer);
}

GpuInsertion::GpuInsertion(const LdcBuilder& seeded, SplatKernel kernel, int maxHemicubeResolution, int slots)
    : m_params(seeded.params()),
      m_frame(seeded.frame()),
      m_insert(gpu::loadProgram({"ldc_insert.comp"})),
      m_open(gpu::loadProgram({"ldc_open.comp"})),
      m_flush(gpu::loadProgram({"ldc_flush.comp"})) {
  IBRR_CHECK(seeded.stats().hemicubes == 0, "the GPU insertion starts from a store with no hemicube in it");
  LdcBuilder::Planes planes = seeded.planes();
  m_offsets = std::move(planes.offsets);
  m_seedLayers = planes.planes.size();
  m_knownLayers = m_seedLayers;
  const std::optional<std::uint64_t> free = gpu::availableVideoMemoryBytes();
  m_sumBudget = free ? *free / 8 : kSoftwareSumBudget;
  m_records.assign(std::size_t(std::max(slots, 1)), HemicubeRecord{});  // a slot each
  m_missCapacity = std::uint32_t(missListBytes(maxHemicubeResolution, slots) / kMissEntryBytes);
  // The memory for the seeds and for two full batches of full cubes to open a layer a texel is checked up front;
  // the buffers hold the seeds and grow as the batches in flight need (makeLayerRoom).
  checkVideoMemory(m_seedLayers + kBatchesInFlight * std::size_t(m_missCapacity), maxHemicubeResolution, slots);
  m_offsetBuffer = gpu::Buffer(GLsizeiptr(m_offsets.size() * sizeof(std::uint32_t)), m_offsets.data(), 0);
  m_extraHeadBuffer = filledBuffer(std::size_t(m_frame.pixelCount()) * sizeof(std::int32_t), 0xFFFFFFFFu);
  m_missHeadBuffer = filledBuffer(std::size_t(m_frame.pixelCount()) * sizeof(std::int32_t), 0xFFFFFFFFu);
  std::uint32_t control[kControlWords] = {0, 1, 1};
  control[kMissCapacity] = m_missCapacity;
  control[kOpenGroups + 1] = control[kOpenGroups + 2] = 1;
  control[kLayerCount] = std::uint32_t(m_seedLayers);
  m_controlBuffer = gpu::Buffer(GLsizeiptr(sizeof control), control, GL_DYNAMIC_STORAGE_BIT);
  reserveLayers(m_seedLayers + m_seedLayers / 16 + 1024);
  if (!planes.planes.empty())
    glNamedBufferSubData(m_planeBuffer.id(), 0, GLsizeiptr(planes.planes.size() * sizeof(glm::vec4)),
                         planes.planes.data());
  m_recordBuffer = gpu::Buffer(GLsizeiptr(m_records.size() * sizeof(HemicubeRecord)), m_records.data(),
                               GL_DYNAMIC_STORAGE_BIT);
  m_missBuffer = filledBuffer(std::size_t(m_missCapacity) * kMissEntryBytes, 0);
  m_missedPixelBuffer = filledBuffer(std::size_t(m_missCapacity) * kMissedPixelBytes, 0);
  constexpr GLbitfield kMapping = GL_MAP_READ_BIT | GL_MAP_PERSISTENT_BIT | GL_MAP_COHERENT_BIT;
  m_layerCountRing = gpu::Buffer(GLsizeiptr(kLayerCountRingSlots * 4), nullptr, kMapping);
  m_layerCounts = static_cast<const volatile std::uint32_t*>(
      glMapNamedBufferRange(m_layerCountRing.id(), 0, GLsizeiptr(kLayerCountRingSlots * 4), kMapping));
  if (m_layerCounts == nullptr) throw Error("the GL could not map the GPU warp's layer counts; bake with --warp cpu");

  const GLuint id = m_insert.id();
  glProgramUniform3fv(id, kOrigin, 1, glm::value_ptr(m_frame.origin()));
  glProgramUniform1f(id, kInvPixelSize, m_frame.invPixelSize());
  glProgramUniform1i(id, kLdcResolution, m_frame.resolution());
  glProgramUniform1f(id, kEpsDistance, m_params.epsDistance);
  glProgramUniform1f(id, kMinCos, 1.0f - m_params.epsNormal);
  glProgramUniform1i(id, kGaussian, kernel == SplatKernel::Gaussian ? 1 : 0);
  glProgramUniform1f(id, kMinArea, kMinSampleAreaPixels * m_frame.pixelSize() * m_frame.pixelSize());
  glProgramUniform1f(id, kMinFootprintCosU, kMinFootprintCos);
  glProgramUniform1f(id, kSplatCoverageU, kSplatCoverage);
  glProgramUniform1f(id, kMaxHalfExtentU, kMaxSplatHalfExtentPixels);
  glProgramUniform1f(id, kGaussianCutoff2U, kGaussianCutoff * kGaussianCutoff);
  glProgramUniform1f(id, kEdgeSlackU, detail::kEdgeSlack);
  glProgramUniform1f(id, kEdgeNormalCosU, kEdgeNormalCos);
  glProgramUniform1f(id, kEdgeMeetFootprints2U, kEdgeMeetFootprints * kEdgeMeetFootprints);
  glProgramUniform1f(id, kMaxEdgeReachU, kMaxEdgeReach);
  glProgramUniform1f(id, kEdgeSweepU, kEdgeSweep);
  glProgramUniform1f(id, kMergeNormalCosU, kMergeNormalCos);
  glProgramUniform1f(id, kMergeOffPlane2U, kMergeOffPlane2);
  glProgramUniform1f(id, kMergeApart2U, kMergeApart2);
  glProgramUniform1f(m_open.id(), kOpenEpsDistance, m_params.epsDistance);
  glProgramUniform1f(m_open.id(), kOpenMinCos, 1.0f - m_params.epsNormal);
  glProgramUniform1f(m_flush.id(), kPixelArea, m_frame.pixelSize() * m_frame.pixelSize());
  gpu::checkGlError("setting up the GPU insertion");
}

void GpuInsertion::checkVideoMemory(std::size_t layers, int maxHemicubeResolution, int slots) const {
  const std::uint64_t pixels = m_frame.pixelCount();
  const std::uint64_t bytes = layers * kBytesPerLayer + pixels * 12 +  // offsets, extra-layer and miss heads
                              missListBytes(maxHemicubeResolution, slots) + m_missCapacity * kMissedPixelBytes;
  gpu::requireVideoMemory(bytes, "the GPU warp's store at --ldc " + std::to_string(m_frame.resolution()),
                          "bake with --warp cpu or a smaller --ldc");
}

void GpuInsertion::reserveLayers(std::size_t layers) {
  if (layers <= m_capacity) return;
  GLint maxBlock = 0;
  glGetIntegerv(GL_MAX_SHADER_STORAGE_BLOCK_SIZE, &maxBlock);
  if (double(layers) * double(kSumBytes) > double(maxBlock))
    throw Error("the store's " + std::to_string(layers) + " layers need " + std::to_string(layers * kSumBytes >> 20) +
                " MiB buffers, beyond this GL's " + std::to_string(maxBlock >> 20) +
                " MiB; bake with --warp cpu or a smaller --ldc");
  const std::size_t used = m_capacity;
  growBuffer(m_planeBuffer, used * kPlaneBytes, layers * kPlaneBytes, 0);
  growBuffer(m_stampBuffer, used * kStampBytes, layers * kStampBytes, 0);
  growBuffer(m_touchedBuffer, 0, layers * kTouchedBytes, 0);
  growBuffer(m_totalBuffer, used * kTotalBytes, layers * kTotalBytes, 0);
  growBuffer(m_extraNextBuffer, used * kNextBytes, layers * kNextBytes, 0xFFFFFFFFu);
  growBuffer(m_birthBuffer, used * kBirthBytes, layers * kBirthBytes, 0);
  // A set of sums a hemicube of a dispatch, as many as the budget holds (the sums are all zero between dispatches,
  // so the new buffer starts empty).
  const std::uint64_t setBytes = std::uint64_t(layers) * kSumBytes;
  const std::uint64_t budget = std::min<std::uint64_t>(m_sumBudget, std::uint64_t(maxBlock));
  m_dispatchHemicubes = int(std::clamp<std::uint64_t>(budget / setBytes, 1, std::uint64_t(m_records.size())));
  m_sumBuffer = filledBuffer(std::size_t(setBytes) * std::size_t(m_dispatchHemicubes), 0);
  m_capacity = layers;
  setControlWord(kLayerCapacity, std::uint32_t(std::min<std::size_t>(layers, 0xFFFFFFFFu)));
}

void GpuInsertion::setControlWord(std::uint32_t word, std::uint32_t value) const {
  glClearNamedBufferSubData(m_controlBuffer.id(), GL_R32UI, GLintptr(word * 4), 4, GL_RED_INTEGER, GL_UNSIGNED_INT,
                            &value);
}

void GpuInsertion::bindBuffers() const {
  const gpu::Buffer* buffers[kBindingCount] = {
      &m_offsetBuffer,    &m_planeBuffer,     &m_sumBuffer,   &m_stampBuffer, &m_touchedBuffer, &m_totalBuffer,
      &m_controlBuffer,   &m_extraHeadBuffer, &m_extraNextBuffer, &m_birthBuffer, &m_missBuffer,  &m_recordBuffer,
      &m_missHeadBuffer,  &m_missedPixelBuffer};
  for (GLuint b = 0; b < kBindingCount; ++b) glBindBufferBase(GL_SHADER_STORAGE_BUFFER, b, buffers[b]->id());
}

// The batch's hemicube records: each one's slot, layout and stamp (m_hemicubes + 1 + k), its power, and its sums
// (its place in its dispatch). A dispatch takes consecutive hemicubes of one resolution (a dispatch is sized for
// its largest), at most m_dispatchHemicubes: their first indices go to m_dispatchFirsts, with the batch's end.
void GpuInsertion::uploadRecords(std::span<const Hemicube> batch) {
  m_dispatchFirsts.clear();
  for (std::size_t k = 0; k < batch.size(); ++k) {
    const gpu::HemicubeCapture& layout = *batch[k].layout;
    if (k == 0 || k - m_dispatchFirsts.back() == std::size_t(m_dispatchHemicubes) ||
        layout.resolution != batch[m_dispatchFirsts.back()].layout->resolution)
      m_dispatchFirsts.push_back(k);
    const int rows = layout.atlasRows();
    const int sideFaceRows = layout.faces.size() > 1 ? layout.faces[1].rows : layout.resolution;
    const std::size_t sumsBase = (k - m_dispatchFirsts.back()) * m_capacity;
    m_records[k] = {glm::vec4(layout.centre, layout.coverage), glm::vec4(batch[k].power, 0.0f),
                    glm::ivec4(layout.atlasLayer, layout.resolution, rows, sideFaceRows),
                    glm::uvec4(std::uint32_t(m_hemicubes + 1 + k), std::uint32_t(sumsBase), 0u, 0u)};
  }
  m_dispatchFirsts.push_back(batch.size());
  glNamedBufferSubData(m_recordBuffer.id(), 0, GLsizeiptr(batch.size() * sizeof(HemicubeRecord)), m_records.data());
}

// One dispatch over hemicubes [first, first + count) of the batch, a z each, sized for the largest.
void GpuInsertion::dispatchInsert(std::span<const Hemicube> batch, std::size_t first, std::size_t count,
                                  bool missPass) const {
  int resolution = 0, rows = 0;
  for (std::size_t k = first; k < first + count; ++k) {
    const gpu::HemicubeCapture& layout = *batch[k].layout;
    resolution = std::max(resolution, layout.resolution);
    rows = std::max(rows, layout.atlasRows());
  }
  const GLuint id = m_insert.id();
  glProgramUniform1i(id, kMissPass, missPass ? 1 : 0);
  glProgramUniform1i(id, kFirstHemicube, GLint(first));
  m_insert.use();
  // One invocation per 2×2 block's column and per atlas row (ldc_insert.comp, insertBlock).
  const GLuint blockColumns = (GLuint(resolution) + 1) / 2;
  glDispatchCompute((blockColumns + kInsertGroup - 1) / kInsertGroup, (GLuint(rows) + kInsertGroup - 1) / kInsertGroup,
                    GLuint(count));
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_COMMAND_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
}

// Adds the means of hemicubes [first, first + count) to the totals of the layers they touched, in hemicube order,
// and leaves an empty touched list.
void GpuInsertion::flushDispatch(std::size_t first, std::size_t count) const {
  glProgramUniform1i(m_flush.id(), kFlushFirstHemicube, GLint(first));
  glProgramUniform1i(m_flush.id(), kFlushHemicubes, GLint(count));
  m_flush.use();
  glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, m_controlBuffer.id());
  glDispatchComputeIndirect(0);
  glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, 0);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
  setControlWord(kGroups, 0);
  setControlWord(kTouchedCount, 0);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_COMMAND_BARRIER_BIT);
}

// Opens the layers of the misses the miss pass listed (ldc_open.comp), a pixel an invocation, and copies the
// layer count into the batch's slot of the ring.
void GpuInsertion::dispatchOpen() const {
  m_open.use();
  glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, m_controlBuffer.id());
  glDispatchComputeIndirect(GLintptr(kOpenGroups * 4));
  glBindBuffer(GL_DISPATCH_INDIRECT_BUFFER, 0);
  glMemoryBarrier(GL_SHADER_STORAGE_BARRIER_BIT | GL_BUFFER_UPDATE_BARRIER_BIT);
  glCopyNamedBufferSubData(m_controlBuffer.id(), m_layerCountRing.id(), GLintptr(kLayerCount * 4),
                           GLintptr((m_batches % kLayerCountRingSlots) * 4), 4);
}

void GpuInsertion::retireOldestBatch() {
  m_knownLayers = m_layerCounts[m_inFlight.front().ringSlot];
  m_inFlight.pop_front();
}

void GpuInsertion::makeLayerRoom(std::uint64_t layerRoom) {
  while (!m_inFlight.empty() && m_inFlight.front().done.finished()) retireOldestBatch();
  if (m_inFlight.size() + 1 > kBatchesInFlight) {
    m_inFlight.front().done.wait();
    ++m_batchWaits;
    retireOldestBatch();
  }
  std::uint64_t bound = m_knownLayers + layerRoom;
  for (const BatchInFlight& batch : m_inFlight) bound += batch.layerRoom;
  if (bound > m_capacity) reserveLayers(std::size_t(bound + bound / 8));
}

void GpuInsertion::insert(const gpu::HemicubeRenderer& atlas, std::span<const Hemicube> batch, float clamp) {
  if (batch.empty()) return;
  IBRR_CHECK(batch.size() <= m_records.size(), "a GPU insertion batch within the slots it was made for");
  if (m_hemicubes + batch.size() >= std::numeric_limits<std::uint32_t>::max())
    throw Error("the GPU insertion takes at most 2^32-2 hemicubes; bake with --warp cpu");
  gpu::DebugGroup group("LDC insertion");
  const std::uint64_t layerRoom = texelsInUse(batch);
  makeLayerRoom(layerRoom);
  glProgramUniform1f(m_insert.id(), kClamp, clamp);
  uploadRecords(batch);
  bindBuffers();
  glBindTextureUnit(IBRR_T_WARP_POSITION, atlas.positionTexture());
  glBindTextureUnit(IBRR_T_WARP_NORMAL, atlas.normalTexture());
  glMemoryBarrier(GL_TEXTURE_FETCH_BARRIER_BIT);  // the atlas was rendered by the commands before

  // The misses of every hemicube of the batch, in one dispatch, against the layers opened before the batch; then
  // their layers, opened in sample order.
  setControlWord(kMissCount, 0);
  setControlWord(kOpenGroups, 0);
  setControlWord(kMissedPixelCount, 0);
  dispatchInsert(batch, 0, batch.size(), true);
  dispatchOpen();
  // Then the batch's hemicubes, as many a dispatch as their sums fit (uploadRecords), each dispatch flushed in
  // hemicube order.
  for (std::size_t d = 0; d + 1 < m_dispatchFirsts.size(); ++d) {
    const std::size_t first = m_dispatchFirsts[d], count = m_dispatchFirsts[d + 1] - first;
    glProgramUniform1ui(m_insert.id(), kGroup, ++m_dispatches);
    dispatchInsert(batch, first, count, false);
    flushDispatch(first, count);
  }
  m_inFlight.push_back({gpu::Fence::afterCommandsSoFar(), layerRoom, m_batches % kLayerCountRingSlots});
  ++m_batches;
  m_hemicubes += batch.size();
}

GpuInsertionStats GpuInsertion::stats() const {
  std::uint32_t control[kControlWords];
  glGetNamedBufferSubData(m_controlBuffer.id(), 0, GLsizeiptr(sizeof control), control);
  GpuInsertionStats stats;
  stats.hemicubes = m_hemicubes;
  stats.samples = (std::uint64_t(control[kSamplesHigh]) << 32) | control[kSamplesLow];
  stats.pixelWrites = (std::uint64_t(control[kWritesHigh]) << 32) | control[kWritesLow];
  stats.droppedSamples = control[kDropped];
  stats.openedLayers = std::min(control[kLayerCount], std::uint32_t(m_capacity)) - m_seedLayers;
  stats.batchWaits = m_batchWaits;
  stats.dispatches = m_dispatches;
  return stats;
}

LayeredDepthCube GpuInsertion::finalize() const {
  std::uint32_t control[kControlWords];
  glGetNamedBufferSubData(m_controlBuffer.id(), 0, GLsizeiptr(sizeof control), control);
  IBRR_CHECK(control[kLayersWithoutRoom] == 0, "the GPU warp's layer buffers had room for every layer it opened");
  if (!m_inFlight.empty()) {  // the ring, which sized the buffers, read the last batch's count as the buffer holds it
    m_inFlight.back().done.wait();
    IBRR_CHECK(m_layerCounts[m_inFlight.back().ringSlot] == control[kLayerCount],
               "the GPU warp's layer count read through the ring is the control buffer's");
  }
  const std::size_t layerCount = control[kLayerCount];
  const auto planes = readBack<glm::vec4>(m_planeBuffer, layerCount);
  const auto totals = readBack<glm::vec4>(m_totalBuffer, layerCount);
  const auto extraNext = readBack<std::int32_t>(m_extraNextBuffer, layerCount);
  const auto extraHead = readBack<std::int32_t>(m_extraHeadBuffer, m_frame.pixelCount());
  gpu::checkGlError("reading the store back from the GPU");
  // Store order: pixel by pixel, the seeds' layers and then those opened later, in the order they were opened.
  std::vector<std::uint32_t> offsets(m_offsets.size());
  std::vector<PackedLayer> layers;
  layers.reserve(layerCount);
  auto pack = [&](std::size_t l) {
    const glm::vec4& plane = planes[l];
    const glm::vec4& total = totals[l];
    layers.push_back(PackedLayer{octEncode(glm::vec3(plane)), plane.w, total.x, total.y, total.z,
                                 static_cast<std::uint32_t>(total.w)});
  };
  for (std::size_t g = 0; g + 1 < m_offsets.size(); ++g) {
    offsets[g] = static_cast<std::uint32_t>(layers.size());
    for (std::uint32_t l = m_offsets[g]; l < m_offsets[g + 1]; ++l) pack(l);
    for (std::int32_t l = extraHead[g]; l >= 0; l = extraNext[std::size_t(l)]) pack(std::size_t(l));
  }
  offsets.back() = static_cast<std::uint32_t>(layers.size());
  return LayeredDepthCube(m_params, m_hemicubes, std::move(offsets), std::move(layers));
}

}  // namespace ibrr::bake
