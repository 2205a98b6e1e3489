#!/usr/bin/env bash
# Runs govulncheck (a pinned `go run` tool, not a module dependency) on
# the module: scripts/govulncheck.sh [govulncheck args]   (default ./...)
# `-C bench/report ./...` checks the bench report's own module.
# Exits non-zero when a vulnerability is reachable from our code.
#
# The database is https://vuln.go.dev when it answers within a few
# seconds. Otherwise (a host that reaches only the Go module proxy) it
# is a v1 database built from the OSV files of a pinned
# golang.org/x/vulndb snapshot, which the proxy serves like any module;
# the build (about 40 MB, 1-2 minutes) is cached under GOCACHE and
# reused. NUMAIRQD_VULNDB=offline forces the snapshot, NUMAIRQD_VULNDB=URL
# (https://... or file:///...) uses that database.
#
# The stdlib findings depend on the toolchain: run it with the one that
# builds the daemon (scripts/test.sh sets GOTOOLCHAIN).
set -euo pipefail
cd "$(dirname "$0")/.."

govulncheck=golang.org/x/vuln/cmd/govulncheck@v1.9.0
# Bump with: go list -m golang.org/x/vulndb@master (from outside the module).
vulndb_version=v0.0.0-20261105234957-e22db6528018
online=https://vuln.go.dev

[ $# -gt 0 ] || set -- ./...

# modified prints the "modified" time of a database's index/db.json on
# stdin (nothing for the zero time).
modified() { sed -n 's/.*"modified" *: *"\([^"]*\)".*/\1/p' | grep -v '^0001-' | head -n 1 || true; }

# snapshot_date is the commit time of the vulndb snapshot, from its
# pseudo-version: the OSV files carry no "modified" field (vuln.go.dev
# adds it), so the built index/db.json says 0001-01-01.
snapshot_date() {
	local t=${vulndb_version#v0.0.0-}
	t=${t%%-*}
	echo "${t:0:4}-${t:4:2}-${t:6:2}T${t:8:2}:${t:10:2}:${t:12:2}Z (golang.org/x/vulndb commit ${vulndb_version##*-})"
}

# offline_db builds the snapshot's database unless it is cached, and
# prints its directory.
offline_db() {
	local cache dir tmp scratch
	cache="$(go env GOCACHE)/numairqd-vulndb-$vulndb_version"
	if [ -s "$cache/index/db.json" ]; then
		echo "$cache"
		return
	fi
	# Outside the main module, so that go.mod and go.sum stay as they are.
	scratch=$(mktemp -d)
	trap 'rm -rf "$scratch" ${tmp:+"$tmp"}' EXIT
	trap 'exit 130' INT TERM
	dir=$(cd "$scratch" && go mod download -json "golang.org/x/vulndb@$vulndb_version" |
		sed -n 's/^[[:space:]]*"Dir": *"\(.*\)",\{0,1\}$/\1/p')
	if [ ! -d "$dir/data/osv" ]; then
		echo "govulncheck: no data/osv in golang.org/x/vulndb@$vulndb_version (dir ${dir:-unknown})" >&2
		exit 1
	fi
	echo "govulncheck: building the offline database from golang.org/x/vulndb@$vulndb_version into $cache" >&2
	# Built next to the cache and renamed, so that an interrupted build
	# never leaves a partial database behind.
	mkdir -p "$(dirname "$cache")"
	# What a killed build (SIGKILL, power loss) left behind.
	find "$(dirname "$cache")" -maxdepth 1 -name "${cache##*/}.tmp.*" -mmin +120 -exec rm -rf {} + 2>/dev/null || true
	tmp=$(mktemp -d "$cache.tmp.XXXXXX")
	(cd "$scratch" && go run "golang.org/x/vulndb/cmd/indexdb@$vulndb_version" \
		-vulns "$dir/data/osv" -out "$tmp/db") >&2
	# A concurrent run may have won the rename: its database is as good.
	mv -T "$tmp/db" "$cache" 2>/dev/null || [ -s "$cache/index/db.json" ]
	rm -rf "$scratch" "$tmp"
	trap - EXIT INT TERM
	echo "$cache"
}

mode=${NUMAIRQD_VULNDB:-}
db= date=
if [ -z "$mode" ] && index=$(curl -fsS --max-time 5 "$online/index/db.json" 2>/dev/null); then
	db=$online
	date=$(modified <<<"$index")
elif [ -n "$mode" ] && [ "$mode" != offline ]; then
	db=$mode
	case $db in file://*) date=$(modified <"${db#file://}/index/db.json") ;; esac
else
	[ -n "$mode" ] || echo "govulncheck: $online unreachable; using the golang.org/x/vulndb@$vulndb_version snapshot" >&2
	dir=$(offline_db)
	db=file://$dir
	date=$(snapshot_date)
fi
echo "govulncheck: database $db, of ${date:-unknown date}; toolchain $(go env GOVERSION)"
exec go run "$govulncheck" -db "$db" "$@"
