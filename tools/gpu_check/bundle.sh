#!/usr/bin/env bash
# Builds stable_cuda's GPU check here and bundles it for a bare GPU machine: one that has the
# CUDA driver (and maybe the toolkit, CMake, Ninja) but none of Debian's -dev packages and no
# package registry, and to which only the working tree plus up to 64 MiB of build outputs can
# be copied (docs/development.md: "Checking the CUDA sampler on a GPU").
#
# Release build, CUDA on, tests on, portable x86-64 (no -march=x86-64-v3: the GPU host's CPU is
# unknown). The executables get RUNPATH $ORIGIN/../lib and every shared library they load that
# is not the host's (ldd) is copied to lib/: never glibc, the dynamic loader or libcuda /
# libnvidia-*, which belong to the host and its driver. Fails if the bundle reaches 64 MiB.
#
# Usage: tools/gpu_check/bundle.sh [bundle folder, default build/gpu-check]
#        CUDA_ARCHS=90-real;90-virtual (default) selects the device code.
set -euo pipefail
here="$(cd "$(dirname "$0")/../.." && pwd)"
dest="${1:-$here/build/gpu-check}"
build="${GPU_CHECK_BUILD_DIR:-$here/build/gpu-check-build}"
archs="${CUDA_ARCHS:-90-real;90-virtual}"
limit=$((64 * 1024 * 1024))
targets=(sampcert stable_cuda_math_test stable_cuda_sampler_test canonical_draw_cuda_test
         stable_cuda_bench)

command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ] || {
  echo "bundle: nvcc not found: stable_cuda cannot be built here" >&2; exit 1; }
export PATH="$PATH:/usr/local/cuda/bin"
cmake -S "$here" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DSAMPCERT_BUILD_TESTS=ON -DSAMPCERT_ENABLE_CUDA=ON -DSAMPCERT_WARNINGS_AS_ERRORS=ON \
  -DSAMPCERT_INSTALL=OFF -DSAMPCERT_X86_64_V3=OFF "-DCMAKE_CUDA_ARCHITECTURES=$archs" \
  '-DCMAKE_BUILD_RPATH=$ORIGIN/../lib' >"$build.configure.log" 2>&1 ||
  { cat "$build.configure.log"; exit 1; }
grep -q "sampcert: CUDA support ON" "$build.configure.log" ||
  { echo "bundle: CMake did not enable CUDA" >&2; exit 1; }
cmake --build "$build" --target "${targets[@]}"

rm -rf "$dest"
mkdir -p "$dest/bin" "$dest/lib" "$dest/share"
for t in "${targets[@]}"; do
  exe="$(find "$build" -type f -name "$t" -perm -u+x -print -quit)"
  [ -n "$exe" ] || { echo "bundle: $t was not built" >&2; exit 1; }
  cp "$exe" "$dest/bin/"
done
# The host's own libraries: glibc's, the dynamic loader, the vDSO and the NVIDIA driver's.
host_lib='^(linux-vdso|linux-gate|ld-linux|libc|libm|libpthread|libdl|librt|libresolv|libutil|libcuda|libnvidia)[.-]'
for exe in "$dest"/bin/*; do
  ldd "$exe" | awk '$2 == "=>" && $3 ~ /^\// {print $1, $3}' | while read -r name path; do
    if [[ "$name" =~ $host_lib ]]; then continue; fi
    [ -e "$dest/lib/$name" ] || cp -L "$path" "$dest/lib/$name"
  done
done
strip --strip-unneeded "$dest"/bin/* "$dest"/lib/* 2>/dev/null || true
cp "$here/tools/gpu_check/run_on_gpu.sh" "$here/tools/gpu_check/torch_cuda_bench.py" "$dest/"
cp "$here/impls/stable_cuda/expectations.json" "$dest/share/"
{
  echo "sampcert GPU check bundle"
  echo "commit: $(git -C "$here" rev-parse HEAD 2>/dev/null || echo unknown)$(git -C "$here" diff --quiet 2>/dev/null || echo ' (with local changes)')"
  echo "built: $(date -u +%Y-%m-%dT%H:%M:%SZ) on $(uname -m), nvcc $(nvcc --version | sed -n 's/.*release \([0-9.]*\).*/\1/p'), CUDA archs $archs"
  echo "bundled libraries:"; ls -1 "$dest/lib" | sed 's/^/  /'
} >"$dest/MANIFEST"

size=$(du -sb "$dest" | cut -f1)
echo "bundle: $dest: $((size / 1024)) KiB ($(ls "$dest/bin" | wc -l) executables, $(ls "$dest/lib" | wc -l) libraries)"
if [ "$size" -ge "$limit" ]; then
  echo "bundle: too large: $size bytes (limit 64 MiB)" >&2
  exit 1
fi
# Every executable must resolve every library from the bundle or the host's glibc / driver.
for exe in "$dest"/bin/*; do
  # grep reads all of ldd's output (no -q): an early exit would kill ldd with SIGPIPE, and
  # pipefail would make that read as "all found".
  if ldd "$exe" | grep "not found" >/dev/null; then
    echo "bundle: $exe has unresolved libraries:" >&2; ldd "$exe" | grep "not found" >&2; exit 1
  fi
done
echo "bundle: ready. On the GPU machine: $dest/run_on_gpu.sh [results folder]"
