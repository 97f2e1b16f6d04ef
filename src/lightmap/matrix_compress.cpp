// Compression of the k-bounce matrix (paper §3.5): exact top entries, log-mapped 8-bit remainder in
// BC1 blocks, rows and columns reordered by the nearest-neighbour chain. See lightmap/matrix.hpp.
#include "lightmap/matrix.hpp"

#include "util/error.hpp"

#include <tbb/blocked_range.h>
#include <tbb/parallel_for.h>
#include <tbb/parallel_reduce.h>

#include <cstring>  // stb_dxt uses memcpy without including it
#define STB_DXT_STATIC
#define STB_DXT_IMPLEMENTATION
#include <stb_dxt.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>

namespace ibrr::lightmap {
namespace {

// 5/6-bit endpoint → 8 bits by bit replication.
glm::ivec3 expand565(std::uint32_t c) {
  const int r = int((c >> 11) & 31u), g = int((c >> 5) & 63u), b = int(c & 31u);
  return {(r << 3) | (r >> 2), (g << 2) | (g >> 4), (b << 3) | (b >> 2)};
}

// q = round(255 (ln(v / scale) + R) / R) in [1, 255]; 0 when v < scale·e^−R (or v ≤ 0).
std::uint8_t quantize(float v, float scale, float range) {
  if (!(v > 0.0f) || !(scale > 0.0f)) return 0;
  const float x = (std::log(v / scale) + range) / range;
  if (x <= 0.5f / 255.0f) return 0;
  return std::uint8_t(std::clamp(std::lround(255.0f * x), 1l, 255l));
}
float dequantize(int q, float scale, float range) {
  return q > 0 ? scale * std::exp(range * (float(q) / 255.0f - 1.0f)) : 0.0f;
}

// Squared Euclidean distance of two byte vectors.
#if defined(__GNUC__) && defined(__x86_64__) && !defined(__clang__)
__attribute__((target_clones("arch=haswell", "default")))
#endif
std::uint64_t
distance2(const std::uint8_t* a, const std::uint8_t* b, std::size_t count) {
  std::uint32_t sum = 0;  // ≤ 255² · 3 · 20000 < 2³²
  for (std::size_t k = 0; k < count; ++k) {
    const int d = int(a[k]) - int(b[k]);
    sum += std::uint32_t(d * d);
  }
  return sum;
}

// The paper's heuristic: the first vector stays first, then always the nearest of the remaining
// ones to the last placed (ties: the lowest index). `vectors` holds n vectors of `length` bytes.
std::vector<std::uint32_t> nearestNeighbourChain(const std::vector<std::uint8_t>& vectors, std::size_t n,
                                                 std::size_t length) {
  std::vector<std::uint32_t> order;
  order.reserve(n);
  std::vector<std::uint32_t> remaining(n);
  std::iota(remaining.begin(), remaining.end(), 0u);
  std::uint32_t current = 0;
  remaining.erase(remaining.begin());
  order.push_back(current);
  struct Best {
    std::uint64_t distance = std::numeric_limits<std::uint64_t>::max();
    std::size_t position = 0;
  };
  while (!remaining.empty()) {
    const std::uint8_t* from = vectors.data() + std::size_t(current) * length;
    const Best best = tbb::parallel_reduce(
        tbb::blocked_range<std::size_t>(0, remaining.size(), 64), Best{},
        [&](const tbb::blocked_range<std::size_t>& range, Best b) {
          for (std::size_t k = range.begin(); k != range.end(); ++k) {
            const std::uint64_t d = distance2(from, vectors.data() + std::size_t(remaining[k]) * length, length);
            if (d < b.distance || (d == b.distance && k < b.position)) b = {d, k};
          }
          return b;
        },
        [](const Best& a, const Best& b) {
          return (a.distance < b.distance || (a.distance == b.distance && a.position < b.position)) ? a : b;
        });
    current = remaining[best.position];
    remaining.erase(remaining.begin() + std::ptrdiff_t(best.position));
    order.push_back(current);
  }
  return order;
}

// The decoded remainder of stored row r (paddedSize texels, per channel the dequantised value).
void decodeStoredRow(const CompressedMatrix& m, std::size_t r, std::vector<glm::vec3>& row) {
  const std::size_t blocksPerRow = std::size_t(m.paddedSize) / 4;
  row.resize(std::size_t(m.paddedSize));
  const glm::vec3 scale = m.rowScale[r];
  for (std::size_t b = 0; b < blocksPerRow; ++b) {
    const std::array<glm::u8vec3, 16> texels = decodeBc1Block(m.blocks[(r / 4) * blocksPerRow + b]);
    for (std::size_t x = 0; x < 4; ++x) {
      const glm::u8vec3 q = texels[(r % 4) * 4 + x];
      for (int c = 0; c < 3; ++c) row[b * 4 + x][c] = dequantize(q[c], scale[c], m.logRange);
    }
  }
}

}  // namespace

std::uint64_t encodeBc1Block(const std::array<glm::u8vec3, 16>& texels) {
  unsigned char rgba[64];
  for (std::size_t k = 0; k < 16; ++k) {
    rgba[4 * k + 0] = texels[k].r;
    rgba[4 * k + 1] = texels[k].g;
    rgba[4 * k + 2] = texels[k].b;
    rgba[4 * k + 3] = 255;
  }
  unsigned char block[8];
  stb_compress_dxt_block(block, rgba, 0, STB_DXT_HIGHQUAL);
  std::uint64_t result = 0;
  std::memcpy(&result, block, 8);  // little-endian: colour0, colour1, then the 2-bit indices
  return result;
}

std::array<glm::u8vec3, 16> decodeBc1Block(std::uint64_t block) {
  const std::uint32_t c0 = std::uint32_t(block & 0xffffu), c1 = std::uint32_t((block >> 16) & 0xffffu);
  const std::uint32_t indices = std::uint32_t(block >> 32);
  const glm::ivec3 e0 = expand565(c0), e1 = expand565(c1);
  glm::ivec3 palette[4] = {e0, e1, {}, {}};
  if (c0 > c1) {
    palette[2] = (2 * e0 + e1) / 3;
    palette[3] = (e0 + 2 * e1) / 3;
  } else {
    palette[2] = (e0 + e1) / 2;
    palette[3] = glm::ivec3(0);
  }
  std::array<glm::u8vec3, 16> texels;
  for (std::size_t k = 0; k < 16; ++k) texels[k] = glm::u8vec3(palette[(indices >> (2 * k)) & 3u]);
  return texels;
}

std::size_t CompressedMatrix::bytes() const {
  return blocks.size() * sizeof(std::uint64_t) + exactStart.size() * 4 + exactColumn.size() * 4 +
         exactValue.size() * 12 + rowOrder.size() * 4 + columnOrder.size() * 4 + rowScale.size() * 12;
}

glm::vec3 decodedEntry(const CompressedMatrix& m, std::uint32_t i, std::uint32_t j) {
  // Positions of patch i's row and patch j's column in the stored order.
  // (Linear search is fine for tests; products use decodeStoredRow.)
  const auto rowIt = std::find(m.rowOrder.begin(), m.rowOrder.end(), i);
  const auto columnIt = std::find(m.columnOrder.begin(), m.columnOrder.end(), j);
  if (rowIt == m.rowOrder.end() || columnIt == m.columnOrder.end()) throw Error("decodedEntry: no such patch");
  const std::size_t r = std::size_t(rowIt - m.rowOrder.begin()), c = std::size_t(columnIt - m.columnOrder.begin());
  const std::size_t blocksPerRow = std::size_t(m.paddedSize) / 4;
  const glm::u8vec3 q = decodeBc1Block(m.blocks[(r / 4) * blocksPerRow + c / 4])[(r % 4) * 4 + c % 4];
  glm::vec3 v;
  for (int k = 0; k < 3; ++k) v[k] = dequantize(q[k], m.rowScale[r][k], m.logRange);
  for (std::uint32_t e = m.exactStart[r]; e < m.exactStart[r + 1]; ++e)
    if (m.exactColumn[e] == j) v += m.exactValue[e];
  return v;
}

void compressMatrix(MatrixSolution& solution, double exactFraction, float logRange, MatrixReorder reorder) {
  const std::size_t n = solution.size();
  if (solution.dense[0].size() != n * n) throw Error("compressMatrix: the matrix has no dense form");
  auto out = std::make_shared<CompressedMatrix>();
  CompressedMatrix& m = *out;
  m.logRange = logRange;
  m.paddedSize = int((n + 3) / 4 * 4);
  const std::size_t padded = std::size_t(m.paddedSize);
  const std::size_t exactPerChannel = std::min(n, std::size_t(std::ceil(exactFraction * double(n))));

  // 1. Per patch row: the exact entries (union over channels of each channel's top entries) and
  // the per-channel maximum of the rest.
  std::vector<std::vector<std::uint32_t>> exactColumns(n);
  std::vector<glm::vec3> scale(n, glm::vec3(0.0f));
  std::vector<std::uint8_t> isExact(n * n, 0);
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t i) {
    std::vector<std::uint32_t> columns(n);
    for (int c = 0; c < 3; ++c) {
      const float* row = solution.dense[std::size_t(c)].data() + i * n;
      if (exactPerChannel > 0) {
        std::iota(columns.begin(), columns.end(), 0u);
        std::nth_element(
            columns.begin(), columns.begin() + std::ptrdiff_t(exactPerChannel - 1), columns.end(),
            [&](std::uint32_t a, std::uint32_t b) { return row[a] > row[b] || (row[a] == row[b] && a < b); });
        for (std::size_t k = 0; k < exactPerChannel; ++k)
          if (row[columns[k]] != 0.0f) isExact[i * n + columns[k]] = 1;
      }
    }
    for (std::size_t j = 0; j < n; ++j) {
      if (isExact[i * n + j]) {
        exactColumns[i].push_back(std::uint32_t(j));
        continue;
      }
      for (int c = 0; c < 3; ++c) scale[i][c] = std::max(scale[i][c], solution.dense[std::size_t(c)][i * n + j]);
    }
  });

  // 2. Quantised log values per patch row (3 bytes per entry; exact entries quantised too, as
  // they would be, for the similarity measure only).
  std::vector<std::uint8_t> q(n * n * 3);
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t i) {
    for (std::size_t j = 0; j < n; ++j)
      for (int c = 0; c < 3; ++c)
        q[(i * n + j) * 3 + std::size_t(c)] =
            quantize(std::min(solution.dense[std::size_t(c)][i * n + j], scale[i][c]), scale[i][c], logRange);
  });

  // 3. Reordering: rows by the chain over row vectors, then columns by the chain over the
  // columns of the row-reordered matrix.
  m.rowOrder.resize(n);
  m.columnOrder.resize(n);
  std::iota(m.rowOrder.begin(), m.rowOrder.end(), 0u);
  std::iota(m.columnOrder.begin(), m.columnOrder.end(), 0u);
  if (reorder != MatrixReorder::None && n > 2) m.rowOrder = nearestNeighbourChain(q, n, 3 * n);
  if (reorder == MatrixReorder::RowsColumns && n > 2) {
    std::vector<std::uint8_t> columns(n * n * 3);
    tbb::parallel_for(std::size_t(0), n, [&](std::size_t j) {
      for (std::size_t r = 0; r < n; ++r)
        for (std::size_t c = 0; c < 3; ++c)
          columns[(j * n + r) * 3 + c] = q[(std::size_t(m.rowOrder[r]) * n + j) * 3 + c];
    });
    m.columnOrder = nearestNeighbourChain(columns, n, 3 * n);
  }

  // 4. BC1 blocks of the stored (reordered) matrix; exact entries and padding take the mean of
  // the block's other texels so they do not widen its endpoints.
  m.rowScale.assign(n, glm::vec3(0.0f));
  for (std::size_t r = 0; r < n; ++r) m.rowScale[r] = scale[m.rowOrder[r]];
  const std::size_t blocksPerRow = padded / 4;
  m.blocks.assign(blocksPerRow * blocksPerRow, 0);
  tbb::parallel_for(std::size_t(0), blocksPerRow, [&](std::size_t by) {
    for (std::size_t bx = 0; bx < blocksPerRow; ++bx) {
      std::array<glm::u8vec3, 16> texels{};
      std::array<bool, 16> free{};
      glm::uvec3 sum(0);
      unsigned count = 0;
      for (std::size_t y = 0; y < 4; ++y)
        for (std::size_t x = 0; x < 4; ++x) {
          const std::size_t r = by * 4 + y, c = bx * 4 + x, k = y * 4 + x;
          if (r >= n || c >= n || isExact[std::size_t(m.rowOrder[r]) * n + m.columnOrder[c]]) {
            free[k] = true;
            continue;
          }
          const std::uint8_t* v = &q[(std::size_t(m.rowOrder[r]) * n + m.columnOrder[c]) * 3];
          texels[k] = glm::u8vec3(v[0], v[1], v[2]);
          sum += glm::uvec3(texels[k]);
          ++count;
        }
      const glm::u8vec3 fill = count > 0 ? glm::u8vec3((sum + glm::uvec3(count / 2)) / count) : glm::u8vec3(0);
      for (std::size_t k = 0; k < 16; ++k)
        if (free[k]) texels[k] = fill;
      m.blocks[by * blocksPerRow + bx] = encodeBc1Block(texels);
    }
  });

  // 5. Exact lists per stored row: N_ij − decoded remainder, so that the sum is N_ij.
  std::vector<std::size_t> columnPosition(n);
  for (std::size_t c = 0; c < n; ++c) columnPosition[m.columnOrder[c]] = c;
  std::vector<std::vector<glm::vec3>> corrections(n);
  tbb::parallel_for(std::size_t(0), n, [&](std::size_t r) {
    const std::uint32_t i = m.rowOrder[r];
    std::vector<glm::vec3> row;
    decodeStoredRow(m, r, row);
    for (const std::uint32_t j : exactColumns[i]) {
      glm::vec3 exact;
      for (int c = 0; c < 3; ++c) exact[c] = solution.dense[std::size_t(c)][std::size_t(i) * n + j];
      corrections[r].push_back(exact - row[columnPosition[j]]);
    }
  });
  m.exactStart.assign(1, 0);
  for (std::size_t r = 0; r < n; ++r) {
    const std::uint32_t i = m.rowOrder[r];
    m.exactColumn.insert(m.exactColumn.end(), exactColumns[i].begin(), exactColumns[i].end());
    m.exactValue.insert(m.exactValue.end(), corrections[r].begin(), corrections[r].end());
    m.exactStart.push_back(std::uint32_t(m.exactColumn.size()));
  }
  solution.compressed = std::move(out);
}

std::vector<glm::vec3> decodeStoredRow(const CompressedMatrix& m, std::size_t storedRow) {
  std::vector<glm::vec3> row;
  decodeStoredRow(m, storedRow, row);
  row.resize(m.columnOrder.size());
  if (m.exactStart[storedRow] == m.exactStart[storedRow + 1]) return row;
  std::vector<std::uint32_t> position(m.columnOrder.size());
  for (std::size_t c = 0; c < position.size(); ++c) position[m.columnOrder[c]] = std::uint32_t(c);
  for (std::uint32_t e = m.exactStart[storedRow]; e < m.exactStart[storedRow + 1]; ++e)
    row[position[m.exactColumn[e]]] += m.exactValue[e];
  return row;
}

CompressionError compressionError(const MatrixSolution& solution) {
  const std::size_t n = solution.size();
  if (!solution.compressed || solution.dense[0].size() != n * n)
    throw Error("compressionError: the matrix needs both its dense and its compressed form");
  const CompressedMatrix& m = *solution.compressed;
  struct Sum {
    double total = 0.0, max = 0.0;
  };
  const Sum sum = tbb::parallel_reduce(
      tbb::blocked_range<std::size_t>(0, n), Sum{},
      [&](const tbb::blocked_range<std::size_t>& range, Sum s) {
        for (std::size_t r = range.begin(); r != range.end(); ++r) {
          const std::vector<glm::vec3> row = decodeStoredRow(m, r);
          const std::size_t i = m.rowOrder[r];
          for (std::size_t c = 0; c < n; ++c) {
            const std::size_t j = m.columnOrder[c];
            for (int k = 0; k < 3; ++k) {
              const double d = std::abs(double(row[c][k]) - double(solution.dense[std::size_t(k)][i * n + j]));
              s.total += d;
              s.max = std::max(s.max, d);
            }
          }
        }
        return s;
      },
      [](const Sum& a, const Sum& b) {
        return Sum{a.total + b.total, std::max(a.max, b.max)};
      });
  return {sum.total / (3.0 * double(n) * double(n)), sum.max, sum.total};
}

}  // namespace ibrr::lightmap
