// Catch2 v2 entry point for the lightmap suite.
#define CATCH_CONFIG_MAIN
#include <catch2/catch.hpp>
