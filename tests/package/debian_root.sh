#!/usr/bin/env bash
# Makes (once) and caches a clean Debian 12 root for the package test:
# debootstrap's minbase from the mirror this machine's apt already uses,
# plus the keyring, apt's https support and ca-certificates. Prints the
# tarball's path. The cache lives in $QKOV_ROOT_CACHE (default
# /var/cache/qkov-package-test) and is reused by later runs on this machine.
#
#   tests/package/debian_root.sh
set -euo pipefail
cache=${QKOV_ROOT_CACHE:-/var/cache/qkov-package-test}
tarball=$cache/bookworm-minbase.tar
if [ -s "$tarball" ]; then
  echo "$tarball"
  exit 0
fi
mkdir -p "$cache"
# The mirror apt is configured with here (deb822 sources or sources.list).
mirror=$(sed -n 's/^URIs: *\([^ ]*\).*/\1/p' /etc/apt/sources.list.d/*.sources 2>/dev/null |
         grep -v security | head -1 || true)
if [ -z "$mirror" ]; then
  mirror=$(awk '$1 == "deb" && $3 == "bookworm" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
fi
if [ -z "$mirror" ]; then
  echo "debian_root: no Debian mirror in this machine's apt sources" >&2
  exit 3
fi
work=$(mktemp -d "$cache/root.XXXXXX")
trap 'rm -rf "$work"' EXIT
debootstrap --variant=minbase bookworm "$work/root" "$mirror" >"$cache/debootstrap.log" 2>&1 || {
  echo "debian_root: debootstrap failed (see $cache/debootstrap.log)" >&2
  exit 3
}
# apt inside the root reads the same mirror, with the security suite.
printf 'deb %s bookworm main\ndeb %s bookworm-updates main\n' "$mirror" "$mirror" \
  >"$work/root/etc/apt/sources.list"
tar -C "$work/root" -cf "$tarball.tmp" .
mv "$tarball.tmp" "$tarball"
echo "$tarball"
