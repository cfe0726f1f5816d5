#!/bin/bash
# The needle example as a built-in task (issue 61's "adding a built-in task
# touches its folder and one line of the build"): CMake generates a build
# with -DQKOV_EXAMPLE_TASK_BUILT_IN=ON, whose only addition is the one
# add_subdirectory line in worker/tasks/CMakeLists.txt over
# tests/example_task/package/CMakeLists.txt. The test reads the link lines
# CMake wrote: qkov-server and qkov must link the needle's task table part
# whole, qkov-worker its task table part and its trainer; the same build
# without the option must name no needle part. It generates and links
# nothing (5 s); tests/example_task/needle_e2e_test.cc trains the same two
# files in the programs this folder builds.
#
# Usage: built_in_test.sh SOURCE_DIR
set -euo pipefail
src=${1:?usage: built_in_test.sh SOURCE_DIR}
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

generate() {  # DIR OPTION-VALUE
  if ! cmake -S "$src" -B "$1" -DQKOV_BUILD_TESTS=OFF \
      -DQKOV_EXAMPLE_TASK_BUILT_IN="$2" >"$1.log" 2>&1; then
    echo "FAIL: cmake with QKOV_EXAMPLE_TASK_BUILT_IN=$2 failed:"
    tail -20 "$1.log"
    exit 1
  fi
}

# The parts linked whole by one program: the archives between
# --whole-archive and --no-whole-archive on its link line.
whole_parts() {  # BUILD-DIR PROGRAM-DIR
  local link="$1/$2/link.txt"
  [[ -f $link ]] || { echo "FAIL: no link line at $link"; exit 1; }
  tr ' ' '\n' <"$link" | awk '
    /--whole-archive/ { whole = 1 }
    /--no-whole-archive/ { whole = 0 }
    whole && /qkov_task_[a-z_]+\.a/ { sub(/.*\//, ""); print }' | sort -u
}

fail=0
expect() {  # BUILD-DIR PROGRAM-DIR NAME PART PRESENT(1|0)
  local parts
  parts=$(whole_parts "$1" "$2")
  if grep -qx "$4" <<<"$parts"; then
    [[ $5 == 1 ]] && { echo "ok: $3 links $4 whole"; return; }
    echo "FAIL: $3 links $4 without the option"; fail=1
  else
    [[ $5 == 0 ]] && { echo "ok: $3 has no $4"; return; }
    echo "FAIL: $3 does not link $4 whole; it links: $(tr '\n' ' ' <<<"$parts")"
    fail=1
  fi
}

server=server/service/CMakeFiles/qkov-server.dir
worker=worker/agent/CMakeFiles/qkov-worker.dir
cli=client/CMakeFiles/qkov.dir

generate "$work/on" ON
expect "$work/on" $server qkov-server libqkov_task_needle_spec.a 1
expect "$work/on" $cli qkov libqkov_task_needle_spec.a 1
expect "$work/on" $worker qkov-worker libqkov_task_needle_spec.a 1
expect "$work/on" $worker qkov-worker libqkov_task_needle_trainer.a 1
# The built-in packages beside it, linked the same way (the control).
expect "$work/on" $worker qkov-worker libqkov_task_synthetic_trainer.a 1

generate "$work/off" OFF
expect "$work/off" $server qkov-server libqkov_task_needle_spec.a 0
expect "$work/off" $worker qkov-worker libqkov_task_needle_trainer.a 0
expect "$work/off" $worker qkov-worker libqkov_task_synthetic_trainer.a 1

[[ $fail == 0 ]] && echo "built_in_test: the needle package is linked in by its one line"
exit $fail
