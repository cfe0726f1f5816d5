#!/usr/bin/env bash
# The Debian packages as a lab admin meets them. Builds qkov-server,
# qkov-worker, qkov-client and python3-qkov (deploy/debian/build-packages.sh),
# unpacks a clean Debian 12 root (tests/package/debian_root.sh: debootstrap,
# cached on this machine), installs the four packages there with apt
# resolving every dependency, and inside that root:
#   - nothing runs after install; the qkov user and folders exist;
#   - the server's unit refuses to start without its token file
#     (AssertPathExists);
#   - docs/cluster.md's command blocks, run as written by an admin who is
#     not root, through Debian's sudo and sudoedit (a stand-in for
#     systemctl only, below): the TLS block makes the CA, certificate and
#     key; the service-node block writes the tokens and starts the server
#     as its unit does, as qkov, with TLS, the dashboard and metrics;
#     --init_tokens never writes twice; one installed worker trains a small
#     sweep that the installed qkov submitted; qkov results reads it back,
#     and so does python3's `import qkov` (python3-qkov) over TLS;
#     /metrics, scraped with the read-only token, passes promtool and
#     counts the 16 trials; the worker-node block starts a worker unit,
#     and stopping it mid-trial hands the trial back and leaves no failed
#     unit (its exit status is one the unit counts as success);
#   - the backup unit's command makes a backup, and after purge and a
#     fresh install the restore block brings back the same results,
#     skipping a newer copy damaged on disk;
#   - the man pages and --help of every program name their main flags;
#   - the token-rotation block: a new user token served after the reload,
#     the old one still within its overlap;
#   - the upgrade block (a backup, the packages again, a restart) keeps the
#     edited server.env (a conffile), the tokens and the results;
#   - apt remove keeps the database and the configuration; apt purge
#     removes them.
# Exits 77 (ctest: skipped) with one line where the root cannot be made.
#
#   tests/package/package_test.sh SOURCE_DIR WORK_DIR [BUILD_DIR]
#
# With BUILD_DIR (the test suite passes its own build), the packages hold
# that build's programs and man pages (debian/rules' QKOV_PREBUILT) rather
# than a second compilation of the same code; without it they are built as
# deploy/debian/build-packages.sh builds a release.
set -euo pipefail
src=$(cd "$1" && pwd)
work=$(mkdir -p "$2" && cd "$2" && pwd)
if [ -n "${3:-}" ]; then
  QKOV_PREBUILT=$(cd "$3" && pwd)
  export QKOV_PREBUILT
fi
skip() { echo "package_test: SKIPPED: $*"; exit 77; }
fail() { echo "package_test: FAILED: $*" >&2; exit 1; }
step() { echo "== $(date +%T) $*"; }
start=$(date +%s)

[ "$(id -u)" = 0 ] || skip "needs root (debootstrap, chroot and mounts)"
"$src/deploy/install-deps.sh" debootstrap >/dev/null 2>&1 ||
  skip "cannot install debootstrap from the Debian archive"

step "building the packages"
"$src/deploy/debian/build-packages.sh" "$work/deb" >"$work/build-packages.out" 2>&1 ||
  { cat "$work/build-packages.out" >&2; fail "deploy/debian/build-packages.sh"; }
debs=()
for p in qkov-server qkov-worker qkov-client python3-qkov; do
  f=$(ls -t "$work/deb/${p}_"*.deb | head -1)
  [ -s "$f" ] || fail "no $p package in $work/deb"
  debs+=("$f")
done
echo "${debs[@]##*/}"

step "a clean Debian 12 root"
tarball=$("$src/tests/package/debian_root.sh") ||
  skip "cannot make a Debian 12 root with debootstrap (see /var/cache/qkov-package-test/debootstrap.log)"
root=$work/root
cache=${QKOV_ROOT_CACHE:-/var/cache/qkov-package-test}
# The processes whose root is the test's root.
root_pids() {
  local p
  for p in /proc/[0-9]*; do
    if [ "$(readlink "$p/root" 2>/dev/null)" = "$root" ]; then echo "${p#/proc/}"; fi
  done
}
# Every process left in the root, then the mounts, then the root.
cleanup() {
  local pid
  for pid in $(root_pids); do kill -9 "$pid" 2>/dev/null || true; done
  for m in var/cache/apt/archives dev/pts dev proc; do
    mountpoint -q "$root/$m" 2>/dev/null && umount -l "$root/$m"
  done
  rm -rf "$root"
}
trap cleanup EXIT
cleanup
mkdir -p "$root" "$cache/archives/partial"
tar -C "$root" -xf "$tarball"
mount -t proc proc "$root/proc" || skip "cannot mount /proc in a chroot here"
mount --bind /dev "$root/dev"
mount --bind /dev/pts "$root/dev/pts"
# apt's downloads are kept between runs on this machine.
mount --bind "$cache/archives" "$root/var/cache/apt/archives"
cp /etc/resolv.conf "$root/etc/resolv.conf"
in_root() {
  chroot "$root" /usr/bin/env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
mkdir -p "$root/tmp/debs"
cp "${debs[@]}" "$root/tmp/debs/"

step "apt install ./qkov-server_*.deb ./qkov-worker_*.deb ./qkov-client_*.deb ./python3-qkov_*.deb"
in_root apt-get update -qq >"$work/apt.log" 2>&1 || { tail "$work/apt.log"; fail "apt-get update in the root"; }
in_debs=()
for f in "${debs[@]}"; do in_debs+=("/tmp/debs/${f##*/}"); done
in_root apt-get install -y -q --no-install-recommends "${in_debs[@]}" >>"$work/apt.log" 2>&1 ||
  { tail -30 "$work/apt.log"; fail "apt could not install the packages"; }
for pid in $(root_pids); do
  fail "a process runs after install: $(tr '\0' ' ' <"/proc/$pid/cmdline")"
done
in_root id qkov >/dev/null || fail "no qkov user"
[ "$(in_root stat -c %U:%a /var/lib/qkov)" = qkov:750 ] || fail "/var/lib/qkov: $(in_root stat -c %U:%a /var/lib/qkov)"
[ -f "$root/etc/qkov/server.env" ] || fail "no /etc/qkov/server.env"
[ -f "$root/lib/systemd/system/qkov-server.service" ] || fail "no qkov-server.service"
[ -L "$root/etc/systemd/system/multi-user.target.wants/qkov-server.service" ] &&
  fail "qkov-server.service was enabled before it was configured"
[ -s "$root/usr/share/qkov/dashboard/chart.min.js" ] || fail "the dashboard has no Chart.js"

step "an admin who is not root: a user in the sudo group, Debian's sudo"
in_root apt-get install -y -q --no-install-recommends sudo >>"$work/apt.log" 2>&1 ||
  { tail "$work/apt.log"; fail "apt could not install sudo"; }
in_root useradd -m -s /bin/bash -G sudo admin
# sudo looks up the host's own name.
echo "127.0.1.1 $(hostname)" >>"$root/etc/hosts"
# sudo asks the admin for a password, which the test cannot type: NOPASSWD
# stands in for it, and apt's non-interactive front end passes through.
# Nothing else differs from Debian's sudoers (env_reset, secure_path).
printf '%s\n' 'admin ALL=(ALL:ALL) NOPASSWD: ALL' 'Defaults:admin env_keep += "DEBIAN_FRONTEND"' \
  >"$root/etc/sudoers.d/package-test"
chmod 0440 "$root/etc/sudoers.d/package-test"
in_root runuser -u admin -- sudo -n true || fail "the admin cannot use sudo"

# docs/cluster.md's command blocks run as written, in the root, as the
# admin above (through the real sudo and sudoedit): the block after the
# comment "<!-- package-test: NAME", without its indentation. A block that
# needs root without saying sudo fails here. The root has no systemd, so it
# gets a stand-in systemctl (in /usr/local/bin, on sudo's secure_path)
# that starts, stops, reloads and signals qkov-server and qkov-worker as
# their units do (ExecStart as the unit's User with its EnvironmentFile,
# AssertPathExists checked, ExecReload, a stop whose exit status is not 0 or
# in SuccessExitStatus reported as a failed unit) and runs the oneshot
# backup unit; timers are not run. The admin's editor for sudoedit writes
# what the test chose for the file it is given.
doc_block() {
  awk -v name="$1" '
    index($0, "<!-- package-test: " name " ") {want = 1; next}
    want && /^ *```sh/ {inside = 1; match($0, /^ */); indent = RLENGTH; next}
    inside && /^ *```/ {exit}
    inside {print substr($0, indent + 1)}' "$src/docs/cluster.md"
}
cat >"$root/usr/local/bin/package-test-editor" <<'EDITOR'
#!/bin/sh
# SUDO_EDITOR of the package test's admin: sudoedit hands it a copy of each
# file, named after it (/var/tmp/serverXXXX.env, /var/tmp/tokensXXXX); it
# writes what the test chose for that file.
for f in "$@"; do
  case "${f##*/}" in
    server*.env) cp /tmp/edited.env "$f" ;;
    tokens*) cp /tmp/edited-tokens "$f" ;;
    *) echo "package-test-editor: no edit for $f" >&2; exit 1 ;;
  esac
done
EDITOR
cat >"$root/usr/local/bin/systemctl" <<'SHIM'
#!/bin/bash
# systemctl for a root without systemd (tests/package/package_test.sh):
# start, stop, restart, reload, kill, status, enable --now of qkov-server,
# qkov-worker and the oneshot qkov-backup. Changes need root, as systemctl's
# do; status does not.
set -euo pipefail
state=/run/qkov-test
# The service writes its pid and exit status here, as its unit's user.
if [ "$1" != status ]; then
  [ "$(id -u)" = 0 ] || { echo "systemctl (test): $1 needs root (sudo)" >&2; exit 4; }
  mkdir -p "$state" && chmod 1777 "$state"
fi
unit_file() { echo "/lib/systemd/system/${1%.service}.service"; }
field() { sed -n "s/^$2=//p" "$(unit_file "$1")"; }
main_pid() { cat "$state/${1%.service}.pid" 2>/dev/null || true; }
start() {
  local u=${1%.service} p cmd envfile user
  case $u in *.timer) echo "systemctl (test): $u not run"; return 0 ;; esac
  for p in $(field "$u" AssertPathExists); do
    [ -e "$p" ] || { echo "Assertion failed on job for $u.service: AssertPathExists=$p" >&2; return 1; }
  done
  cmd=$(sed -n '/^ExecStart=/{:a;/\\$/{N;ba};s/^ExecStart=//;s/\\\n//g;p}' "$(unit_file "$u")")
  envfile=$(field "$u" EnvironmentFile); user=$(field "$u" User)
  if [ "$(field "$u" Type)" = oneshot ]; then
    runuser -u "$user" -- bash -c "$cmd" >>"/var/tmp/$u.log" 2>&1 </dev/null ||
      { echo "$u.service: Failed with result 'exit-code'" >&2; return 1; }
    return 0
  fi
  rm -f "$state/$u.exit" /var/lib/qkov/port
  # The service's process, its pid, and its exit status when it ends.
  runuser -u "$user" -- bash -c "set -a; . $envfile; set +a; $cmd & echo \$! >$state/$u.pid; wait \$!; echo \$? >$state/$u.exit" \
    >>"/var/tmp/$u.log" 2>&1 </dev/null &
  for _ in $(seq 1 100); do [ -s "$state/$u.pid" ] && break; sleep 0.1; done
  if [ "$u" = qkov-server ]; then
    for _ in $(seq 1 300); do [ -s /var/lib/qkov/port ] && return 0; [ -e "$state/$u.exit" ] && break; sleep 0.1; done
    tail -5 "/var/tmp/$u.log" >&2; echo "$u failed to start" >&2; return 1
  fi
}
stop() {
  local u=${1%.service} pid status ok
  pid=$(cat "$state/$u.pid" 2>/dev/null || true)
  [ -n "$pid" ] && kill -0 "$pid" 2>/dev/null || return 0
  kill -TERM "$pid"
  for _ in $(seq 1 1200); do [ -s "$state/$u.exit" ] && break; sleep 0.1; done
  status=$(cat "$state/$u.exit" 2>/dev/null || echo timeout)
  rm -f "$state/$u.pid"
  ok=0; [ "$status" = 0 ] && ok=1
  for p in $(field "$u" SuccessExitStatus); do [ "$status" = "$p" ] && ok=1; done
  [ "$ok" = 1 ] || { echo "$u.service: Failed with result 'exit-code' (status $status)" >&2; return 1; }
  echo "$u.service: inactive (exit status $status)"
}
status() {
  local u=${1%.service} pid
  pid=$(main_pid "$u")
  if [ -n "$pid" ] && [ -d "/proc/$pid" ]; then echo "$u.service: active (running)"; return 0; fi
  echo "$u.service: inactive"; return 3
}
reload() {
  local u=${1%.service} pid cmd
  pid=$(main_pid "$u"); cmd=$(field "$u" ExecReload)
  [ -n "$cmd" ] || { echo "Failed to reload $u.service: Job type reload is not applicable" >&2; return 1; }
  [ -n "$pid" ] || { echo "$u.service is not active, cannot reload" >&2; return 1; }
  ${cmd//\$MAINPID/$pid}
}
action=$1; shift
now=0 signal=SIGTERM
while [ "$#" -gt 0 ]; do
  case $1 in
    --now) now=1; shift ;;
    --kill-whom=main|--kill-who=main) shift ;;
    --signal=*) signal=${1#--signal=}; shift ;;
    -*) echo "systemctl (test): $1?" >&2; exit 1 ;;
    *) break ;;
  esac
done
for u in "$@"; do
  case $action in
    start|restart) [ "$action" = restart ] && stop "$u"; start "$u" ;;
    stop) stop "$u" ;;
    status) status "$u" ;;
    reload) reload "$u" ;;
    kill) kill -s "${signal#SIG}" "$(main_pid "$u")" ;;
    enable) [ "$now" = 1 ] && start "$u" ;;
    *) echo "systemctl (test): $action?" >&2; exit 1 ;;
  esac
done
SHIM
chmod 0755 "$root/usr/local/bin/systemctl" "$root/usr/local/bin/package-test-editor"
# What the reader answers apt's "Do you want to continue?": yes.
echo 'APT::Get::Assume-Yes "true";' >"$root/etc/apt/apt.conf.d/90package-test"
# Runs docs/cluster.md's block NAME in the root, in folder DIR, with the
# substitutions SED (a sed script: the placeholders the doc asks a reader to
# fill in).
run_doc_block() {
  local block
  block=$(doc_block "$1" | sed "${3:-}")
  [ -n "$block" ] || fail "docs/cluster.md has no block marked package-test: $1"
  echo "docs/cluster.md, $1:"; sed 's/^/  | /' <<<"$block"
  chroot "$root" /usr/sbin/runuser -u admin -- /usr/bin/env -i PATH=/usr/local/bin:/usr/bin:/bin \
    HOME=/home/admin USER=admin LOGNAME=admin LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
    SUDO_EDITOR=/usr/local/bin/package-test-editor bash -euo pipefail -c "cd $2; $block" \
    >>"$work/doc-blocks.log" 2>&1 </dev/null ||
    { tail -20 "$work/doc-blocks.log"; fail "docs/cluster.md's $1 block failed in the root"; }
}
in_shims() {
  chroot "$root" /usr/bin/env -i PATH=/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root \
    LANG=C.UTF-8 "$@"
}
# The server's settings, as the admin writes them with sudoedit: TLS, the
# dashboard and metrics on loopback, free ports written where the test
# reads them.
printf '%s\n' 'QKOV_LISTEN=127.0.0.1:0' 'QKOV_METRICS_LISTEN=127.0.0.1:0' \
  'QKOV_SERVER_FLAGS="--port_file=/var/lib/qkov/port --metrics_port_file=/var/lib/qkov/metrics.port --http_listen=127.0.0.1:0 --tls_cert=/etc/qkov/tls/server.pem --tls_key=/etc/qkov/tls/server.key --log_format=json"' \
  >"$root/tmp/edited.env"
# The service node: TLS first (the settings name its files), then the
# service-node block.
set_up_service_node() {
  run_doc_block tls /
  [ "$(in_root stat -c %U:%G:%a /etc/qkov/tls/server.key)" = root:qkov:640 ] ||
    fail "server.key: $(in_root stat -c %U:%G:%a /etc/qkov/tls/server.key)"
  run_doc_block service-node /tmp/debs
  server=127.0.0.1:$(cat "$root/var/lib/qkov/port")
  awk '$1 == "worker" {print $2}' "$root/etc/qkov/tokens" >"$root/tmp/worker.token"
  awk '$1 == "user" {print $2}' "$root/etc/qkov/tokens" >"$root/tmp/user.token"
  chmod 0644 "$root/tmp/worker.token" "$root/tmp/user.token"
}
qkov_in_root() {
  in_root qkov --server="$server" --token_file=/tmp/user.token --tls_ca=/etc/qkov/tls/ca.pem "$@"
}

step "the server's unit refuses to start without its token file"
if in_shims systemctl start qkov-server 2>"$work/assert.err"; then
  fail "the server started without its token file"
fi
grep -q "AssertPathExists=/etc/qkov/tokens" "$work/assert.err" || fail "$(cat "$work/assert.err")"

step "docs/cluster.md's TLS and service-node blocks, as written"
set_up_service_node
server_pid=$(cat "$root/run/qkov-test/qkov-server.pid")
tr '\0' ' ' <"/proc/$server_pid/cmdline" | grep -q '^/usr/bin/qkov-server ' ||
  fail "the unit's pid is not qkov-server: $(tr '\0' ' ' <"/proc/$server_pid/cmdline")"
[ "$(awk '/^Uid:/ {print $2}' "/proc/$server_pid/status")" = "$(in_root id -u qkov)" ] ||
  fail "the server does not run as qkov"
[ "$(in_root stat -c %a /etc/qkov/tokens)" = 600 ] || fail "the token file is not 0600"
before=$(md5sum <"$root/etc/qkov/tokens")
if in_root qkov-server --init_tokens=/etc/qkov/tokens 2>"$work/init2.err"; then
  fail "--init_tokens wrote over an existing file"
fi
grep -q "never overwritten" "$work/init2.err" || fail "--init_tokens: $(cat "$work/init2.err")"
[ "$(md5sum <"$root/etc/qkov/tokens")" = "$before" ] || fail "--init_tokens changed the file"

step "a sweep over TLS: installed qkov submits, an installed worker trains, qkov results reads"
qkov_in_root submit /usr/share/qkov/examples/demo-sweep.yaml --set training.max_steps=300 \
  --set training.evaluation.num_examples=128 >"$work/submit.out" 2>&1 ||
  { cat "$work/submit.out"; fail "qkov submit"; }
in_root runuser -u qkov -- qkov-worker --server="$server" --token_file=/tmp/worker.token \
  --tls_ca=/etc/qkov/tls/ca.pem --exit_when_idle >"$work/worker.log" 2>&1 ||
  { tail "$work/worker.log"; fail "qkov-worker"; }
qkov_in_root results demo --format csv >"$work/results.csv" 2>&1 ||
  { cat "$work/results.csv"; fail "qkov results"; }
done_rows=$(grep -c ',DONE,\|,done,' "$work/results.csv" || true)
[ "$done_rows" = 16 ] || { head -5 "$work/results.csv"; fail "$done_rows of 16 trials done"; }
echo "16 trials done; $(head -1 "$work/results.csv" | cut -c1-100)..."

step "python3-qkov: the installed module (with its dist-info) reads the same sweep over TLS"
in_root QKOV_SERVER="$server" QKOV_TOKEN_FILE=/tmp/user.token \
  QKOV_TLS_CA=/etc/qkov/tls/ca.pem python3 -c '
import importlib.metadata, qkov
frame = qkov.connect().results("demo")
assert (frame["state"] == "done").sum() == 16, frame
assert importlib.metadata.version("qkov") == qkov.__version__, "dist-info"
print(len(frame), "rows,", len(frame.columns), "columns from", qkov.__file__,
      "version", qkov.__version__)
' >"$work/python.out" 2>&1 || { cat "$work/python.out"; fail "python3 -c import qkov"; }
cat "$work/python.out"

step "metrics over TLS with the read-only token"
reader=$(awk '$1 == "read-only" {print $2}' "$root/etc/qkov/tokens")
mport=$(cat "$root/var/lib/qkov/metrics.port")
curl -sS --cacert "$root/etc/qkov/tls/ca.pem" -H "Authorization: Bearer $reader" \
  "https://127.0.0.1:$mport/metrics" >"$work/metrics.txt" || fail "scraping /metrics"
promtool check metrics <"$work/metrics.txt" || fail "promtool check metrics"
grep -qx 'qkov_trials{state="done"} 16' "$work/metrics.txt" ||
  fail "/metrics: $(grep '^qkov_trials' "$work/metrics.txt")"
code=$(curl -s -o /dev/null -w '%{http_code}' --cacert "$root/etc/qkov/tls/ca.pem" \
  "https://127.0.0.1:$mport/metrics")
[ "$code" = 401 ] || fail "a scrape without a token got $code"

step "docs/cluster.md's worker-node block; systemctl stop leaves no failed unit"
# The reader fills in the worker token and the server's port; the server's
# name resolves to this root's loopback.
echo "127.0.0.1 qkov.lab.example" >>"$root/etc/hosts"
mkdir -p "$root/tmp/worker-node"
cp "$root/etc/qkov/tls/ca.pem" "$root"/tmp/debs/qkov-worker_*.deb "$root/tmp/worker-node/"
worker_token=$(cat "$root/tmp/worker.token")
run_doc_block worker-node /tmp/worker-node \
  "s/WORKER_TOKEN/$worker_token/; s/qkov.lab.example:50051/qkov.lab.example:${server##*:}/"
qkov_in_root submit /usr/share/qkov/examples/demo-sweep.yaml --set name=long \
  --set training.max_steps=200000 --set training.target_loss=-1 >>"$work/submit.out" 2>&1 ||
  fail "qkov submit long"
# Until the unit's worker trains a trial (bounded: 60 s).
for _ in $(seq 1 600); do
  running=$(in_root sqlite3 /var/lib/qkov/results.db \
    "SELECT COUNT(*) FROM trials WHERE state = 'running'" 2>/dev/null || echo 0)
  [ "$running" -gt 0 ] && break
  sleep 0.1
done
[ "$running" -gt 0 ] || { tail "$root/var/tmp/qkov-worker.log"; fail "the worker unit leased nothing"; }
in_shims systemctl stop qkov-worker >"$work/worker-stop.out" 2>&1 ||
  fail "$(cat "$work/worker-stop.out"); the worker's log: $(tail -3 "$root/var/tmp/qkov-worker.log")"
cat "$work/worker-stop.out"
[ "$(in_root sqlite3 /var/lib/qkov/results.db \
  "SELECT COUNT(*) FROM attempts WHERE state = 'preempted'")" -ge 1 ] ||
  fail "the stopped worker handed no trial back"
qkov_in_root cancel long >/dev/null 2>&1 || fail "qkov cancel long"

step "docs/cluster.md's token-rotation block: a new user token, the old one valid for the overlap"
new_user_token=$(in_root openssl rand -hex 24)
awk -v t="$new_user_token" '$1 == "user" {$2 = t} {print}' "$root/etc/qkov/tokens" >"$root/tmp/edited-tokens"
run_doc_block tokens /
printf '%s\n' "$new_user_token" >"$root/tmp/new-user.token"
in_root qkov --server="$server" --token_file=/tmp/new-user.token --tls_ca=/etc/qkov/tls/ca.pem status \
  >"$work/tokens.out" 2>&1 || { cat "$work/tokens.out"; fail "the new user token after the reload"; }
qkov_in_root status >"$work/tokens-old.out" 2>&1 ||
  { cat "$work/tokens-old.out"; fail "the old user token within its overlap"; }
grep -q '"event":"tokens_reloaded"' "$root/var/tmp/qkov-server.log" ||
  fail "the server logged no tokens_reloaded: $(tail -3 "$root/var/tmp/qkov-server.log")"
cp "$root/tmp/new-user.token" "$root/tmp/user.token"

step "docs/cluster.md's stop-leasing blocks: no lease while paused, seen in status and /metrics"
run_doc_block stop-leasing /home/admin "s/qkov.lab.example:50051/qkov.lab.example:${server##*:}/"
qkov_in_root status >"$work/leasing.out" 2>&1 || { cat "$work/leasing.out"; fail "qkov status while paused"; }
grep -q '^leasing paused since .* by admin: moving the database' "$work/leasing.out" ||
  { cat "$work/leasing.out"; fail "qkov status does not say leasing is paused"; }
leasing_metric() {
  curl -sS --cacert "$root/etc/qkov/tls/ca.pem" -H "Authorization: Bearer $reader" \
    "https://127.0.0.1:$mport/metrics" | awk '$1 == "qkov_leasing_paused" {print $2}'
}
[ "$(leasing_metric)" = 1 ] || fail "qkov_leasing_paused is '$(leasing_metric)' while paused"
run_doc_block resume-leasing /home/admin "s/qkov.lab.example:50051/qkov.lab.example:${server##*:}/"
[ "$(leasing_metric)" = 0 ] || fail "qkov_leasing_paused is '$(leasing_metric)' after the resume"
grep -q '"event":"leasing_paused"' "$root/var/tmp/qkov-server.log" ||
  fail "the server logged no leasing_paused"

step "a backup, as qkov-backup.service makes it"
backup_cmd=$(sed -n 's/^ExecStart=//p' "$root/lib/systemd/system/qkov-backup.service")
in_root runuser -u qkov -- $backup_cmd >"$work/backup.out" 2>&1 || { cat "$work/backup.out"; fail "the backup"; }
backup=$(ls -t "$root"/var/backups/qkov/results-*.db | head -1)
[ -s "$backup" ] || fail "no backup in /var/backups/qkov"
[ "$(stat -c %a "$root/var/backups/qkov")" = 750 ] || fail "/var/backups/qkov is not 0750"
cp "$backup" "$work/backup.db"

step "man pages and --help"
for prog in qkov-server:--db:--http_listen qkov-worker:--server:--device qkov-data:--format:--path \
            qkov:submit:results; do
  IFS=: read -r p a b <<<"$prog"
  page="$root/usr/share/man/man1/$p.1.gz"
  [ -s "$page" ] || fail "no man page $p.1"
  # Abseil's --help exits 1; what it prints is what counts.
  help=$(in_root "$p" --help 2>&1 || true)
  man=$(zcat "$page" | sed 's/\\-/-/g')
  for word in "$a" "$b"; do
    grep -q -- "$word" <<<"$man" || fail "man $p does not mention $word"
    grep -q -- "$word" <<<"$help" || fail "$p --help does not mention $word"
  done
done

step "an upgrade keeps the configuration"
in_root dpkg-query -W -f='${Conffiles}\n' qkov-server | grep -q ' /etc/qkov/server.env ' ||
  fail "/etc/qkov/server.env is not a conffile of qkov-server"
configured=$(md5sum <"$root/etc/qkov/server.env")
tokens=$(md5sum <"$root/etc/qkov/tokens")
backups_before=$(ls "$root"/var/backups/qkov/results-*.db | wc -l)
# The packages of this build stand in for a newer release.
run_doc_block upgrade /tmp/debs
server=127.0.0.1:$(cat "$root/var/lib/qkov/port")
[ "$(ls "$root"/var/backups/qkov/results-*.db | wc -l)" -gt "$backups_before" ] ||
  fail "the upgrade block made no backup"
qkov_in_root results demo --format csv >"$work/upgraded.csv" 2>&1 ||
  { cat "$work/upgraded.csv"; fail "qkov results after the upgrade"; }
cmp -s "$work/results.csv" "$work/upgraded.csv" || fail "the results changed across the upgrade"
[ "$(md5sum <"$root/etc/qkov/server.env")" = "$configured" ] || fail "reinstalling replaced server.env"
[ "$(md5sum <"$root/etc/qkov/tokens")" = "$tokens" ] || fail "reinstalling changed the tokens"
[ "$(in_root stat -c %U /var/lib/qkov/results.db)" = qkov ] || fail "the database is not qkov's"

step "apt remove keeps the data and configuration"
in_shims systemctl stop qkov-server || fail "systemctl stop qkov-server"
in_root apt-get remove -y -q qkov-server qkov-worker qkov-client python3-qkov >>"$work/apt.log" 2>&1 || fail "apt remove"
[ ! -e "$root/usr/bin/qkov-server" ] || fail "qkov-server is still installed"
for f in /var/lib/qkov/results.db /etc/qkov/server.env /etc/qkov/tokens; do
  [ -s "$root$f" ] || fail "apt remove deleted $f"
done
step "apt purge removes them"
# Removed packages that kept configuration are in state rc; those are what
# purge acts on (qkov-server at least: its database and /etc/qkov).
left=$(in_root dpkg-query -W -f '${db:Status-Abbrev} ${Package}\n' 'qkov-*' | awk '$1 == "rc" {print $2}')
grep -qx qkov-server <<<"$left" || fail "qkov-server kept no configuration after remove"
in_root apt-get purge -y -q $left >>"$work/apt.log" 2>&1 || fail "apt purge $left"
for f in /var/lib/qkov /etc/qkov /var/log/qkov; do
  [ ! -e "$root$f" ] || fail "apt purge left $f"
done

step "a fresh install restores the backup with docs/cluster.md's restore block"
set_up_service_node
cp "$work/backup.db" "$root/var/backups/qkov/results-20000101T000000Z.db"
# A newer copy damaged on disk after it was written: the block must skip it.
cp "$work/backup.db" "$root/var/backups/qkov/results-20000102T000000Z.db"
dd if=/dev/urandom of="$root/var/backups/qkov/results-20000102T000000Z.db" bs=4096 seek=1 count=2 \
  conv=notrunc 2>/dev/null
touch -d 2000-01-01 "$root/var/backups/qkov/results-20000101T000000Z.db"
touch -d 2000-01-02 "$root/var/backups/qkov/results-20000102T000000Z.db"
in_root chown qkov:qkov /var/backups/qkov/results-20000101T000000Z.db \
  /var/backups/qkov/results-20000102T000000Z.db
run_doc_block restore /
grep -q "skipping /var/backups/qkov/results-20000102T000000Z.db" "$work/doc-blocks.log" ||
  fail "the restore block did not say it skipped the damaged backup"
server=127.0.0.1:$(cat "$root/var/lib/qkov/port")
qkov_in_root results demo --format csv >"$work/restored.csv" 2>&1 ||
  { cat "$work/restored.csv"; fail "qkov results after the restore"; }
cmp -s "$work/results.csv" "$work/restored.csv" ||
  fail "the restored results differ: $(diff "$work/results.csv" "$work/restored.csv" | head -5)"
echo "restored: the 16 trials' results as they were"
in_shims systemctl stop qkov-server || fail "stopping the restored server"
echo "package_test: passed in $(( $(date +%s) - start )) s"
