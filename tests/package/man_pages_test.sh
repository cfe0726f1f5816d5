#!/usr/bin/env bash
# The four manual pages as built (BUILD_DIR/deploy/man): each renders with
# groff's warnings on and none printed, has every section a reader looks
# for, and names every flag its program's --help lists.
#
#   tests/package/man_pages_test.sh BUILD_DIR
set -euo pipefail
build=$(cd "$1" && pwd)
fail() { echo "man_pages_test: FAILED: $*" >&2; exit 1; }
export LC_ALL=C.UTF-8
for program in qkov-server qkov-worker qkov-data qkov; do
  page=$build/deploy/man/$program.1
  [ -s "$page" ] || fail "$page is missing (make qkov_man_pages)"
  warnings=$(groff -man -ww -z -Tutf8 "$page" 2>&1)
  [ -z "$warnings" ] || fail "$program.1: groff: $warnings"
  text=$(MANWIDTH=80 man -l "$page" 2>/dev/null | col -b)
  for section in NAME SYNOPSIS DESCRIPTION OPTIONS FILES ENVIRONMENT \
      "EXIT STATUS" EXAMPLES "SEE ALSO"; do
    grep -qx "$section" <<<"$text" || fail "$program.1 has no $section section"
  done
  # Every flag --help lists appears in the page.
  # (Abseil's --help exits 1.)
  help=$("$build/bin/$program" --help 2>&1 || true)
  flags=$(grep -oE '^ +(-[a-z],)?--[a-z_]+' <<<"$help" | sed -E 's/.*--//' |
    sort -u)
  [ -n "$flags" ] || fail "$program --help lists no flags"
  for f in $flags; do
    grep -q -- "--$f" <<<"$text" || fail "$program.1 does not mention --$f"
  done
  echo "man_pages_test: $program.1: $(wc -w <<<"$flags") flags, every section"
done
