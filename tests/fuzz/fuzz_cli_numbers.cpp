// The command line's numeric parsing (app/cli_support.hpp, app/method_flags.hpp): parseImageSize ("WxH"), the
// finiteNumber() check that every floating-point flag of render and view carries, alone and as CLI11 applies it to
// a float option, and a method's whole-number flag (MethodFlags::option, as `ibrr bake --paths TEXT` reads it). The
// first byte picks which (its value mod 4); the rest is the argument's text.
//
// Properties: a size that parses lies in [1, 16384]² and reads back from its own "WxH"; a number
// finiteNumber() accepts parses whole, as a finite double; a float flag that passes the check holds
// a finite float; a whole-number flag takes decimal digits alone and holds the number they read (CLI11's strtoull
// wrapped "-3" to 2^64 − 3 and read "021" as octal 17).
#include "fuzz_support.hpp"

#include "app/cli_support.hpp"
#include "app/method_flags.hpp"
#include "util/error.hpp"

#include <charconv>
#include <cmath>
#include <cstdlib>
#include <string>

using namespace ibrr;

namespace {

void imageSize(const std::string& text) {
  try {
    const scene::ImageSize size = app::parseImageSize(text);
    if (size.width < 1 || size.height < 1 || size.width > 16384 || size.height > 16384) std::abort();
    const scene::ImageSize again = app::parseImageSize(std::to_string(size.width) + "x" + std::to_string(size.height));
    if (again.width != size.width || again.height != size.height) std::abort();
  } catch (const Error&) {
    // refused with a message: fine
  }
}

void finiteCheck(std::string text) {
  const std::string given = text;
  if (!app::finiteNumber()(text).empty()) return;  // refused
  double value = 0.0;
  const auto [end, error] = std::from_chars(given.data(), given.data() + given.size(), value);
  if (error != std::errc() || end != given.data() + given.size() || !std::isfinite(value)) std::abort();
}

// As `ibrr render --exposure TEXT` reads it: a float option checked by finiteNumber().
void floatFlag(const std::string& text) {
  CLI::App app;
  float value = 0.0f;
  app.add_option("--exposure", value)->check(app::finiteNumber());
  try {
    app.parse(std::vector<std::string>{text, "--exposure"});  // CLI11 takes the arguments in reverse
  } catch (const CLI::ParseError&) {
    return;  // refused with a message: fine
  }
  if (!std::isfinite(value)) std::abort();
}

// As `ibrr bake --paths TEXT` reads it: a method's unsigned flag.
void wholeNumberFlag(const std::string& text) {
  app::MethodFlags flags;
  std::uint64_t value = 7;
  flags.option("--paths", value, "light paths");
  if (!flags.declared().front().assign(text)) return;  // refused: fine
  if (text.empty() || text.find_first_not_of("0123456789") != std::string::npos) std::abort();
  std::uint64_t again = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), again);
  if (error != std::errc() || end != text.data() + text.size() || again != value) std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  fuzz::initialize();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  if (size == 0) return 0;
  const std::string text(fuzz::asText(data + 1, size - 1));
  switch (data[0] % 4) {
    case 0:
      imageSize(text);
      break;
    case 1:
      finiteCheck(text);
      break;
    case 2:
      floatFlag(text);
      break;
    default:
      wholeNumberFlag(text);
      break;
  }
  return 0;
}
