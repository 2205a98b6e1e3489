#!/usr/bin/env bash
# Runs the QEMU end-to-end tests (go test -tags e2e ./test/e2e/) after
# checking what they need on the host. Extra arguments go to go test,
# e.g. test/e2e/run.sh -run TestTopology/numa4
#
# The suite runs once per guest kernel: the newest installed Debian
# kernel of each series in E2E_SERIES (default "6.1 6.12": Debian 12's
# own linux-image-amd64 and its linux-image-6.12-amd64), one after the
# other; the run fails if either does. E2E_KERNEL=/boot/vmlinuz-VER runs
# that kernel alone. Then TestNetlinkQueues and TestCapturePlan run
# alone on Debian 13's backports kernel, whose e1000e links its queues
# to NAPIs with IRQs (no device QEMU emulates does on 6.12), so that
# queue identity comes from netlink, and a capture's from the answers
# it recorded: its packages are downloaded
# with apt-get from trixie-backports (signed by Debian's archive keys,
# which Debian 12's debian-archive-keyring holds), unpacked and cached
# under /var/cache/numairqd-e2e (E2E_CACHE_DIR); E2E_NETLINK_KERNEL=0
# skips that step, and says so.
#
# E2E_INSTALL=1 installs missing Debian packages with apt-get first.
# E2E_LOG_DIR=dir keeps each boot's serial logs there.
# TestSystemd runs the Debian package under Debian 12's systemd 252 and
# bookworm-backports' 254 (E2E_SYSTEMD=0 skips it, and says so), on root
# filesystems that
# mmdebstrap builds on first use (about 40-70 s each, downloading from
# Debian's mirror) and caches in /var/cache/numairqd-e2e (E2E_CACHE_DIR
# overrides; rm -r it to rebuild); it then needs mmdebstrap, e2fsprogs
# and dpkg-deb, which E2E_INSTALL=1 installs. TestPodman (skipped with
# E2E_SYSTEMD=0 too, or E2E_PODMAN=0) boots a Debian 13 root with podman
# built the same way, and builds the image with go run ./deploy/image.
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
pkgs="qemu-system-x86 linux-image-amd64 linux-image-6.12-amd64 busybox-static xz-utils cpio iproute2 ethtool mmdebstrap e2fsprogs dpkg"
series="${E2E_SERIES:-6.1 6.12}"

# kernel_of prints the newest /boot/vmlinuz-$1.* with its modules.dep.
kernel_of() {
	local k best=
	for k in /boot/vmlinuz-"$1".*; do
		[ -e "$k" ] && [ -e "/lib/modules/${k#/boot/vmlinuz-}/modules.dep" ] || continue
		best=$(printf '%s\n%s\n' "$best" "$k" | sed '/^$/d' | sort -V | tail -n 1)
	done
	[ -n "$best" ] && echo "$best"
}
missing=()
[ "$(id -u)" = 0 ] || missing+=("root (the tests create tap devices)")
command -v go >/dev/null || missing+=("go")
[ -c /dev/net/tun ] || missing+=("/dev/net/tun")
# need_pkgs prints what is missing that $pkgs provides, one a line.
need_pkgs() {
	local m=()
	command -v qemu-system-x86_64 >/dev/null || m+=("qemu-system-x86_64 (qemu-system-x86)")
	local v
	if [ -n "${E2E_KERNEL:-}" ]; then
		[ -r "$E2E_KERNEL" ] || m+=("E2E_KERNEL=$E2E_KERNEL (not readable)")
	else
		for v in $series; do
			kernel_of "$v" >/dev/null || m+=("/boot/vmlinuz-$v.* with its /lib/modules (Debian 12: linux-image-amd64 is 6.1, linux-image-6.12-amd64 6.12)")
		done
	fi
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

if [ -n "${E2E_KERNEL:-}" ]; then
	exec go test -tags e2e -count=1 -timeout 40m -v ./test/e2e/ "$@"
fi
# backports_kernel prints "VMLINUZ MODDIR" of trixie-backports' newest
# amd64 kernel, downloading and unpacking it on first use.
backports_kernel() {
	local cache="${E2E_CACHE_DIR:-/var/cache/numairqd-e2e}/trixie-backports" img ver p
	local -a o=(-o "Dir::Etc::SourceList=$cache/sources.list" -o Dir::Etc::SourceParts=/dev/null
		-o "Dir::State::Lists=$cache/lists" -o "Dir::State::Status=$cache/status" -o "Dir::Cache=$cache/apt"
		-o Dir::Etc::Preferences=/dev/null -o Dir::Etc::PreferencesParts=/dev/null
		-o Debug::NoLocking=1 -o APT::Architecture=amd64 -o APT::Sandbox::User=root)
	mkdir -p "$cache/lists/partial" "$cache/apt/archives/partial" "$cache/debs"
	echo "deb [signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://deb.debian.org/debian trixie-backports main" >"$cache/sources.list"
	touch "$cache/status"
	apt-get -qq "${o[@]}" update >&2 || return 1
	img=$(apt-cache "${o[@]}" depends linux-image-amd64 | awk '$1 == "Depends:" && $2 ~ /^linux-image-[0-9]/ { print $2; exit }')
	ver=${img#linux-image-}
	[ -n "$ver" ] || return 1
	if [ ! -e "$cache/root-$ver/usr/lib/modules/$ver/modules.dep" ]; then
		(cd "$cache/debs" && apt-get -qq "${o[@]}" download "linux-binary-$ver" "linux-modules-$ver" "linux-base-$ver") >&2 || return 1
		rm -rf "$cache/root-$ver.tmp"
		for p in binary modules base; do
			dpkg-deb -x "$cache/debs/linux-$p-${ver}_"*.deb "$cache/root-$ver.tmp" || return 1
		done
		depmod -b "$cache/root-$ver.tmp/usr" "$ver" || return 1
		rm -rf "$cache/root-$ver" "$cache/debs"/*.deb
		mv "$cache/root-$ver.tmp" "$cache/root-$ver"
	fi
	echo "$cache/root-$ver/usr/lib/modules/$ver/vmlinuz $cache/root-$ver/usr/lib/modules/$ver"
}

# digest FILE prints what each failed test of go test -v's output in
# FILE logged, less figures, passed checks and QEMU's command line: at
# most 40 lines a test, each cut to 300 characters. Of a message's
# continuation (the serial console's tail, a daemon log) it keeps the
# first 2 lines and the last 8, where a console shows where it stopped.
# The tail of a long run is what a CI log shows first.
digest() {
	awk '
	function flush(  i) {
		if (c <= 10) {
			for (i = 1; i <= c; i++) buf[++n] = cont[i]
		} else {
			buf[++n] = cont[1]; buf[++n] = cont[2]
			buf[++n] = "        ... (" c - 10 " lines)"
			for (i = c - 7; i <= c; i++) buf[++n] = cont[i]
		}
		c = 0; keep = 0
	}
	/^=== RUN   Test[^\/]*$/ { n = 0; c = 0; keep = 0; next }
	/^--- FAIL: / {
		flush()
		print "  " $0
		for (i = 1; i <= n && i <= 40; i++) print "    " substr(buf[i], 1, 300)
		n = 0
		next
	}
	/^        / { if (keep) cont[++c] = $0; next }
	/^ +[A-Za-z0-9_]+\.go:[0-9]+: / {
		flush()
		if ($0 ~ /E2E-METRIC|E2E-PLACED|E2E-RESULT [^ ]+ [^ ]+ PASS|harness\.go:[0-9]+: ip netns exec|: booting .* through its decompressor/) next
		buf[++n] = $0
		keep = 1
	}' "$1"
}

out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
rc=0
summary=()
failed=()
for v in $series; do
	k=$(kernel_of "$v")
	echo "== e2e on ${k#/boot/vmlinuz-}"
	start=$(date +%s)
	r=0
	E2E_KERNEL="$k" go test -tags e2e -count=1 -timeout 40m -v ./test/e2e/ "$@" 2>&1 | tee "$out/$v.log" || r=$?
	summary+=("${k#/boot/vmlinuz-}: $([ "$r" = 0 ] && echo ok || echo "FAIL (exit $r)") in $(($(date +%s) - start)) s")
	[ "$r" = 0 ] || { rc=$r; failed+=("${k#/boot/vmlinuz-}:$out/$v.log"); }
done
netlink_tests="TestNetlinkQueues TestCapturePlan"
if [ "${E2E_NETLINK_KERNEL:-1}" = 0 ]; then
	summary+=("$netlink_tests on Debian 13 backports: SKIPPED (E2E_NETLINK_KERNEL=0)")
elif [ $# -gt 0 ]; then
	summary+=("$netlink_tests on Debian 13 backports: not run (go test arguments given: $*)")
elif kd=$(backports_kernel); then
	k=${kd% *}
	echo "== e2e $netlink_tests on $(basename "$(dirname "$k")") (Debian 13 backports)"
	start=$(date +%s)
	r=0
	E2E_KERNEL="$k" E2E_MODULES="${kd#* }" go test -tags e2e -count=1 -timeout 15m -v -run "^(${netlink_tests// /|})\$" ./test/e2e/ 2>&1 | tee "$out/backports.log" || r=$?
	summary+=("$(basename "$(dirname "$k")") ($netlink_tests): $([ "$r" = 0 ] && echo ok || echo "FAIL (exit $r)") in $(($(date +%s) - start)) s")
	[ "$r" = 0 ] || { rc=$r; failed+=("$(basename "$(dirname "$k")"):$out/backports.log"); }
else
	summary+=("$netlink_tests on Debian 13 backports: FAIL (could not fetch its kernel from trixie-backports)")
	rc=1
fi
for f in "${failed[@]}"; do
	echo "== e2e failures on ${f%%:*}"
	digest "${f#*:}"
done
echo "== e2e summary"
printf '  %s\n' "${summary[@]}"
exit "$rc"
