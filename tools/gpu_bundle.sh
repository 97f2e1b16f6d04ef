#!/usr/bin/env bash
# Packs what tools/gpu_check.sh needs on a lent GPU machine that cannot build the project (no Debian packages
# there, nothing to download): the GL loader packages, this build's shared libraries (without the C library,
# which the machine has) and the conference mesh, into two folders that git ignores here.
#
#   tools/gpu_bundle.sh [BUILD_DIR]
#
# Then carry .gl, .gpu, BUILD_DIR/bin and BUILD_DIR/tests/ibrr_tests to the machine and run the command this
# script prints last. The binaries keep the paths of this checkout (shaders, scenes, test data), so the command
# links the machine's copy of the repository to the same path.
set -euo pipefail

build=${1:-build}
root=$(git rev-parse --show-toplevel)
cd "$root"
for ignored in /.gl/ /.gpu/; do
  grep -qxF "$ignored" .git/info/exclude 2>/dev/null || echo "$ignored" >>.git/info/exclude
done

# The GL loaders (libglvnd); the machine's NVIDIA driver supplies the vendor libraries.
mkdir -p .gl /tmp/ibrr-amd64/partial
apt_options=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/ibrr-amd64)
apt-get "${apt_options[@]}" update >/dev/null
(cd .gl && apt-get "${apt_options[@]}" download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2)

# The shared libraries the two binaries need, but for the C and C++ runtimes, compressed (about 15 MB).
mkdir -p .gpu
staging=$(mktemp -d)
trap 'rm -rf "$staging"' EXIT
mkdir -p "$staging/lib"
for binary in "$build/bin/ibrr" "$build/tests/ibrr_tests"; do
  ldd "$binary" | awk '{print $3}' | grep '^/' || true
done | sort -u | grep -v -E '/(libc|libm|libgcc_s|libstdc\+\+|libpthread|libdl|librt|ld-linux)[.-]' |
  while read -r library; do cp -L "$library" "$staging/lib/"; done
tar -cJf .gpu/lib.tar.xz -C "$staging" lib
if [[ -d ../shared/scenes/conference ]]; then
  tar -cJf .gpu/conference.tar.xz -C ../shared/scenes conference
fi
du -sh .gl .gpu

cat <<EOF

Carry: [".gl", ".gpu", "$build/bin", "$build/tests/ibrr_tests"]
Command:
for f in .gl/*.deb; do dpkg -x \$f /; done; ldconfig; mkdir -p /opt/ibrrlib && tar -xJf .gpu/lib.tar.xz -C /opt/ibrrlib && export LD_LIBRARY_PATH=/opt/ibrrlib/lib; if [ "\$PWD" != $root ]; then mkdir -p $(dirname "$root") && ln -sfn "\$PWD" $root; fi; mkdir -p $(dirname "$root")/shared/scenes && tar -xJf .gpu/conference.tar.xz -C $(dirname "$root")/shared/scenes; cd $root; tools/gpu_check.sh $build /tmp/check 2>&1 | tee \$OUT/check.log; cp /tmp/check/*.log \$OUT/
EOF
