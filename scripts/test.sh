#!/usr/bin/env bash
# The project's test command (docs/testing.md); .ci/run runs exactly this.
# Checks formatting, vets, runs staticcheck and govulncheck (pinned
# `go run` tools, not module dependencies), runs every unit test with
# the race detector, checks deploy/ (the metrics the dashboard and the
# alerting rules name, the Kubernetes manifests in their own module,
# the container image built twice to one digest (deploy/image),
# promtool test rules, and a real Prometheus firing a shipped alert on a
# dry-run daemon, started in the background because it takes 5 minutes:
# scripts/prometheus.sh finds promtool and prometheus or takes them
# from Debian's prometheus package), checks bench/report like the main
# module (its own module: gonum/plot draws its charts), then the QEMU
# end-to-end suite (installing its Debian packages when missing; needs
# root).
# NUMAIRQD_SKIP_E2E=1 skips the QEMU part.
set -euo pipefail
cd "$(dirname "$0")/.."

# The toolchain that builds, tests and vets everything here. go.mod
# says go 1.26.8, the oldest Go that compiles the code; go1.26.8's
# standard library has vulnerabilities our code reaches (net/http,
# crypto/tls, crypto/x509, net/textproto: fixed in go1.26.9 and
# go1.26.10), which govulncheck below reports. go1.27.3 has the fixes.
# The go command downloads it from the module proxy on first use.
# NUMAIRQD_GOTOOLCHAIN overrides it (test/e2e/run.sh and bench/run.sh
# pin the same one).
export GOTOOLCHAIN="${NUMAIRQD_GOTOOLCHAIN:-go1.27.3}"
staticcheck=honnef.co/go/tools/cmd/staticcheck@v0.8.2

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi

echo "== tracked files: no built binaries"
# Guest tools and the image are built into caches and temporary
# directories; an executable in git would be unreviewable. Every tracked
# file's first four bytes are checked for ELF's magic.
if git rev-parse --git-dir >/dev/null 2>&1; then
	elves=$(git ls-files -z | xargs -0 -r sh -c 'for f; do [ -f "$f" ] && [ "$(head -c 4 "$f" | od -An -c | tr -d " ")" = "177ELF" ] && echo "$f"; done; true' sh)
	if [ -n "$elves" ]; then
		echo "ELF files tracked in git:"; echo "$elves"; exit 1
	fi
fi

# The live Prometheus check (deploy/prometheus/live_test.go) waits out
# its rule's for: 5m, so it runs in the background while the stages
# below do, and is waited for before e2e. Its test binary runs with its
# own TMPDIR, so that an early exit here kills it (its prometheus and
# numairqd die with it) and leaves nothing behind.
live_pid=
live_dir=$(mktemp -d)
stop_live() {
	if [ -n "$live_pid" ]; then
		kill "$live_pid" 2>/dev/null || true
		wait "$live_pid" 2>/dev/null || true
		echo "== prometheus: stopped early; its log so far:"
		tail -n 20 "$live_dir/log" 2>/dev/null || true
	fi
	rm -rf "$live_dir"
}
trap stop_live EXIT
echo "== prometheus: a shipped alert firing on a dry-run daemon (started in the background, about 5 minutes)"
if prometheus=$(scripts/prometheus.sh prometheus); then
	go test -c -o "$live_dir/prometheus.test" ./deploy/prometheus
	(cd deploy/prometheus && TMPDIR="$live_dir" NUMAIRQD_PROMETHEUS="$prometheus" \
		exec "$live_dir/prometheus.test" -test.run '^TestPrometheusFiresShippedRule$' -test.v -test.count=1 -test.timeout=15m) \
		>"$live_dir/log" 2>&1 &
	live_pid=$!
else
	echo "== prometheus SKIPPED: no prometheus binary (above: why)"
fi

echo "== go vet"
go vet ./...
go vet -tags e2e ./test/e2e/... ./bench/...
go vet -tags fixtures ./bench/...
echo "== staticcheck ($staticcheck)"
go run "$staticcheck" ./...
go run "$staticcheck" -tags e2e ./test/e2e/... ./bench/...
go run "$staticcheck" -tags fixtures ./bench/...
echo "== govulncheck"
scripts/govulncheck.sh ./...
echo "== go test -race"
# Fixture trees (internal/fakesys) are tens of thousands of small files:
# on tmpfs they build about five times faster than on this machine's
# disk, so the unit tests' temporary directories go to /dev/shm where it
# is writable.
unit_tmp=$(mktemp -d -p /dev/shm numairqd-test.XXXXXX 2>/dev/null || mktemp -d)
# Without NUMAIRQD_PROMETHEUS: the live check runs once, above.
unit_status=0
TMPDIR="$unit_tmp" env -u NUMAIRQD_PROMETHEUS go test -race -count=1 ./... || unit_status=$?
rm -rf "$unit_tmp"
[ "$unit_status" = 0 ] || exit "$unit_status"
echo "== deploy: the dashboard's and the rules' metrics against a dry-run daemon's /metrics"
go test -count=1 -run 'TestRulesAndDashboardNameExportedMetrics|TestConfigMapConfig' ./deploy/...
echo "== deploy/kubernetes/validate: manifests decoded strictly with k8s.io/api (its own module)"
(cd deploy/kubernetes/validate && go vet ./... && go test -count=1 ./...)
echo "== deploy/image: the container image built twice, one digest (its own module)"
(cd deploy/image && go vet ./... && go test -count=1 -v ./...)
echo "== promtool test rules (deploy/prometheus)"
if promtool=$(scripts/prometheus.sh promtool); then
	"$promtool" check rules deploy/prometheus/numairqd.rules.yml
	(cd deploy/prometheus && "$promtool" test rules rules_test.yml)
else
	echo "== promtool test rules SKIPPED: no promtool (above: why)"
fi
echo "== bench/report: RESULTS.md and the charts, gonum/plot (its own module)"
(cd bench/report && go vet ./... && go run "$staticcheck" ./... && # Without NUMAIRQD_PROMETHEUS: the live check runs once, above.
env -u NUMAIRQD_PROMETHEUS go test -race -count=1 ./...)
scripts/govulncheck.sh -C bench/report ./...
if [ -n "$live_pid" ]; then
	echo "== prometheus: waiting for the background check"
	live_status=0
	wait "$live_pid" || live_status=$?
	live_pid=
	cat "$live_dir/log"
	if [ "$live_status" != 0 ]; then
		echo "== prometheus FAILED (exit status $live_status)"
		exit 1
	fi
fi

if [ "${NUMAIRQD_SKIP_E2E:-}" = 1 ]; then
	echo "== e2e skipped (NUMAIRQD_SKIP_E2E=1)"
	exit 0
fi
echo "== e2e (QEMU)"
E2E_INSTALL=1 test/e2e/run.sh
