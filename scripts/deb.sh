#!/usr/bin/env bash
# Builds the Debian package: scripts/deb.sh [OUTDIR]   (default dist/)
# writes OUTDIR/numairqd_VERSION_ARCH.deb and prints its path.
#
# The version is the first entry of deploy/debian/changelog (add an
# entry to release), its date the build's SOURCE_DATE_EPOCH, so two
# builds of one commit give the same package. DEB_HOST_ARCH=arm64 (or
# armhf, i386, ppc64el, riscv64, s390x) cross-builds; the default is
# this machine's architecture. The binary is built from the checkout as
# it is: uncommitted changes go in, and --version then says "modified".
#
# Needs Go (the toolchain below is fetched on first use), git, gzip and
# dpkg-deb (Debian's dpkg; no debhelper, no nfpm). lintian, when
# installed, checks the result: any error fails the build.
# DEB_LINTIAN=0 skips lintian (the e2e suite, which only installs the
# package, builds it that way).
set -euo pipefail
cd "$(dirname "$0")/.."

# The toolchain scripts/test.sh builds and vets with (see there).
export GOTOOLCHAIN="${NUMAIRQD_GOTOOLCHAIN:-go1.27.3}"
out=${1:-dist}
src=deploy/debian

# "numairqd (0.1.0-1) unstable; urgency=medium" and the first
# " -- Name <mail>  Wed, 02 Dec 2026 06:45:00 +0000".
version=$(sed -n '1s/^numairqd (\([^)]*\)) .*/\1/p' "$src/changelog")
date=$(sed -n 's/^ -- .*>  \(.*\)$/\1/p' "$src/changelog" | head -n 1)
if [ -z "$version" ] || [ -z "$date" ]; then
	echo "deb.sh: $src/changelog: no version or date in its first entry" >&2
	exit 1
fi
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(date -d "$date" +%s)}

arch=${DEB_HOST_ARCH:-$(dpkg --print-architecture)}
goarm=
case $arch in
amd64 | arm64 | riscv64 | s390x) goarch=$arch ;;
armhf) goarch=arm goarm=7 ;;
i386) goarch=386 ;;
ppc64el) goarch=ppc64le ;;
*)
	echo "deb.sh: no Go port for Debian architecture $arch" >&2
	exit 1
	;;
esac

# The VCS stamp (commit, time, modified) that --version prints; a tree
# without git (an exported tarball) builds without it.
buildvcs=false
if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	buildvcs=true
	if [ -n "$(git status --porcelain)" ]; then
		echo "deb.sh: warning: the checkout has uncommitted changes; they are built in (--version says modified)" >&2
	fi
fi

echo "== man page current (go test ./internal/manpage)"
go test -count=1 -run TestPageIsCurrent ./internal/manpage

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
root=$stage/root
mkdir -p "$root"

echo "== build numairqd $version for $arch"
# -s -w: no symbol table or DWARF (Debian ships binaries stripped; the
# build info --version reads is kept). -X main.version is also
# numairqd_build_info's version (one value for both).
CGO_ENABLED=0 GOOS=linux GOARCH=$goarch GOARM=$goarm go build -trimpath -buildvcs=$buildvcs \
	-ldflags "-s -w -X main.version=$version" \
	-o "$root/usr/sbin/numairqd" ./cmd/numairqd
if [ "$arch" = "$(dpkg --print-architecture)" ]; then
	line=$("$root/usr/sbin/numairqd" --version)
	echo "$line"
	case $line in
	"numairqd $version ("*) ;;
	*)
		echo "deb.sh: --version does not say $version: is main.version still the -X target?" >&2
		exit 1
		;;
	esac
fi

# The unit as deploy/systemd has it, but for the packaged binary's path.
install -d -m0755 "$root/lib/systemd/system"
sed -e 's|^ExecStart=/usr/local/bin/numairqd |ExecStart=/usr/sbin/numairqd |' -e 's|^ExecReload=/usr/local/bin/numairqd |ExecReload=/usr/sbin/numairqd |' deploy/systemd/numairqd.service \
	>"$root/lib/systemd/system/numairqd.service"
if ! grep -q '^ExecStart=/usr/sbin/numairqd ' "$root/lib/systemd/system/numairqd.service" ||
	grep -q '/usr/local/' "$root/lib/systemd/system/numairqd.service"; then
	echo "deb.sh: deploy/systemd/numairqd.service: ExecStart= is not /usr/local/bin/numairqd ...; update this script" >&2
	exit 1
fi
install -D -m0644 configs/numairqd.yaml "$root/etc/numairqd/numairqd.yaml"
doc=$root/usr/share/doc/numairqd
install -D -m0644 "$src/copyright" "$doc/copyright"
gzip -9n <"$src/changelog" >"$doc/changelog.Debian.gz"
gzip -9n <README.md >"$doc/README.md.gz"
gzip -9n <CHANGELOG.md >"$doc/changelog.gz"
# The manual README.md points at, at the same relative paths.
for page in docs/*.md; do
	install -d -m0755 "$doc/docs"
	gzip -9n <"$page" >"$doc/$page.gz"
done
# What docs/install.md's "Scraping from another machine" copies: the
# drop-in that lets a scraper in, its Prometheus job and the alerts.
install -D -m0644 deploy/systemd/numairqd.service.d/scrape.conf.example "$doc/examples/scrape.conf"
install -D -m0644 deploy/prometheus/scrape.yml "$doc/examples/scrape.yml"
install -D -m0644 deploy/prometheus/numairqd.rules.yml "$doc/examples/numairqd.rules.yml"
install -d -m0755 "$root/usr/share/man/man8"
gzip -9n <"$src/numairqd.8" >"$root/usr/share/man/man8/numairqd.8.gz"
install -D -m0644 "$src/lintian-overrides" "$root/usr/share/lintian/overrides/numairqd"
find "$root" -type f -exec chmod 0644 {} + -o -type d -exec chmod 0755 {} +
chmod 0755 "$root/usr/sbin/numairqd"

# Installed-Size: KiB, as dpkg-gencontrol counts (each file rounded up,
# one per directory or link).
size=$(find "$root" -printf '%y %s\n' | awk '{ n += $1 == "f" ? int(($2 + 1023) / 1024) : 1 } END { print n }')
install -d -m0755 "$root/DEBIAN"
sed -e "s/@VERSION@/$version/" -e "s/@ARCH@/$arch/" -e "s/@SIZE@/$size/" "$src/control" >"$root/DEBIAN/control"
echo /etc/numairqd/numairqd.yaml >"$root/DEBIAN/conffiles"
install -m0755 "$src/postinst" "$src/prerm" "$src/postrm" "$root/DEBIAN/"
(cd "$root" && find . -path ./DEBIAN -prune -o -type f -printf '%P\0' | LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/control" "$root/DEBIAN/conffiles" "$root/DEBIAN/md5sums"
find "$root" -exec touch --no-dereference -d "@$SOURCE_DATE_EPOCH" {} +

mkdir -p "$out"
deb=$out/numairqd_${version}_$arch.deb
# --root-owner-group: root:root files without fakeroot.
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
if [ "${DEB_LINTIAN:-1}" = 0 ]; then
	echo "== lintian skipped (DEB_LINTIAN=0)" >&2
elif command -v lintian >/dev/null; then
	echo "== lintian"
	lintian --fail-on error --display-info "$deb"
else
	echo "== lintian not installed (apt-get install lintian): not checked" >&2
fi
echo "$deb"
