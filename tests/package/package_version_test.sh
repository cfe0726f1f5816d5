#!/usr/bin/env bash
# deploy/debian/package-version.sh in a scratch git repository: a snapshot
# before the first release, the release, a snapshot after it and the next
# release, each version as expected, and dpkg ordering them so that apt
# always upgrades (never sees a downgrade). The Python package's version
# (qkov.__version__, which pyproject.toml reads) and licence are the
# project's (CMakeLists.txt, deploy/debian/copyright); python3-qkov's
# dist-info takes the project's version when CMake writes it.
#
#   tests/package/package_version_test.sh SOURCE_DIR
set -euo pipefail
src=$(cd "$1" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
fail() { echo "package_version_test: FAILED: $*" >&2; exit 1; }
cd "$tmp"
git init -q .
git config user.email test@example.invalid
git config user.name test
printf 'project(qkov_sweep LANGUAGES CXX VERSION 0.1.0)\n' >CMakeLists.txt
version() { "$src/deploy/debian/package-version.sh"; }
commit() { echo "$1" >>f; git add -A; git commit -qm "$1"; }

commit one
commit two
before=$(version)
[[ $before =~ ^0\.1\.0~git2\.g[0-9a-f]{7}$ ]] || fail "before the release: $before"
echo change >>f
[[ $(version) == "$before.dirty" ]] || fail "a changed tree: $(version)"
git checkout -q f
git tag v0.1.0
release=$(version)
[ "$release" = 0.1.0 ] || fail "the tagged commit: $release"
commit three
after=$(version)
[[ $after =~ ^0\.1\.0\+git1\.g[0-9a-f]{7}$ ]] || fail "after the release: $after"
commit four
later=$(version)
[[ $later =~ ^0\.1\.0\+git2\.g ]] || fail "two after the release: $later"
git tag v0.2.0
next=$(version)
[ "$next" = 0.2.0 ] || fail "the next release: $next"
prev=
for v in "$before" "$release" "$after" "$later" "$next"; do
  if [ -n "$prev" ]; then
    dpkg --compare-versions "$prev" lt "$v" || fail "dpkg orders $prev after $v"
  fi
  prev=$v
done
project=$(sed -n 's/^project(qkov_sweep .*VERSION \([0-9.]*\)).*/\1/p' "$src/CMakeLists.txt")
python=$(sed -n 's/^__version__ = "\([^"]*\)".*/\1/p' "$src/client/python/qkov/__init__.py")
[ -n "$project" ] && [ "$python" = "$project" ] ||
  fail "client/python/qkov/__init__.py's __version__ '$python' is not the project's '$project'"
grep -q '^dynamic = \["version"\]' "$src/client/python/pyproject.toml" &&
  grep -q '^version = {attr = "qkov.__version__"}' "$src/client/python/pyproject.toml" ||
  fail "client/python/pyproject.toml does not take its version from qkov.__version__"
grep -q '^license = {text = "Not yet published under a licence' "$src/client/python/pyproject.toml" &&
  grep -q 'have not yet published this software under a' "$src/deploy/debian/copyright" ||
  fail "the Python package's licence and deploy/debian/copyright disagree"
echo "package_version_test: $before < $release < $after < $later < $next; python $python"
