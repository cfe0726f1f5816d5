#!/usr/bin/env bash
# ThreadSanitizer over the multi-threaded parts: the common, store,
# coordinator, service and CLI suites and the concurrency stress test
# (every kind of call at once on one server), built with clang and
# -DQKOV_SANITIZE=thread in build-tsan/ beside build/. Any report fails the
# run. tests/run_all.sh runs it before the main suite.
#
#   tests/tsan.sh           the suites and the stress test's Direct case
#   tests/tsan.sh --grpc    also gRPC instrumented: the stress test's gRPC
#                           case and watch_load_test (about 8 more minutes
#                           of both cores, once, to build gRPC; by hand
#                           before a release, like tests/sanitizers.sh
#                           --full)
#
# Debian's Abseil is not instrumented, so TSan cannot see absl::Mutex and
# would report every race it guards. This script builds Abseil's
# synchronization library and its dependencies from Debian's own source of
# the installed version (apt-get source, through a private apt list so the
# machine's apt setup is untouched), with TSan, under the same sonames, and
# links the test programs with an RPATH to them (DT_RPATH, which also
# governs the libraries they load, gRPC's included; child processes such as
# gnuplot keep Debian's). Debian's gRPC core, uninstrumented, hands data
# between its threads in ways TSan cannot follow (a stress run through it
# gives about a thousand reports on gRPC's own buffers), so by default the
# stress test calls the Coordinator beside gRPC (its Direct case). With
# --grpc the script builds libgrpc, libgrpc++, gpr, upb and
# address_sorting the same way from Debian's source of the installed gRPC
# (-O1, line tables), into the same RPATH folder, and the calls go through
# gRPC on loopback. tests/tsan.supp holds the one report left inside Abseil
# itself, with its reason.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
build=${QKOV_TSAN_BUILD_DIR:-${QKOV_BUILD_DIR:-$root/build}-tsan}
mirror=${QKOV_DEBIAN_MIRROR:-http://deb.debian.org/debian}
targets=(common_test storage_test server_core_test service_test client_test
  concurrency_stress_test)
declare -A filter=([concurrency_stress_test]='*Direct*')
grpc=false
case "${1:-}" in
  "") ;;
  --grpc)
    grpc=true
    targets+=(watch_load_test)
    filter[concurrency_stress_test]='*'
    ;;
  *)
    echo "usage: tests/tsan.sh [--grpc]" >&2
    exit 2
    ;;
esac
mkdir -p "$build"

# Debian's source of PACKAGE at VERSION unpacked under DEST (its patches
# applied), through a private apt list in $build/debian-src so that the
# machine's apt setup is untouched. Prints the source folder.
fetch_debian_source() {
  local package=$1 version=$2 dest=$3 apt_dir=$build/debian-src
  mkdir -p "$apt_dir/lists/partial" "$apt_dir/cache/archives/partial" "$dest"
  echo "deb-src [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg]" \
    "$mirror bookworm main" >"$apt_dir/sources.list"
  local apt_opts=(-o "Dir::Etc::SourceList=$apt_dir/sources.list"
    -o "Dir::Etc::SourceParts=$apt_dir/none"
    -o "Dir::State::Lists=$apt_dir/lists"
    -o "Dir::Cache=$apt_dir/cache" -o APT::Sandbox::User=root -qq)
  if ! apt-get "${apt_opts[@]}" update >/dev/null ||
    ! (cd "$dest" &&
      apt-get "${apt_opts[@]}" source "$package=$version" >/dev/null); then
    echo "tsan: cannot fetch Debian's source of $package $version from" \
      "$mirror (set QKOV_DEBIAN_MIRROR)" >&2
    exit 1
  fi
  find "$dest" -maxdepth 1 -type d -name "$package-*" | head -1
}

# 1. Abseil's synchronization library with TSan, from Debian's source.
absl_version=$(dpkg-query -W -f='${Version}' libabsl-dev)
absl_lib=$build/absl-tsan/lib
if [ ! -e "$absl_lib/.version" ] ||
  [ "$(cat "$absl_lib/.version")" != "$absl_version" ]; then
  rm -rf "$build/absl-tsan"
  mkdir -p "$absl_lib"
  src=$(fetch_debian_source abseil "$absl_version" "$build/absl-tsan/src")
  cmake -S "$src" -B "$build/absl-tsan/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DBUILD_TESTING=OFF \
    -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_CXX_FLAGS=-fsanitize=thread \
    -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread >/dev/null
  cmake --build "$build/absl-tsan/build" -j"$(nproc)" \
    --target synchronization >/dev/null
  find "$build/absl-tsan/build/absl" -name 'libabsl_*.so.*' \
    -exec cp -P {} "$absl_lib/" \;
  echo "$absl_version" >"$absl_lib/.version"
fi

# 1b. With --grpc: gRPC's core and C++ libraries with TSan, from Debian's
# source of the installed version, into the same folder.
grpc_version=$(dpkg-query -W -f='${Version}' libgrpc++-dev)
grpc_built=$build/grpc-tsan/build
if $grpc && { [ ! -e "$grpc_built/.version" ] ||
  [ "$(cat "$grpc_built/.version")" != "$grpc_version" ]; }; then
  rm -rf "$build/grpc-tsan"
  src=$(fetch_debian_source grpc "$grpc_version" "$build/grpc-tsan/src")
  # Debian's providers (debian/rules), no code generators; protoc's library
  # is named only to satisfy a plugin target that is not built.
  flags="-fsanitize=thread -O1 -gline-tables-only"
  cmake -S "$src" -B "$grpc_built" -DCMAKE_BUILD_TYPE=None \
    -DCMAKE_CXX_STANDARD=17 -DBUILD_SHARED_LIBS=ON -DgRPC_BUILD_TESTS=OFF \
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
    "-DCMAKE_C_FLAGS=$flags" "-DCMAKE_CXX_FLAGS=$flags" \
    -DCMAKE_SHARED_LINKER_FLAGS=-fsanitize=thread \
    -DgRPC_ABSL_PROVIDER=package -DgRPC_CARES_PROVIDER=package \
    -DgRPC_PROTOBUF_PROVIDER=package -DgRPC_RE2_PROVIDER=package \
    -DgRPC_SSL_PROVIDER=package -DgRPC_ZLIB_PROVIDER=package \
    -DgRPC_BACKWARDS_COMPATIBILITY_MODE=OFF -DgRPC_BUILD_CODEGEN=OFF \
    -DgRPC_BUILD_GRPC_CPP_PLUGIN=OFF -DgRPC_BUILD_GRPC_CSHARP_PLUGIN=OFF \
    -DgRPC_BUILD_GRPC_NODE_PLUGIN=OFF -DgRPC_BUILD_GRPC_OBJECTIVE_C_PLUGIN=OFF \
    -DgRPC_BUILD_GRPC_PHP_PLUGIN=OFF -DgRPC_BUILD_GRPC_PYTHON_PLUGIN=OFF \
    -DgRPC_BUILD_GRPC_RUBY_PLUGIN=OFF \
    -DProtobuf_PROTOC_LIBRARY=/nonexistent/libprotoc-unused.so >/dev/null
  cmake --build "$grpc_built" -j"$(nproc)" --target grpc++ >/dev/null
  echo "$grpc_version" >"$grpc_built/.version"
fi
# The RPATH folder holds the instrumented gRPC with --grpc, and Debian's is
# loaded without it.
grpc_libs=(grpc++ grpc gpr upb address_sorting)
for lib in "${grpc_libs[@]}"; do
  rm -f "$absl_lib/lib$lib.so."*
  if $grpc; then cp -P "$grpc_built/lib$lib.so."* "$absl_lib/"; fi
done

# 2. Our code with TSan.
cmake -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DQKOV_SANITIZE=thread -DQKOV_BUILD_TESTS=ON \
  "-DCMAKE_EXE_LINKER_FLAGS=-Wl,--disable-new-dtags -Wl,-rpath,$absl_lib" \
  >/dev/null
cmake --build "$build" -j"$(nproc)" --target "${targets[@]}"

# 3. Run; any report fails.
export TSAN_OPTIONS="halt_on_error=0 second_deadlock_stack=1 suppressions=$root/tests/tsan.supp"
failed=()
for t in "${targets[@]}"; do
  log="$build/$t.log"
  if timeout 1200 "$build/bin/$t" "--gtest_filter=${filter[$t]:-*}" \
    >"$log" 2>&1 &&
    ! grep -q 'WARNING: ThreadSanitizer' "$log"; then
    echo "tsan: $t: $(grep -E '^\[  PASSED  \]' "$log" | tail -1)"
  else
    echo "tsan: $t FAILED; its reports:" >&2
    grep -A30 'WARNING: ThreadSanitizer' "$log" | head -80 >&2 || tail -40 "$log" >&2
    failed+=("$t")
  fi
done
if [ "${#failed[@]}" -gt 0 ]; then
  echo "tsan: ${#failed[@]} suite(s) failed: ${failed[*]}" >&2
  exit 1
fi
