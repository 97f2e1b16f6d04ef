#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>

#include <string>

// Catch's console reporter indents the lines of a failing test's name after its first ": " by that column
// (ConsoleReporter::printHeaderString); at the console's width or beyond, it loops for ever, printing the name
// until the disk is full. So every name's first ": " must leave room for a few characters a line.
TEST_CASE("every test name leaves Catch's console reporter room to wrap it after its first colon", "[meta]") {
  constexpr std::size_t kSectionIndent = 2, kRoomLeft = 8;
  for (const Catch::TestCase& test : Catch::getRegistryHub().getTestCaseRegistry().getAllTests()) {
    const std::size_t colon = test.name.find(": ");
    if (colon == std::string::npos) continue;
    INFO(test.name);
    CHECK(colon + 2 + kSectionIndent + kRoomLeft < std::size_t(CATCH_CONFIG_CONSOLE_WIDTH - 1));
  }
}
