#!/usr/bin/env bash
# Fetches llama.cpp as vendored by PyPI's llama-cpp-python source distribution (a pinned version,
# checked by sha256), and builds ONLY the llama library plus ggml's CPU backend, once, into a fixed
# cache folder outside every sampcert build tree (so the ASan build never compiles it).
# Idempotent: does nothing when the install folder holds the stamp of this exact archive.
#
# Usage: install.sh [PREFIX]   (default /opt/sampcert-thirdparty; SAMPCERT_THIRDPARTY_DIR overrides)
# Needs: python3 -m pip (or pip), cmake, ninja, a C/C++ compiler.
set -euo pipefail

VERSION=0.3.36
SHA256=832db0699007f1be95a7e41ef12e88926b02ba836461e36a36372db2760c1a2e
PREFIX=${1:-${SAMPCERT_THIRDPARTY_DIR:-/opt/sampcert-thirdparty}}
ROOT="$PREFIX/llama-cpp-python-$VERSION"
ARCHIVE="llama_cpp_python-$VERSION.tar.gz"
STAMP="$ROOT/install/.sampcert-complete"

if [[ -f "$STAMP" && "$(cat "$STAMP")" == "$SHA256" ]]; then
  echo "llama.cpp (llama-cpp-python $VERSION) already built in $ROOT/install"
  exit 0
fi

mkdir -p "$ROOT"
cd "$ROOT"
if [[ ! -f "$ARCHIVE" ]] || ! echo "$SHA256  $ARCHIVE" | sha256sum -c --quiet - 2>/dev/null; then
  rm -f "$ARCHIVE"
  # --no-binary: the source distribution, which vendors llama.cpp with its own llama.h.
  # (pip prepares its metadata, which fetches its build backend: network to PyPI needed.)
  pip=(python3 -m pip)
  if ! "${pip[@]}" --version >/dev/null 2>&1; then pip=(/usr/bin/python3 -m pip); fi
  "${pip[@]}" download --quiet --no-deps --no-binary :all: "llama-cpp-python==$VERSION" -d .
fi
echo "$SHA256  $ARCHIVE" | sha256sum -c -

rm -rf src build install
mkdir src
tar -xzf "$ARCHIVE" -C src --strip-components=1
LLAMA_SRC="$ROOT/src/vendor/llama.cpp"

# Static, position-independent libraries: the plug-in links them into one self-contained .so
# (no rpath or LD_LIBRARY_PATH in the forked workers; llama's symbols are hidden with
# --exclude-libs so they cannot clash with the host's). GGML_NATIVE OFF keeps the build portable;
# OpenMP off because the sampler never runs a ggml graph and libgomp would be one more runtime.
start=$(date +%s)
nice cmake -S "$LLAMA_SRC" -B build -G Ninja \
  -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_INSTALL_PREFIX="$ROOT/install" \
  -DBUILD_SHARED_LIBS=OFF \
  -DCMAKE_POSITION_INDEPENDENT_CODE=ON \
  -DGGML_NATIVE=OFF -DGGML_OPENMP=OFF -DGGML_BACKEND_DL=OFF \
  -DLLAMA_BUILD_COMMON=OFF -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_TOOLS=OFF \
  -DLLAMA_BUILD_EXAMPLES=OFF -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF \
  -DLLAMA_OPENSSL=OFF -DLLAMA_BUILD_IS_DEV=OFF
nice cmake --build build --target llama --parallel "${SAMPCERT_THIRDPARTY_JOBS:-$(nproc)}"
# Install by hand what the plug-in needs: the headers and the static archives (cmake --install
# would also want the targets that were not built).
mkdir -p install/include install/lib
cp "$LLAMA_SRC/include/llama.h" install/include/
cp "$LLAMA_SRC"/ggml/include/*.h install/include/
find build -name '*.a' -exec cp {} install/lib/ \;
end=$(date +%s)
echo "llama.cpp library built in $((end - start)) s on $(nproc) cores"
echo "$((end - start))" > install/.build-seconds
echo "$SHA256" > "$STAMP"
ls -la install/lib
