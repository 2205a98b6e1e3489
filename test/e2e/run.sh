#!/usr/bin/env bash
# Runs the QEMU end-to-end tests (go test -tags e2e ./test/e2e/) after
# checking what they need on the host. Extra arguments go to go test,
# e.g. test/e2e/run.sh -run TestTopology/numa4
#
# E2E_INSTALL=1 installs missing Debian packages with apt-get first.
# E2E_LOG_DIR=dir keeps each boot's serial logs there.
# TestSystemd runs the Debian package under Debian 12's systemd 252 and
# bookworm-backports' 254 (E2E_SYSTEMD=0 skips it, and says so), on root
# filesystems that
# mmdebstrap builds on first use (about 40-70 s each, downloading from
# Debian's mirror) and caches in /var/cache/numairqd-e2e (E2E_CACHE_DIR
# overrides; rm -r it to rebuild); it then needs mmdebstrap, e2fsprogs
# and dpkg-deb, which E2E_INSTALL=1 installs.
set -euo pipefail
cd "$(dirname "$0")/../.."

# Build the guest's numairqd with the toolchain scripts/test.sh pins:
# go1.26.8's standard library has known vulnerabilities (see there).
export GOTOOLCHAIN="${NUMAIRQD_GOTOOLCHAIN:-go1.27.3}"

# Debian packages the suite needs: QEMU, a kernel with its modules, a
# static busybox for the initramfs, xz (to unpack the kernel's vmlinux),
# cpio (TestInitramfs lists the archive), ip (the lab's network
# namespaces and taps), ethtool (packed into the guest: ethtool -L),
# and for TestSystemd mmdebstrap (its root filesystem), mke2fs (its disk
# image) and dpkg-deb (scripts/deb.sh).
pkgs="qemu-system-x86 linux-image-amd64 busybox-static xz-utils cpio iproute2 ethtool mmdebstrap e2fsprogs dpkg"
missing=()
[ "$(id -u)" = 0 ] || missing+=("root (the tests create tap devices)")
command -v go >/dev/null || missing+=("go")
[ -c /dev/net/tun ] || missing+=("/dev/net/tun")
# need_pkgs prints what is missing that $pkgs provides, one a line.
need_pkgs() {
	local m=()
	command -v qemu-system-x86_64 >/dev/null || m+=("qemu-system-x86_64 (qemu-system-x86)")
	local k ok=
	for k in /boot/vmlinuz-*; do
		[ -e "$k" ] && [ -e "/lib/modules/${k#/boot/vmlinuz-}/modules.dep" ] && ok=1
	done
	[ -n "$ok" ] || m+=("/boot/vmlinuz-<ver> with /lib/modules/<ver> (linux-image-amd64)")
	if ! { [ -x /bin/busybox ] && ! LC_ALL=C readelf -l /bin/busybox 2>/dev/null | grep -q INTERP; }; then
		m+=("a static /bin/busybox (busybox-static)")
	fi
	command -v xz >/dev/null || m+=("xz (xz-utils)")
	command -v cpio >/dev/null || m+=("cpio (cpio)")
	command -v ip >/dev/null || m+=("ip (iproute2)")
	command -v ethtool >/dev/null || [ -x /usr/sbin/ethtool ] || m+=("ethtool (ethtool)")
	if [ "${E2E_SYSTEMD:-1}" != 0 ]; then
		command -v mmdebstrap >/dev/null || m+=("mmdebstrap (mmdebstrap)")
		command -v mke2fs >/dev/null || [ -x /usr/sbin/mke2fs ] || m+=("mke2fs (e2fsprogs)")
		command -v dpkg-deb >/dev/null || m+=("dpkg-deb (dpkg)")
	fi
	[ ${#m[@]} -eq 0 ] || printf '%s\n' "${m[@]}"
}
pkg_missing=$(need_pkgs)
if [ -n "$pkg_missing" ] && [ "${E2E_INSTALL:-}" = 1 ] && [ "$(id -u)" = 0 ]; then
	echo "e2e: missing: $(echo "$pkg_missing" | paste -sd, -); installing $pkgs" >&2
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -qq >&2
	# shellcheck disable=SC2086 # $pkgs is a word list
	apt-get install -y -qq $pkgs >&2
	pkg_missing=$(need_pkgs)
fi
if [ -n "$pkg_missing" ]; then
	while IFS= read -r l; do missing+=("$l"); done <<<"$pkg_missing"
fi
if [ ${#missing[@]} -gt 0 ]; then
	echo "e2e: missing prerequisites:" >&2
	printf '  - %s\n' "${missing[@]}" >&2
	echo "e2e: as root: apt-get install -y $pkgs   (or run with E2E_INSTALL=1)" >&2
	exit 2
fi

exec go test -tags e2e -count=1 -timeout 40m -v ./test/e2e/ "$@"
