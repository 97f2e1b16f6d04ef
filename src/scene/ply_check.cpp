#include "scene/ply_check.hpp"

#include "util/error.hpp"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <fstream>
#include <optional>
#include <string_view>
#include <vector>

namespace ibrr::scene {
namespace {

enum class PlyFormat { Ascii, BinaryLittleEndian, BinaryBigEndian };
enum class PlyType { Int8, UInt8, Int16, UInt16, Int32, UInt32, Float32, Float64 };

struct PlyTypeName {
  std::string_view name;
  PlyType type;
  std::size_t bytes;
};
// Both spellings of each type: the original ("char") and the sized one ("int8").
constexpr PlyTypeName kPlyTypes[] = {
    {"char", PlyType::Int8, 1},      {"int8", PlyType::Int8, 1},       {"uchar", PlyType::UInt8, 1},
    {"uint8", PlyType::UInt8, 1},    {"short", PlyType::Int16, 2},     {"int16", PlyType::Int16, 2},
    {"ushort", PlyType::UInt16, 2},  {"uint16", PlyType::UInt16, 2},   {"int", PlyType::Int32, 4},
    {"int32", PlyType::Int32, 4},    {"uint", PlyType::UInt32, 4},     {"uint32", PlyType::UInt32, 4},
    {"float", PlyType::Float32, 4},  {"float32", PlyType::Float32, 4}, {"double", PlyType::Float64, 8},
    {"float64", PlyType::Float64, 8}};

std::optional<PlyTypeName> plyType(std::string_view name) {
  for (const PlyTypeName& t : kPlyTypes)
    if (t.name == name) return t;
  return std::nullopt;
}

bool isInteger(PlyType type) { return type != PlyType::Float32 && type != PlyType::Float64; }

struct PlyProperty {
  std::string name;
  PlyTypeName value;                 // the scalar, or a list's items
  std::optional<PlyTypeName> count;  // a list's length type
};

struct PlyElement {
  std::string name;
  std::uint64_t count = 0;
  std::vector<PlyProperty> properties;
};

struct PlyHeader {
  PlyFormat format = PlyFormat::Ascii;
  std::vector<PlyElement> elements;
  std::size_t bodyOffset = 0;
};

class PlyError {
public:
  explicit PlyError(std::string name) : m_name(std::move(name)) {}
  [[noreturn]] void operator()(const std::string& what) const {
    throw Error(m_name + ": " + what + "; repair or re-export the PLY file");
  }

private:
  std::string m_name;
};

// Text from the file as a message may quote it: at most 60 characters, each outside printable ASCII as '?',
// so that a damaged file's bytes never break the one-line message.
std::string quoted(std::string_view text) {
  std::string out(text.substr(0, 60));
  for (char& c : out)
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) c = '?';
  return "'" + out + "'";
}

std::vector<std::string_view> splitWords(std::string_view line) {
  std::vector<std::string_view> words;
  std::size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    const std::size_t start = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    if (i > start) words.push_back(line.substr(start, i - start));
  }
  return words;
}

// Parses the header, line by line, within kMaxPlyHeaderBytes.
PlyHeader parseHeader(std::span<const char> bytes, const PlyError& fail) {
  PlyHeader header;
  std::size_t pos = 0;
  int lineNumber = 0;
  bool formatSeen = false;
  auto nextLine = [&]() -> std::string_view {
    const std::size_t limit = std::min(bytes.size(), kMaxPlyHeaderBytes);
    // Nothing left (an empty file's data() is null, and memchr of null is undefined even for 0 bytes).
    const auto* end =
        pos < limit ? static_cast<const char*>(std::memchr(bytes.data() + pos, '\n', limit - pos)) : nullptr;
    if (!end) fail("the header has no end_header line in its first 64 KiB (the file is cut short or not PLY)");
    std::string_view line(bytes.data() + pos, std::size_t(end - (bytes.data() + pos)));
    pos = std::size_t(end - bytes.data()) + 1;
    ++lineNumber;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    return line;
  };
  if (nextLine() != "ply") fail("not a PLY file: it does not start with a \"ply\" line");
  for (;;) {
    const std::string_view line = nextLine();
    const std::vector<std::string_view> words = splitWords(line);
    const std::string where = "header line " + std::to_string(lineNumber) + " (" + quoted(line) + ")";
    if (words.empty() || words[0] == "comment" || words[0] == "obj_info") continue;
    if (words[0] == "end_header") break;
    if (words[0] == "format") {
      if (words.size() != 3 || words[2] != "1.0") fail(where + ": expected 'format <ascii|binary_*> 1.0'");
      if (words[1] == "ascii")
        header.format = PlyFormat::Ascii;
      else if (words[1] == "binary_little_endian")
        header.format = PlyFormat::BinaryLittleEndian;
      else if (words[1] == "binary_big_endian")
        header.format = PlyFormat::BinaryBigEndian;
      else
        fail(where + ": unknown format " + quoted(words[1]));
      formatSeen = true;
    } else if (words[0] == "element") {
      std::uint64_t count = 0;
      const std::string_view digits = words.size() == 3 ? words[2] : std::string_view();
      // A count beyond 64 bits is result_out_of_range, with every digit read and `count` left at 0: it
      // passed as an empty element, and Assimp, reading the digits its own way, allocated 15 GB.
      const auto [end, error] = std::from_chars(digits.data(), digits.data() + digits.size(), count);
      if (words.size() != 3 || error != std::errc() || end != digits.data() + digits.size() ||
          count > std::uint64_t(std::numeric_limits<std::int32_t>::max()))
        fail(where + ": expected 'element <name> <count>' with a count below 2^31");
      // Each element once: Assimp, given "vertex" twice, freed a pointer it had not allocated (fuzz_mesh).
      for (const PlyElement& earlier : header.elements)
        if (earlier.name == words[1]) fail(where + ": element " + quoted(words[1]) + " is declared twice");
      header.elements.push_back(PlyElement{std::string(words[1]), count, {}});
    } else if (words[0] == "property") {
      if (header.elements.empty()) fail(where + ": a property before any element");
      PlyProperty property;
      if (words.size() == 5 && words[1] == "list") {
        const auto count = plyType(words[2]), value = plyType(words[3]);
        if (!count || !value || !isInteger(count->type))
          fail(where + ": expected 'property list <integer type> <type> <name>'");
        property = PlyProperty{std::string(words[4]), *value, count};
      } else if (words.size() == 3 && plyType(words[1])) {
        property = PlyProperty{std::string(words[2]), *plyType(words[1]), std::nullopt};
      } else {
        fail(where + ": expected 'property <type> <name>' or 'property list <type> <type> <name>'");
      }
      header.elements.back().properties.push_back(property);
    } else {
      fail(where + ": unknown keyword " + quoted(words[0]));
    }
  }
  if (!formatSeen) fail("the header has no format line");
  header.bodyOffset = pos;
  return header;
}

// Reads the body's values one by one, binary or ASCII, never past the end.
class BodyReader {
public:
  BodyReader(std::span<const char> bytes, std::size_t offset, PlyFormat format)
      : m_bytes(bytes), m_pos(offset), m_format(format) {}

  std::size_t remaining() const { return m_bytes.size() - m_pos; }
  // The fewest bytes a value of this type takes: its size in binary, one digit in ASCII.
  std::size_t minBytes(const PlyTypeName& type) const { return m_format == PlyFormat::Ascii ? 1 : type.bytes; }

  // ASCII items are lines, as Assimp reads them: an item's values must all be on its line, and the next
  // item starts on the next line (a file whose values were all there, but on fewer lines than items,
  // passed a check that read words, and Assimp, out of lines, aborted in its triangulation). What
  // follows an item's values on its line is skipped, as Assimp skips it. A line ends at \n, \r or \r\n.
  void endItem() {
    if (m_format != PlyFormat::Ascii) return;
    while (m_pos < m_bytes.size() && !lineEnd(m_bytes[m_pos])) ++m_pos;
    if (m_pos < m_bytes.size() && m_bytes[m_pos] == '\r') ++m_pos;
    if (m_pos < m_bytes.size() && m_bytes[m_pos] == '\n') ++m_pos;
  }
  // After next() gave nullopt without a bad word: whether an ASCII item's line ended (not the file).
  bool lineEnded() const { return m_format == PlyFormat::Ascii && m_pos < m_bytes.size(); }

  // The next value as a double; nullopt at the end of the file (or of an ASCII item's line), or for an
  // ASCII word that is no number.
  std::optional<double> next(const PlyTypeName& type, std::string* badWord) {
    if (m_format == PlyFormat::Ascii) return nextWord(type, badWord);
    if (remaining() < type.bytes) return std::nullopt;
    unsigned char raw[8];
    std::memcpy(raw, m_bytes.data() + m_pos, type.bytes);
    m_pos += type.bytes;
    if (m_format == PlyFormat::BinaryBigEndian) std::reverse(raw, raw + type.bytes);  // this machine: little
    switch (type.type) {
      case PlyType::Int8:
        return double(std::int8_t(raw[0]));
      case PlyType::UInt8:
        return double(raw[0]);
      case PlyType::Int16:
        return double(load<std::int16_t>(raw));
      case PlyType::UInt16:
        return double(load<std::uint16_t>(raw));
      case PlyType::Int32:
        return double(load<std::int32_t>(raw));
      case PlyType::UInt32:
        return double(load<std::uint32_t>(raw));
      case PlyType::Float32:
        return double(load<float>(raw));
      case PlyType::Float64:
        return load<double>(raw);
    }
    return std::nullopt;
  }

private:
  template <class T>
  static T load(const unsigned char* raw) {
    T value;
    std::memcpy(&value, raw, sizeof value);
    return value;
  }
  std::optional<double> nextWord(const PlyTypeName& type, std::string* badWord) {
    auto blank = [](char c) { return c == ' ' || c == '\t'; };
    while (m_pos < m_bytes.size() && blank(m_bytes[m_pos])) ++m_pos;
    const std::size_t start = m_pos;
    while (m_pos < m_bytes.size() && !blank(m_bytes[m_pos]) && !lineEnd(m_bytes[m_pos])) ++m_pos;
    if (m_pos == start) return std::nullopt;  // the end of the file, or of the item's line
    const char* first = m_bytes.data() + start;
    const char* last = m_bytes.data() + m_pos;
    double value = 0.0;
    bool ok = false;
    // Out of range is an error (from_chars leaves the value at 0 then, where Assimp reads a huge one).
    if (isInteger(type.type)) {
      long long integer = 0;
      const auto [end, error] = std::from_chars(first, last, integer);
      ok = error == std::errc() && end == last;
      value = double(integer);
    } else {
      const auto [end, error] = std::from_chars(first, last, value);
      ok = error == std::errc() && end == last;
    }
    if (ok) return value;
    if (badWord) *badWord = quoted(std::string_view(first, std::size_t(last - first)));
    return std::nullopt;
  }

  static bool lineEnd(char c) { return c == '\n' || c == '\r'; }

  std::span<const char> m_bytes;
  std::size_t m_pos;
  PlyFormat m_format;
};

bool isVertexIndexList(const PlyElement& element, const PlyProperty& property) {
  return element.name == "face" && property.count &&
         (property.name == "vertex_indices" || property.name == "vertex_index");
}

// Walks the items of one element; `vertices` is the vertex count that face indices must stay below.
void checkElement(const PlyElement& element, std::uint64_t vertices, BodyReader& body, const PlyError& fail) {
  if (element.properties.empty()) return;
  // Every item takes at least a byte per value: a count beyond the file is refused before any walk.
  std::uint64_t minBytes = 0;
  for (const PlyProperty& p : element.properties) minBytes += body.minBytes(p.count ? *p.count : p.value);
  if (element.count > body.remaining() / std::max<std::uint64_t>(minBytes, 1))
    fail("the header promises " + std::to_string(element.count) + " " + element.name +
         " items, more than the file's remaining " + std::to_string(body.remaining()) + " bytes hold");
  for (std::uint64_t item = 0; item < element.count; ++item) {
    for (const PlyProperty& property : element.properties) {
      auto value = [&](const PlyTypeName& type) {
        std::string bad;
        const std::optional<double> v = body.next(type, &bad);
        if (!v)
          fail(element.name + " " + std::to_string(item) + ", property " + property.name +
               (!bad.empty()       ? ": " + bad + " is not a number of type " + std::string(type.name)
                : body.lineEnded() ? ": its line ends before it (an ASCII PLY item is one line of values)"
                                   : ": the file ends before it (the header promises more)"));
        return *v;
      };
      if (!property.count) {
        value(property.value);
        continue;
      }
      const double length = value(*property.count);
      if (!(length >= 0.0 && length <= double(kMaxPlyListLength)) || std::floor(length) != length)
        fail(element.name + " " + std::to_string(item) + ": a list of " + std::to_string(length) + " values (at most " +
             std::to_string(kMaxPlyListLength) + ")");
      const bool indices = isVertexIndexList(element, property);
      if (indices && length < 3.0)
        fail("face " + std::to_string(item) + " has " + std::to_string(int(length)) +
             " vertex indices; a face needs at least 3");
      for (long long k = 0; k < static_cast<long long>(length); ++k) {
        const double index = value(property.value);
        if (indices && !(index >= 0.0 && index < double(vertices) && std::floor(index) == index))
          fail("face " + std::to_string(item) + " has vertex index " + std::to_string(static_cast<long long>(index)) +
               ", but the file has " + std::to_string(vertices) + " vertices");
      }
    }
    body.endItem();
  }
}

}  // namespace

void checkPlyBytes(std::span<const char> bytes, const std::string& name) {
  const PlyError fail(name);
  const PlyHeader header = parseHeader(bytes, fail);
  // Assimp ends a text line at \0 and \f too: a header, or an ASCII body, holding one is read as other lines.
  const std::string_view text(bytes.data(), header.format == PlyFormat::Ascii ? bytes.size() : header.bodyOffset);
  if (const std::size_t at = text.find_first_of(std::string_view("\0\f", 2)); at != std::string_view::npos)
    fail("byte " + std::to_string(at) + " is a \\0 or \\f, which Assimp reads as a line end (PLY text has none)");
  std::uint64_t vertices = 0;
  for (const PlyElement& element : header.elements)
    if (element.name == "vertex") vertices = element.count;
  BodyReader body(bytes, header.bodyOffset, header.format);
  for (const PlyElement& element : header.elements) checkElement(element, vertices, body, fail);
}

void checkPlyFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw Error(path.string() + ": cannot open the mesh file; check that it exists and is readable");
  std::vector<char> bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  checkPlyBytes(bytes, path.string());
}

}  // namespace ibrr::scene
