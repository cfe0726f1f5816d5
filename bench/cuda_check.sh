#!/usr/bin/env bash
# The GPU checks of worker/training in one run, for a machine with an NVIDIA
# GPU, CMake, a C++ compiler and a CUDA build of PyTorch (used as LibTorch)
# but none of this project's other build dependencies and no network.
#
#   bench/cuda_check.sh fetch        # on a Debian 12 machine with apt: the
#                                    # build dependencies as .debs into
#                                    # .cuda-deps/, the data the checks read
#                                    # into .cuda-data/ (both git-ignored)
#   bench/cuda_check.sh run OUTDIR   # on the GPU machine, from the
#                                    # repository root with .cuda-deps/ and
#                                    # .cuda-data/ beside it: unpack, build
#                                    # worker/training alone
#                                    # (QKOV_TRAINING_ONLY), run the CUDA
#                                    # tests and the benchmarks; every log in
#                                    # OUTDIR
#
# PYTHON names the Python that holds PyTorch (default python3).
# `run` also works on a machine without a GPU (the CUDA tests skip and the
# benchmarks run on the CPU), which is how the script itself is checked.
# Numbers it prints go to docs/PERFORMANCE.md ("GPU") with the command.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
python=${PYTHON:-python3}  # the Python that holds PyTorch

fetch() {
  local debs=(libabsl-dev libabsl20220623 libssl-dev libssl3 libicu-dev libicu72
              libpcre2-dev libpcre2-8-0 libpcre2-16-0 libpcre2-32-0
              libpcre2-posix3 nlohmann-json3-dev libgtest-dev googletest
              pkgconf pkgconf-bin libpkgconf3)
  mkdir -p .cuda-deps
  (cd .cuda-deps && apt-get download "${debs[@]}")
  local shared="${QKOV_SHARED_DATA_DIR:-$root/../shared/data}"
  mkdir -p .cuda-data/hatexplain .cuda-data/tokenizers/bert-base-uncased \
           .cuda-data/tokenizers/gpt2 .cuda-data/squad
  cp "$shared"/hatexplain/{test,validation}.jsonl .cuda-data/hatexplain/
  cp "$shared"/hatexplain/train-reconstructed.jsonl .cuda-data/hatexplain/
  cp "$shared"/tokenizers/bert-base-uncased/vocab.txt \
     .cuda-data/tokenizers/bert-base-uncased/
  cp "$shared"/tokenizers/gpt2/{encoder.json,vocab.bpe} .cuda-data/tokenizers/gpt2/
  cp "$shared"/squad/dev-v1.1-all.json .cuda-data/squad/
  du -sh .cuda-deps .cuda-data
}

run() {
  local out="$1"
  mkdir -p "$out"
  local deps=/tmp/qkov-cuda-deps
  rm -rf "$deps" && mkdir -p "$deps"
  for f in .cuda-deps/*.deb; do dpkg -x "$f" "$deps"; done
  local arch
  arch=$(gcc -dumpmachine 2>/dev/null || echo x86_64-linux-gnu)
  local libs="$deps/usr/lib/$arch"
  export PATH="$deps/usr/bin:$PATH"
  export LD_LIBRARY_PATH="$libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export PKG_CONFIG_PATH="$libs/pkgconfig:$deps/usr/share/pkgconfig"
  export PKG_CONFIG_SYSROOT_DIR="$deps"
  local torch_prefix
  torch_prefix=$("$python" -c 'import torch; print(torch.utils.cmake_prefix_path)')
  {
    nvidia-smi || true
    "$python" -c 'import torch; print("torch", torch.__version__, "cuda", torch.cuda.is_available())'
  } >"$out/machine.txt" 2>&1
  cmake -S . -B build-cuda -DQKOV_TRAINING_ONLY=ON -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$torch_prefix;$deps/usr" \
    -DOPENSSL_ROOT_DIR="$deps/usr" -DICU_ROOT="$deps/usr" \
    -DQKOV_SHARED_DATA_DIR="$root/.cuda-data" >"$out/configure.log" 2>&1
  cmake --build build-cuda -j"$(nproc)" --target training_test training_bench \
    text_bench squad_bench >"$out/build.log" 2>&1
  local bin=build-cuda/bin device=cpu
  if "$python" -c 'import sys, torch; sys.exit(0 if torch.cuda.is_available() else 1)'; then
    device=cuda
  fi
  "$bin/training_test" --gtest_filter='CudaTest.*:DeviceMemoryTest.*' \
    >"$out/cuda_test.log" 2>&1 || true
  {
    for p in FAFO CACO; do
      "$bin/training_bench" --mode=speed --device=$device --steps=500 \
        --parameterizations=$p --stack=1,32,256,1024,4096
    done
    "$bin/training_bench" --mode=trial --device=$device --parameterization=FAFO \
      --lr_ratio=20 --steps=100000
    "$bin/text_bench" --device=$device --data="$root/.cuda-data" --steps=200
    "$bin/squad_bench" --device=$device --data="$root/.cuda-data" --steps=10
  } >"$out/bench.log" 2>&1 || true
  grep -E "PASSED|FAILED|SKIPPED|Failure" "$out/cuda_test.log" || true
  cat "$out/bench.log"
}

case "${1:-}" in
  fetch) fetch ;;
  run) run "${2:?usage: bench/cuda_check.sh run OUTDIR}" ;;
  *) echo "usage: bench/cuda_check.sh fetch | run OUTDIR" >&2; exit 2 ;;
esac
