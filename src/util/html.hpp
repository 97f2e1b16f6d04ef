#pragma once
// Text put into HTML: the compare report and the export's walkthrough page.
#include <string>
#include <string_view>

namespace ibrr {

// `text` with & < > " replaced by their entities: safe in element content and in double-quoted attributes.
inline std::string htmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (const char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

}  // namespace ibrr
