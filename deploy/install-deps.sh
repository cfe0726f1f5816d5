#!/usr/bin/env bash
# Installs the Debian 12 packages qkov-sweep builds and runs with. Safe to
# run again: it only calls apt when something is missing. docs/dependencies.md
# says why each package is here.
set -euo pipefail

packages=(
  build-essential cmake pkg-config git
  libtorch-dev libopenblas0-pthread
  libgrpc++-dev protobuf-compiler-grpc libprotobuf-dev protobuf-compiler
  libabsl-dev libssl-dev
  libsqlite3-dev sqlite3
  googletest libgtest-dev libgmock-dev
  libcli11-dev libyaml-cpp-dev
  libicu-dev libpcre2-dev nlohmann-json3-dev zlib1g-dev libcurl4-openssl-dev
  libmicrohttpd-dev libgnutls28-dev libcpp-httplib-dev libjs-chart.js
  prometheus-cpp-dev libsystemd-dev
  gnuplot-nox xz-utils
  openssl
)
if [ "$#" -gt 0 ]; then packages+=("$@"); fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
if [ "${#missing[@]}" -eq 0 ]; then
  exit 0
fi
echo "install-deps: installing ${missing[*]}" >&2
sudo_cmd=()
if [ "$(id -u)" -ne 0 ]; then sudo_cmd=(sudo); fi
export DEBIAN_FRONTEND=noninteractive
"${sudo_cmd[@]}" apt-get update -qq
"${sudo_cmd[@]}" apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
