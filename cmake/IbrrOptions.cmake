# Interface targets that carry warnings and build options (after pbrt's pbrt_warnings / pbrt_opt):
# every project target links ibrr_options, nothing is set directory-wide.
add_library(ibrr_options INTERFACE)
target_compile_features(ibrr_options INTERFACE cxx_std_20)
target_compile_options(ibrr_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic $<$<CXX_COMPILER_ID:GNU>:-Wshadow=local> -Wnon-virtual-dtor>)
# (-Wshadow=local is GCC's; clang, which the fuzz build uses, has no such option.)
# GCC 12 reports false -Wrestrict positives inside libstdc++'s std::string concatenation at -O2
# (GCC bug 105651, fixed in GCC 13); silence only that one there.
if(CMAKE_CXX_COMPILER_ID STREQUAL "GNU" AND CMAKE_CXX_COMPILER_VERSION VERSION_LESS 13)
  target_compile_options(ibrr_options INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-Wno-restrict>)
endif()
if(IBRR_SANITIZE)
  # The sanitizers' instrumentation makes GCC's -Wmaybe-uninitialized misfire inside libstdc++
  # (std::regex's std::function states, reached through Catch2); the sanitizers check for real.
  target_compile_options(ibrr_options INTERFACE -fsanitize=address,undefined -fno-omit-frame-pointer
                                                -fno-sanitize-recover=undefined
                                                $<$<CXX_COMPILER_ID:GNU>:-Wno-maybe-uninitialized>)
  target_link_options(ibrr_options INTERFACE -fsanitize=address,undefined)
endif()
if(IBRR_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "ibrr: IBRR_FUZZ needs clang (libFuzzer): configure a fresh build folder with "
                        "CC=clang CXX=clang++ (Debian packages clang and libclang-rt-14-dev)")
  endif()
  # Optimised but with asserts (no -DNDEBUG), and line tables for the sanitizers' stack traces.
  set(CMAKE_C_FLAGS_FUZZ "-O1 -gline-tables-only" CACHE STRING "C flags of the Fuzz build type")
  set(CMAKE_CXX_FLAGS_FUZZ "-O1 -gline-tables-only" CACHE STRING "C++ flags of the Fuzz build type")
  # Every project library gets the fuzzer's coverage instrumentation and ASan + UBSan (a UB report
  # aborts, so the fuzzer sees it as a crash); the fuzz targets link libFuzzer itself (tests/fuzz).
  target_compile_options(ibrr_options INTERFACE -fsanitize=fuzzer-no-link,address,undefined
                                                -fno-sanitize-recover=all -fno-omit-frame-pointer)
  target_link_options(ibrr_options INTERFACE -fsanitize=address,undefined)
endif()
if(IBRR_GL_DEBUG)
  target_compile_definitions(ibrr_options INTERFACE IBRR_GL_DEBUG=1)
endif()

# A test executable's own files: -O1 in the Release build. Their code (set-up, assertions, the tests' own reference
# sums) is a small part of a test's time, while the libraries they call keep -O3; at -O1 the four test targets
# compiled in 146 s instead of 184 s on 2 cores, and the suite ran as fast (272.6 s against 277.1 s).
function(ibrr_test_target target)
  target_compile_options(${target} PRIVATE $<$<CONFIG:Release>:-O1>)
endfunction()
