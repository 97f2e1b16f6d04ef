#!/usr/bin/env bash
# ibrr set-up and build driver. On a fresh Debian 12 machine, as root:
#   ./ibrr.sh demo   install what is missing, build the ibrr command (Release), bake the built-in Cornell box's IBRR store
#                    and render it to out/cornell.png
#   ./ibrr.sh test   install what is missing, build, run the store suite under AddressSanitizer +
#                    UBSan, the libFuzzer targets briefly, then the whole test suite (ctest)
#   ./ibrr.sh build  install what is missing and build only
# "What is missing": Debian packages, and the walkthrough page's npm packages (web/package-lock.json, `npm ci`).
# Builds are incremental: re-running only rebuilds what changed. Set IBRR_BUILD_DIR to build
# elsewhere (default: ./build), IBRR_JOBS for the parallelism (default: all cores) and IBRR_FUZZ_SECONDS
# for how long `test` runs each fuzz target (default: 20).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
BUILD_DIR="${IBRR_BUILD_DIR:-$ROOT/build}"
JOBS="${IBRR_JOBS:-$(nproc)}"

# Debian packages only; each is made for its job (see README.md, "Dependencies").
PACKAGES=(
  cmake g++ make pkg-config python3-glad
  libglfw3-dev libglm-dev libassimp-dev libtbb-dev libstb-dev catch2 libembree-dev
  nlohmann-json3-dev libopenexr-dev libimgui-dev libcli11-dev
  libegl-dev libgl-dev libegl-mesa0 libgl1-mesa-dri xvfb xauth
  chromium  # the test that opens the compare report in a headless browser
  clang libclang-rt-14-dev  # the libFuzzer targets (tests/fuzz): clang and its fuzzer runtime
  libopenmpi-dev openmpi-bin  # distributed bakes and references under mpirun (src/cluster)
)

say() { printf 'ibrr.sh: %s\n' "$*" >&2; }

install_missing() {
  local missing=()
  for package in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$package")
    fi
  done
  # Node.js and npm for the walkthrough page's packages (Debian's npm brings nodejs), unless a Node.js with npm
  # is installed already (e.g. from NodeSource, whose nodejs package holds npm and conflicts with Debian's).
  command -v npm >/dev/null || missing+=(npm)
  [ ${#missing[@]} -eq 0 ] && return 0
  say "installing missing Debian packages: ${missing[*]}"
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then
    command -v sudo >/dev/null || { say "error: run as root (or install sudo) to install: ${missing[*]}"; exit 1; }
    sudo="sudo"
  fi
  $sudo apt-get update -q
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
}

# The walkthrough page's npm packages, pinned in web/package-lock.json (three.js, esbuild that bundles it into
# the page, the Khronos glTF validator and playwright-core that drives Debian's chromium in the tests): `npm ci`
# whenever the lock file differs from the one last installed.
install_web_packages() {
  local stamp="$ROOT/web/node_modules/.ibrr-package-lock.sha256" wanted
  wanted="$(sha256sum "$ROOT/web/package-lock.json" | cut -d' ' -f1)"
  [ -f "$stamp" ] && [ "$(cat "$stamp")" = "$wanted" ] && return 0
  say "installing the walkthrough page's npm packages (web/package-lock.json)"
  (cd "$ROOT/web" && npm ci --no-audit --no-fund --loglevel=error) ||
    { say "error: 'npm ci' in $ROOT/web failed: check that the npm registry can be reached"; exit 1; }
  echo "$wanted" > "$stamp"
}

# Dear ImGui's GLFW and OpenGL 3 backends ship only as sources under /usr/share/doc in
# libimgui-dev. Images that keep dpkg from installing /usr/share/doc (path-exclude, as slim Docker
# images do) lack them: then they are unpacked from the same Debian package into build-deps/.
imgui_backends_dir() {
  local docs=/usr/share/doc/libimgui-dev/examples/backends
  if [ -f "$docs/imgui_impl_glfw.cpp" ]; then echo "$docs"; return; fi
  local deps="$ROOT/build-deps/imgui"
  if [ ! -f "$deps$docs/imgui_impl_glfw.cpp" ]; then
    say "unpacking the Dear ImGui backends from the libimgui-dev package (dpkg left out /usr/share/doc)"
    mkdir -p "$deps"
    (cd "$deps" && apt-get download -q libimgui-dev >&2 && dpkg-deb -x libimgui-dev_*.deb "$deps") ||
      { say "error: could not unpack libimgui-dev; run 'apt-get download libimgui-dev' by hand"; exit 1; }
  fi
  echo "$deps$docs"
}

configure() {  # configure DIR [cmake options...]: once, the first time
  local dir="$1"; shift
  if [ ! -f "$dir/CMakeCache.txt" ]; then
    cmake -S "$ROOT" -B "$dir" -DIBRR_IMGUI_BACKENDS_DIR="$(imgui_backends_dir)" "$@"
  elif grep -q "^IBRR_ESBUILD:FILEPATH=IBRR_ESBUILD-NOTFOUND" "$dir/CMakeCache.txt"; then
    cmake "$dir" >/dev/null  # configured before the npm packages were there: find esbuild now
  fi
}

build() {  # build [targets...]: the Release build, of the named targets only when given
  configure "$BUILD_DIR" -DCMAKE_BUILD_TYPE=Release
  local targets=()
  [ $# -gt 0 ] && targets=(--target "$@")
  cmake --build "$BUILD_DIR" -j "$JOBS" "${targets[@]}"
}

usage() {
  sed -n '2,11p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'
}

command="${1:-}"
case "$command" in
  demo)
    install_missing
    install_web_packages
    build ibrr  # the demo runs the command alone: the test suites are built by 'test' and 'build'
    mkdir -p "$ROOT/out"
    "$BUILD_DIR/bin/ibrr" bake cornell -o "$ROOT/out/cornell.ibrr"
    "$BUILD_DIR/bin/ibrr" render cornell --store "$ROOT/out/cornell.ibrr" --supersample 2 -o "$ROOT/out/cornell.png"
    say "the picture is at $ROOT/out/cornell.png (store: $ROOT/out/cornell.ibrr)"
    ;;
  test)
    install_missing
    install_web_packages
    build
    # The store reads untrusted files: its suite (file fuzzing included) runs under AddressSanitizer
    # and UBSan first, in a build of its own; then the whole suite runs on the Release build. At -O1 with
    # line tables only (-g1), as the sanitizers suggest: its build took 60 s instead of 110 s at -O2 -g.
    ASAN_DIR="${BUILD_DIR}-asan"
    configure "$ASAN_DIR" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DIBRR_SANITIZE=ON \
      -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O1 -g1 -DNDEBUG"
    cmake --build "$ASAN_DIR" -j "$JOBS" --target ibrr_store_tests
    (cd "$ASAN_DIR" && ctest --output-on-failure -j "$JOBS" -R "^store:")
    # The loaders of untrusted files under libFuzzer (tests/fuzz), each for a short while on its committed
    # corpus: a clang build of its own holding only the fuzz targets and the libraries they need.
    FUZZ_DIR="${BUILD_DIR}-fuzz"
    configure "$FUZZ_DIR" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DIBRR_FUZZ=ON -DIBRR_BUILD_TESTS=OFF
    cmake --build "$FUZZ_DIR" -j "$JOBS" --target ibrr_fuzzers
    "$ROOT/tests/fuzz/run_fuzzers.sh" "$FUZZ_DIR" "${IBRR_FUZZ_SECONDS:-20}"
    cd "$BUILD_DIR"
    ctest --output-on-failure -j "$JOBS"
    ;;
  build)
    install_missing
    install_web_packages
    build
    ;;
  -h|--help|help)
    usage
    ;;
  *)
    usage
    exit 2
    ;;
esac
