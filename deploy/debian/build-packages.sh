#!/usr/bin/env bash
# Builds the Debian packages qkov-server, qkov-worker, qkov-client and
# python3-qkov from
# this source tree with dpkg-buildpackage (debhelper), into OUT_DIR (default
# build/deb). Installs what it needs with apt. The version comes from git
# (deploy/debian/package-version.sh): X.Y.Z for a release tag vX.Y.Z,
# X.Y.Z+gitN.gHASH after one, 0.1.0~gitN.gHASH before the first.
#
#   deploy/debian/build-packages.sh [OUT_DIR]
#
# With QKOV_PREBUILT=BUILD_DIR in the environment the packages hold that
# CMake build's programs instead of compiling them again (the package test
# does this with the test suite's build).
# The staging tree (OUT_DIR/src) keeps its CMake build between runs: only
# what changed is rebuilt.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=$(mkdir -p "${1:-$root/build/deb}" && cd "${1:-$root/build/deb}" && pwd)
"$root/deploy/install-deps.sh" debhelper dpkg-dev fakeroot help2man lintian

cd "$root"
version=$("$root/deploy/debian/package-version.sh")

# The tracked files as they are in the working tree, with their times (so
# an unchanged file is not rebuilt), plus debian/.
stage=$out/src
mkdir -p "$stage"
git ls-files -z --cached --others --exclude-standard |
  while IFS= read -r -d '' f; do
    if [ -e "$f" ]; then printf '%s\0' "$f"; fi
  done | xargs -0 cp -a --parents -t "$stage"
rm -rf "$stage/debian"
cp -a "$root/deploy/debian" "$stage/debian"
rm -f "$stage/debian/build-packages.sh"
# The code version compiled into every result is git describe's; the staged
# tree has no .git, so debian/rules passes this down.
QKOV_GIT_VERSION=$(git describe --always --dirty --abbrev=12)
export QKOV_GIT_VERSION
cat >"$stage/debian/changelog" <<CHANGELOG
qkov-sweep ($version) unstable; urgency=medium

  * Built from $(git rev-parse HEAD).

 -- qkov-sweep developers <qkov-sweep@users.noreply.github.com>  $(date -R)
CHANGELOG

cd "$stage"
# -nc: keep the previous build; -b: binary packages only.
dpkg-buildpackage -b -nc -us -uc -j"$(nproc)" >"$out/build.log" 2>&1 || {
  tail -40 "$out/build.log" >&2
  echo "build-packages: dpkg-buildpackage failed; the whole log: $out/build.log" >&2
  exit 1
}
ls "$out"/qkov-{server,worker,client}_"$version"_*.deb \
  "$out"/python3-qkov_"$version"_all.deb
