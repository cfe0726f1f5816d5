#!/usr/bin/env bash
# The house's stairs go one way (docs/architecture.md): every #include of
# the project's C++ outside tests/ and bench/ is checked against the rooms
# it may not reach. An include that goes the wrong way fails the test,
# unless it is listed in include_back_arrows_allowed.txt (the back-arrows
# known today, each with the step that removes it); a listed one that is
# gone fails too, so the list only shrinks. Exit 1 listing each, 2 on bad
# arguments.
#
#   tests/lint/include_direction.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: include_direction.sh SOURCE_DIR}
here=$(cd "$(dirname "$0")" && pwd)
cd "$src"
[ -d common ] && [ -d server ] || { echo "include_direction: no sources under $src" >&2; exit 2; }

# ROOM: the folders it may not include, most specific room first (a file
# takes the rules of every room it is in).
rules=(
  "common/:server/ worker/ client/ storage/ http/"
  "http/:server/ worker/ client/ storage/"
  "storage/:server/ worker/ client/ http/"
  "server/core/:server/service/"
  "server/:worker/ client/"
  "worker/training/:worker/agent/ worker/tasks/ worker/data/"
  "worker/agent/:worker/tasks/ worker/data/"
  "worker/tasks/:worker/data/"
  "worker/data/:worker/agent/"
  "worker/:server/ client/ storage/"
  "client/:server/ worker/ storage/ http/"
)
allowed=$(sed -e 's/#.*//' -e 's/[[:space:]]*$//' -e '/^$/d' "$here/include_back_arrows_allowed.txt")
found=$(find common http storage server worker client -name '*.cc' -o -name '*.h' | sort |
  xargs grep -Hn '^#include "' | sed -E 's/^([^:]+):[0-9]+:#include "([^"]+)".*/\1 \2/')
failed=0
seen=""
while read -r file target; do
  [ -n "${file:-}" ] || continue
  for rule in "${rules[@]}"; do
    room=${rule%%:*}
    case "$file" in "$room"*) ;; *) continue ;; esac
    for banned in ${rule#*:}; do
      case "$target" in
        "$banned"*)
          if grep -qxF "$file -> $target" <<<"$allowed"; then
            seen+="$file -> $target"$'\n'
          else
            echo "include_direction: $file includes $target: $room may not include $banned" >&2
            failed=1
          fi
          ;;
      esac
    done
  done
done <<<"$found"
while read -r entry; do
  [ -n "$entry" ] || continue
  grep -qxF "$entry" <<<"$seen" || {
    echo "include_direction: include_back_arrows_allowed.txt lists '$entry', which is gone: remove the line" >&2
    failed=1
  }
done <<<"$allowed"
listed=$(grep -c . <<<"$allowed" || true)
if [ "$failed" = 0 ]; then
  if [ "$listed" = 0 ]; then
    echo "include_direction: every include of $(wc -l <<<"$found") goes the right way"
  else
    echo "include_direction: every include of $(wc -l <<<"$found") goes the right way, but the $listed listed"
  fi
fi
exit "$failed"
