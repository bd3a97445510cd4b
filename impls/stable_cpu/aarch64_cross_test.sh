#!/usr/bin/env bash
# stable_cpu's kernels on aarch64: cross-compiles vector_kernels.cc and vector_kernels_test.cc
# with Debian's g++-aarch64-linux-gnu (Highway from libhwy-dev:arm64, GoogleTest from its
# sources in /usr/src/googletest) and runs the test under qemu-user (qemu-user-static): every
# test on every target (NEON and the portable fallback), each bit for bit against the fallback.
# Exits 77 (ctest: Skipped) with the reason when a tool is missing; .ci/install-deps installs
# them. Usage: aarch64_cross_test.sh SOURCE_DIR WORK_DIR
set -euo pipefail
src="$1"
work="$2"

skip() {
  echo "SKIPPED: $1 (install g++-aarch64-linux-gnu qemu-user-static libhwy-dev:arm64, as" \
    ".ci/install-deps does)"
  exit 77
}
cxx="$(command -v aarch64-linux-gnu-g++ || true)"
[ -n "$cxx" ] || skip "no aarch64 cross compiler (aarch64-linux-gnu-g++)"
qemu="$(command -v qemu-aarch64-static || command -v qemu-aarch64 || true)"
[ -n "$qemu" ] || skip "no qemu-user for aarch64 (qemu-aarch64-static)"
hwy_lib=/usr/lib/aarch64-linux-gnu
[ -e "$hwy_lib/libhwy.so" ] || skip "no aarch64 Highway ($hwy_lib/libhwy.so)"
gtest=/usr/src/googletest/googletest
[ -e "$gtest/src/gtest-all.cc" ] || skip "no GoogleTest sources ($gtest)"
sysroot=/usr/aarch64-linux-gnu

# Only the headers the kernels need, by links: /usr/include itself holds the host's C library.
mkdir -p "$work/include"
ln -sfn /usr/include/hwy "$work/include/hwy"
ln -sfn /usr/include/eigen3/Eigen "$work/include/Eigen"
ln -sfn "$gtest/include/gtest" "$work/include/gtest"
launcher=()
if command -v ccache >/dev/null; then launcher=(ccache); fi
flags=(-std=c++20 -O2 -ffp-contract=off -fno-fast-math -Wall -Wextra -Werror -I"$src"
  -I"$work/include")

compile() {  # OUTPUT SOURCE [extra flags]
  local out="$1" in="$2"
  shift 2
  "${launcher[@]}" "$cxx" "${flags[@]}" "$@" -c "$in" -o "$out"
}
start=$SECONDS
compile "$work/gtest-all.o" "$gtest/src/gtest-all.cc" -I"$gtest" -Wno-error -O0 &
compile "$work/gtest_main.o" "$gtest/src/gtest_main.cc" -I"$gtest" -Wno-error -O0 &
compile "$work/vector_kernels.o" "$src/impls/stable_cpu/vector_kernels.cc" &
compile "$work/vector_kernels_test.o" "$src/impls/stable_cpu/vector_kernels_test.cc" &
for job in $(jobs -p); do wait "$job"; done
"$cxx" -o "$work/vector_kernels_test" "$work/vector_kernels_test.o" "$work/vector_kernels.o" \
  "$work/gtest-all.o" "$work/gtest_main.o" -L"$hwy_lib" -lhwy -Wl,-rpath-link,"$sysroot/lib" \
  -pthread
echo "built for aarch64 in $((SECONDS - start)) s"

# The guest finds its loader and C library in the cross sysroot, Highway in the multiarch folder.
QEMU_LD_PREFIX="$sysroot" LD_LIBRARY_PATH="$hwy_lib" "$qemu" "$work/vector_kernels_test"
