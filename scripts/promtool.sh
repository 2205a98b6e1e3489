#!/usr/bin/env bash
# Prints the path of a promtool for scripts/test.sh: the one on PATH, or
# one taken out of Debian's prometheus package, which ships it (apt-get
# download, dpkg-deb -x into a cache: nothing is installed and no
# prometheus service starts, as `apt-get install prometheus` would start
# one on a systemd host). Exits 1 saying why when neither can be had.
set -euo pipefail
if p=$(command -v promtool); then
	echo "$p"
	exit 0
fi
cache="${NUMAIRQD_PROMTOOL_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/numairqd/promtool}"
if [ -x "$cache/promtool" ]; then
	echo "$cache/promtool"
	exit 0
fi
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
	echo "promtool is not on PATH, and there is no apt-get and dpkg-deb to take it from Debian's prometheus package" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp" # apt's _apt user downloads into it
if ! (cd "$tmp" && apt-get download -qq prometheus) >/dev/null 2>&1; then
	# An empty or old package list: refresh it (root only) and retry.
	[ "$(id -u)" = 0 ] && apt-get update -qq >&2
	if ! (cd "$tmp" && apt-get download -qq prometheus) >&2; then
		echo "promtool is not on PATH, and apt-get download prometheus failed" >&2
		exit 1
	fi
fi
dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
mkdir -p "$cache"
install -m 0755 "$tmp/x/usr/bin/promtool" "$cache/promtool"
echo "$cache/promtool"
