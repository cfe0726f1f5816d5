#!/usr/bin/env bash
# The Debian version of the packages built from the git checkout in the
# current directory, printed on stdout:
#   - HEAD tagged vX.Y.Z:          X.Y.Z
#   - N commits after tag vX.Y.Z:  X.Y.Z+gitN.gHASH (after that release,
#                                  before the next one)
#   - no release tag behind HEAD:  BASE~gitN.gHASH, BASE the project()
#                                  version of CMakeLists.txt and N the
#                                  commits in all (before release BASE)
# and ".dirty" after a snapshot's version when the tree has changes. So
# apt upgrades a snapshot to a later commit's, and to the release, and a
# release to the snapshots after it (dpkg --compare-versions orders them
# so; tests/package/package_version_test.sh checks it).
set -euo pipefail
base=$(sed -n 's/^project(qkov_sweep .*VERSION \([0-9.]*\)).*/\1/p' CMakeLists.txt)
hash=$(git rev-parse --short=7 HEAD)
if tag=$(git describe --tags --exact-match --match 'v[0-9]*' 2>/dev/null); then
  echo "${tag#v}"
  exit 0
fi
if tag=$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null); then
  version="${tag#v}+git$(git rev-list --count "$tag..HEAD").g$hash"
else
  version="$base~git$(git rev-list --count HEAD).g$hash"
fi
git diff --quiet HEAD 2>/dev/null || version="$version.dirty"
echo "$version"
