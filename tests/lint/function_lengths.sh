#!/usr/bin/env bash
# Every function of the project's C++ (outside tests/ and bench/) is at most
# 100 lines, but main()s and the data tables listed in
# long_functions_allowed.txt. Function extents come from universal-ctags
# (its C++ parser's "end" field). Exit 1 listing each function over the
# limit, with its length and place.
#
#   tests/lint/function_lengths.sh SOURCE_DIR [LIMIT]
set -euo pipefail
src=${1:?usage: function_lengths.sh SOURCE_DIR [LIMIT]}
limit=${2:-100}
here=$(cd "$(dirname "$0")" && pwd)
cd "$src"
if ! ctags --version 2>/dev/null | grep -q 'Universal Ctags'; then
  echo "function_lengths: needs universal-ctags (apt-get install universal-ctags)" >&2
  exit 2
fi
# Allowed: "FILE FUNCTION" lines (comments after '#').
allowed=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$here/long_functions_allowed.txt")
files=$(find common http server client storage worker proto -name '*.cc' -print | sort)
[ -n "$files" ] || { echo "function_lengths: no sources under $src" >&2; exit 2; }
over=$(echo "$files" | ctags --languages=C++ --kinds-C++=f --fields=+ne -x \
  --_xformat='%{end} %{line} %{input} %{name}' -L - |
  awk -v n="$limit" '$1 != "" && $1 - $2 + 1 > n {print $1 - $2 + 1, $3":"$2, $4}')
failed=0
while read -r lines place name; do
  [ -n "${lines:-}" ] || continue
  file=${place%%:*}
  if [ "$name" = main ] || grep -qxF "$file $name" <<<"$allowed"; then
    continue
  fi
  echo "function_lengths: $place $name is $lines lines (limit $limit)"
  failed=1
done <<<"$over"
# Every allowance still names a long function (a stale line hides nothing).
while read -r file name; do
  [ -n "${file:-}" ] || continue
  if ! grep -q " $file:[0-9]* $name\$" <<<"$over"; then
    echo "function_lengths: long_functions_allowed.txt: $file $name is not over $limit lines; remove the line"
    failed=1
  fi
done <<<"$allowed"
if [ "$failed" = 0 ]; then
  echo "function_lengths: every function within $limit lines but main()s and $(grep -c . <<<"$allowed") data tables"
fi
exit "$failed"
