#!/usr/bin/env bash
# Usage: scripts/prometheus.sh promtool|prometheus
# Prints the path of Prometheus's promtool or of the prometheus server
# for scripts/test.sh: the one on PATH, or the one taken out of Debian's
# prometheus package, which ships both (apt-get download, dpkg-deb -x
# into a cache: nothing is installed and no prometheus service starts,
# as `apt-get install prometheus` would start one on a systemd host).
# Exits 1 saying why when it cannot be had.
set -euo pipefail
bin="${1:-}"
case "$bin" in
promtool | prometheus) ;;
*)
	echo "usage: $0 promtool|prometheus" >&2
	exit 2
	;;
esac
if p=$(command -v "$bin"); then
	echo "$p"
	exit 0
fi
cache="${NUMAIRQD_PROMETHEUS_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/numairqd/prometheus}"
if [ -x "$cache/$bin" ]; then
	echo "$cache/$bin"
	exit 0
fi
if ! command -v apt-get >/dev/null || ! command -v dpkg-deb >/dev/null; then
	echo "$bin is not on PATH, and there is no apt-get and dpkg-deb to take it from Debian's prometheus package" >&2
	exit 1
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
chmod 0755 "$tmp" # apt's _apt user downloads into it
if ! (cd "$tmp" && apt-get download -qq prometheus) >/dev/null 2>&1; then
	# An empty or old package list: refresh it (root only) and retry.
	if [ "$(id -u)" = 0 ]; then apt-get update -qq >&2 || true; fi
	if ! (cd "$tmp" && apt-get download -qq prometheus) >&2; then
		echo "$bin is not on PATH, and apt-get download prometheus failed" >&2
		exit 1
	fi
fi
dpkg-deb -x "$tmp"/prometheus_*.deb "$tmp/x"
mkdir -p "$cache"
# Both at once: one download serves the two stages of scripts/test.sh.
install -m 0755 "$tmp/x/usr/bin/promtool" "$tmp/x/usr/bin/prometheus" "$cache/"
echo "$cache/$bin"
