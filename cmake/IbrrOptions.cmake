# Interface targets that carry warnings and build options (after pbrt's pbrt_warnings / pbrt_opt):
# every project target links ibrr_options, nothing is set directory-wide.
add_library(ibrr_options INTERFACE)
target_compile_features(ibrr_options INTERFACE cxx_std_20)
target_compile_options(ibrr_options INTERFACE
  $<$<COMPILE_LANGUAGE:CXX>:-Wall -Wextra -Wpedantic -Wshadow=local -Wnon-virtual-dtor>)
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
if(IBRR_GL_DEBUG)
  target_compile_definitions(ibrr_options INTERFACE IBRR_GL_DEBUG=1)
endif()
