#!/usr/bin/env bash
# Build and install llama-cpp-python with flags the project chooses, never pip's defaults.
#
# Why: pip's default build compiles llama.cpp with GGML_NATIVE=ON, which turns on every
# instruction set the build machine has, AMX included. On Intel Xeons with AMX that build
# segfaults on the first decode; on a CPU without the build machine's extensions it dies
# with an illegal instruction. See docs/model-runtime.md for the measurements.
#
# What: x86-64-v3 (AVX2, FMA, F16C) always; AVX-512 (+VNNI, BF16 where present) only when
# this CPU has them; AMX always off. The wheel is cached under a key made of the package
# version and the flags, so a wheel built with other flags is never reused, and the installed
# build writes a stamp the install step compares against on every run.
set -euo pipefail
VERSION="${LLAMA_CPP_PYTHON_VERSION:-0.3.36}"
VENV="${VENV:-.venv}"
PIP="$VENV/bin/pip"
CACHE="${BLOOM_MODEL_CACHE:-$HOME/.cache/bloom}/wheels"
fail() { echo "install_llama_cpp: $*" >&2; exit 1; }

flags_for_this_cpu() {
  local f=(-DGGML_NATIVE=OFF -DGGML_AMX_TILE=OFF -DGGML_AMX_INT8=OFF -DGGML_AMX_BF16=OFF
           -DGGML_AVX_VNNI=OFF -DGGML_AVX512_VBMI=OFF)
  case "$(uname -m)" in
    x86_64)
      local cpu; cpu="$(grep -m1 '^flags' /proc/cpuinfo 2>/dev/null || true)"
      has() { [[ " $cpu " == *" $1 "* ]]; }
      has avx2 && has fma && has f16c || fail "this CPU lacks AVX2/FMA/F16C (x86-64-v3); llama.cpp would run too slowly to coach"
      f+=(-DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON)
      if has avx512f && has avx512bw && has avx512vl && has avx512dq; then
        f+=(-DGGML_AVX512=ON)
        has avx512_vnni && f+=(-DGGML_AVX512_VNNI=ON) || f+=(-DGGML_AVX512_VNNI=OFF)
        has avx512_bf16 && f+=(-DGGML_AVX512_BF16=ON) || f+=(-DGGML_AVX512_BF16=OFF)
      else
        f+=(-DGGML_AVX512=OFF -DGGML_AVX512_VNNI=OFF -DGGML_AVX512_BF16=OFF)
      fi ;;
    *) ;;  # other architectures: GGML_NATIVE=OFF and the compiler's baseline
  esac
  echo "${f[*]}"
}

FLAGS="$(flags_for_this_cpu)"
KEY="$VERSION-$(echo -n "$FLAGS" | sha256sum | cut -c1-12)"
STAMP="$VENV/llama_cpp_build.txt"
WANT="llama-cpp-python==$VERSION $FLAGS"

if [ -f "$STAMP" ] && [ "$(cat "$STAMP")" = "$WANT" ] && "$VENV/bin/python" -c "import llama_cpp" 2>/dev/null; then
  exit 0
fi

DIR="$CACHE/llama_cpp_python-$KEY"
WHEEL="$(ls "$DIR"/llama_cpp_python-*.whl 2>/dev/null | head -n1 || true)"
if [ -z "$WHEEL" ]; then
  echo "install_llama_cpp: building llama-cpp-python $VERSION ($FLAGS); this compiles llama.cpp (~8 min on 2 cores)"
  mkdir -p "$DIR"
  PIP_CONSTRAINT="$(dirname "$0")/llama_cpp_build.constraints" CMAKE_ARGS="$FLAGS" FORCE_CMAKE=1 "$PIP" wheel -q --no-deps --no-cache-dir --no-binary llama-cpp-python \
    -w "$DIR" "llama-cpp-python==$VERSION" || { rm -rf "$DIR"; fail "building llama-cpp-python failed (needs gcc, g++ and cmake)"; }
  WHEEL="$(ls "$DIR"/llama_cpp_python-*.whl | head -n1)"
  echo "$FLAGS" > "$DIR/FLAGS"
fi
"$PIP" install -q --force-reinstall --no-deps "$WHEEL" || fail "installing $WHEEL failed"
"$PIP" install -q "$WHEEL[server]" || fail "installing the server extras of $WHEEL failed"
echo "$WANT" > "$STAMP"
echo "install_llama_cpp: installed $(basename "$WHEEL") with $FLAGS"
