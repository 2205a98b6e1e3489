#!/usr/bin/env bash
# Regenerates bench/RESULTS.md and the charts bench/placement.png,
# bench/traffic.png and bench/balance.png from one run:
#   1. the QEMU bench (go test -tags e2e ./bench/, as root): placement,
#      softirq load under traffic, reaction and cost (CPU time, syscalls
#      and rounds per event, peak RSS) of irqbalance and numairqd, and
#      the cost of the floor (benchagent floor) under the same churn, in
#      guests of the e2e harness, written to $BENCH_WORK/raw.json;
#   2. the planner's and the rounds' Go benchmarks with -count 6
#      -benchmem, and benchstat on them (go run pkg@version: not a
#      module dependency);
#   3. bench/report, which writes RESULTS.md and the charts (a module
#      of its own, so that gonum/plot stays out of numairqd's go.mod).
#
# Usage: bench/run.sh [all|qemu|go|report]   (default all)
# BENCH_WORK (default /tmp/numairqd-bench) keeps raw.json, the Go
# benchmark output and the guests' serial logs. BENCH_REPS, BENCH_WINDOW,
# BENCH_IDLE and BENCH_CHURN change the QEMU bench's parameters.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build and measure numairqd with the toolchain scripts/test.sh pins:
# go1.26.8's standard library has known vulnerabilities (see there).
export GOTOOLCHAIN="${NUMAIRQD_GOTOOLCHAIN:-go1.27.3}"

what=${1:-all}
work=${BENCH_WORK:-/tmp/numairqd-bench}
benchstat=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
gobench='^(BenchmarkCompute.*|BenchmarkRebuild1024CPUs32Nodes|BenchmarkRead|BenchmarkAffinities|BenchmarkRefresh|BenchmarkRound.*)$'
gopkgs=(./pkg/policy ./pkg/topology ./pkg/inventory ./pkg/state)
mkdir -p "$work"
work=$(cd "$work" && pwd) # the report runs in bench/report
start=$(date +%s)
command="bench/run.sh${1:+ $1}"

case $what in all | qemu | go | report) ;; *)
	echo "usage: bench/run.sh [all|qemu|go|report]" >&2
	exit 2
	;;
esac

if [ "$what" = all ] || [ "$what" = qemu ]; then
	missing=()
	[ "$(id -u)" = 0 ] || missing+=("root (the guests' NICs are tap devices)")
	for c in qemu-system-x86_64 irqbalance ethtool ip xz; do
		command -v "$c" >/dev/null || missing+=("$c")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "bench: missing: ${missing[*]}" >&2
		echo "bench: as root: apt-get install -y qemu-system-x86 linux-image-amd64 busybox-static irqbalance ethtool xz-utils iproute2 cpio" >&2
		exit 2
	fi
	rm -f "$work/raw.json"
	# The kernel's crypto self-tests add boot time and once soft-locked a
	# TCG guest at boot: skip them.
	export E2E_KERNEL_ARGS="${E2E_KERNEL_ARGS:-cryptomgr.notests}"
	BENCH_OUT=$work BENCH_COMMAND="$command" E2E_LOG_DIR=$work/logs \
		go test -tags e2e -count=1 -timeout 110m -v -run '^TestBench$' ./bench/ 2>&1 | tee "$work/qemu.log"
	echo "bench: QEMU part took $(($(date +%s) - start)) s" >&2
fi

if [ "$what" = all ] || [ "$what" = go ]; then
	sums=$(sha256sum go.mod go.sum)
	# BenchmarkRead's fixture takes ~80 s to build on /tmp; tmpfs is fast.
	# The pattern takes the planner's benchmarks by prefix, so a renamed
	# BenchmarkCompute... or a new BenchmarkRound... (pkg/state,
	# pkg/inventory) is included; a benchmark that fails is listed in
	# the report and does not stop the others.
	if ! TMPDIR=/dev/shm go test -run '^$' -bench "$gobench" -count 6 -benchmem "${gopkgs[@]}" | tee "$work/gobench.txt"; then
		echo "bench: some Go benchmarks failed (see $work/gobench.txt); the report lists them" >&2
	fi
	if ! go run "$benchstat" "$work/gobench.txt" >"$work/benchstat.txt" 2>"$work/benchstat.err"; then
		echo "bench: benchstat unavailable ($(head -c 300 "$work/benchstat.err")); the table in RESULTS.md does not need it" >&2
		: >"$work/benchstat.txt"
	fi
	if [ "$sums" != "$(sha256sum go.mod go.sum)" ]; then
		echo "bench: go.mod or go.sum changed: benchstat must not become a dependency" >&2
		exit 1
	fi
fi

if [ ! -s "$work/raw.json" ]; then
	echo "bench: no $work/raw.json: run bench/run.sh qemu first" >&2
	exit 1
fi
gob=()
[ -s "$work/gobench.txt" ] && gob=(-gobench "$work/gobench.txt" -benchstat "$work/benchstat.txt")
wall=$(($(date +%s) - start))
wallflag=()
[ "$what" = all ] && wallflag=(-wall "$((wall / 60))m$(printf %02d $((wall % 60)))s")
go run -C bench/report . -raw "$work/raw.json" "${gob[@]}" "${wallflag[@]}" \
	-out "$PWD/bench/RESULTS.md" -png "$PWD/bench/placement.png" -traffic-png "$PWD/bench/traffic.png"
echo "bench: wrote bench/RESULTS.md, bench/placement.png, bench/traffic.png and bench/balance.png in ${wall} s" >&2
