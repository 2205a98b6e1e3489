#!/usr/bin/env bash
# Regenerates bench/RESULTS.md and the charts bench/placement.png,
# bench/traffic.png and bench/balance.png from one run:
#   1. the QEMU bench (go test -tags e2e ./bench/, as root): placement,
#      softirq load under traffic, transmit completions against XPS,
#      reaction and cost (CPU time, syscalls
#      and rounds per event, peak RSS) of irqbalance and numairqd, and
#      the cost of the floor (benchagent floor) under the same churn, in
#      guests of the e2e harness, written to $BENCH_WORK/raw.json
#      (irqbalance: the 1.9.2 of part 3, packed into the guests);
#   2. the planner's and the rounds' Go benchmarks with -count 6
#      -benchmem, and benchstat on them (go run pkg@version: not a
#      module dependency);
#   with BENCH_BASELINE=REV, numairqd built at REV beside the working
#   tree's in both: an extra daemon boot (daemon/numairqd@REV) before
#   numairqd's, and the Go benchmarks of both trees interleaved, then
#   benchstat REV against the working tree;
#   3. placement on fleet shapes (go test -tags fixtures ./bench/, as
#      root): fakesys fixture trees, each placed by irqbalance 1.9.2
#      (Debian's package, unpacked into BENCH_CACHE, never installed;
#      run --oneshot as nobody in a private mount namespace over a copy
#      of the tree) and by `numairqd plan`, written to
#      $BENCH_WORK/fixtures.json;
#   4. bench/report, which writes RESULTS.md and the charts (a module
#      of its own, so that gonum/plot stays out of numairqd's go.mod).
#
# Usage: bench/run.sh [all|qemu|go|fixtures|report]   (default all)
# BENCH_WORK (default /tmp/numairqd-bench) keeps raw.json, the Go
# benchmark output, fixtures.json and the guests' serial logs.
# BENCH_REPS, BENCH_WINDOW, BENCH_IDLE and BENCH_CHURN change the QEMU
# bench's parameters, BENCH_GO_ROUNDS (6) the runs of each Go
# benchmark, BENCH_SHAPES (comma-separated, or "all") the fleet shapes
# of the fixture part, BENCH_CACHE (default /var/cache/numairqd-bench)
# where irqbalance's package is unpacked, BENCH_IRQBALANCE another
# irqbalance binary for it. Without raw.json in BENCH_WORK, a fixtures
# or report run writes $BENCH_WORK/RESULTS.md (the fixture part alone)
# and leaves bench/RESULTS.md as it is.
set -euo pipefail
cd "$(dirname "$0")/.."

# Build and measure numairqd with the toolchain scripts/test.sh pins:
# go1.26.8's standard library has known vulnerabilities (see there).
export GOTOOLCHAIN="${NUMAIRQD_GOTOOLCHAIN:-go1.27.3}"

what=${1:-all}
work=${BENCH_WORK:-/tmp/numairqd-bench}
benchstat=golang.org/x/perf/cmd/benchstat@v0.0.0-20260908200009-22c9c6c9d4da
gobench='^(BenchmarkCompute.*|BenchmarkRebuild1024CPUs32Nodes|BenchmarkRead|BenchmarkAffinities|BenchmarkRefresh|BenchmarkRound.*)$'
gopkgs=(./pkg/policy ./pkg/topology ./pkg/inventory ./pkg/state ./pkg/machine)
rounds=${BENCH_GO_ROUNDS:-6}
mkdir -p "$work"
work=$(cd "$work" && pwd) # the report runs in bench/report
start=$(date +%s)
command="${BENCH_BASELINE:+BENCH_BASELINE=$BENCH_BASELINE }bench/run.sh${1:+ $1}"

case $what in all | qemu | go | fixtures | report) ;; *)
	echo "usage: bench/run.sh [all|qemu|go|fixtures|report]" >&2
	exit 2
	;;
esac

# irqbalancebin prints the path of the irqbalance 1.9.2 both parts run
# (in the guests, and on fixture trees): BENCH_IRQBALANCE, or the binary
# of Debian's package, fetched with apt-get download and unpacked with
# dpkg-deb -x into BENCH_CACHE the first time. The package is never installed: that
# would start irqbalance on this host.
irqbalancebin() {
	local cache deb bin
	if [ -n "${BENCH_IRQBALANCE:-}" ]; then
		echo "$BENCH_IRQBALANCE"
		return
	fi
	cache=${BENCH_CACHE:-/var/cache/numairqd-bench}
	bin=$cache/irqbalance/usr/sbin/irqbalance
	if [ ! -x "$bin" ]; then
		mkdir -p "$cache"
		(cd "$cache" && apt-get download irqbalance >&2)
		deb=$(ls -t "$cache"/irqbalance_*.deb | head -n 1)
		case $(dpkg-deb -f "$deb" Version) in 1.9.2-*) ;; *)
			echo "bench: $deb is irqbalance $(dpkg-deb -f "$deb" Version), not 1.9.2 (Debian 12's); set BENCH_IRQBALANCE to a 1.9.2 binary" >&2
			return 1
			;;
		esac
		rm -rf "$cache/irqbalance"
		dpkg-deb -x "$deb" "$cache/irqbalance"
		chmod -R a+rX "$cache"
	fi
	if ldd "$bin" | grep -q 'not found'; then
		echo "bench: irqbalance's shared libraries are missing: $(ldd "$bin" | grep 'not found' | tr -s '\t\n' '  ')" >&2
		echo "bench: as root: apt-get install -y libglib2.0-0 libnuma1 libcap-ng0 libsystemd0   # the libraries only, not irqbalance" >&2
		return 1
	fi
	echo "$bin"
}

if [ "$what" = all ] || [ "$what" = qemu ]; then
	missing=()
	[ "$(id -u)" = 0 ] || missing+=("root (the guests' NICs are tap devices)")
	for c in qemu-system-x86_64 ethtool ip xz apt-get dpkg-deb; do
		command -v "$c" >/dev/null || missing+=("$c")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "bench: missing: ${missing[*]}" >&2
		echo "bench: as root: apt-get install -y qemu-system-x86 linux-image-amd64 busybox-static ethtool xz-utils iproute2 cpio" >&2
		exit 2
	fi
	irqbalance=$(irqbalancebin)
	rm -f "$work/raw.json"
	# The kernel's crypto self-tests add boot time and once soft-locked a
	# TCG guest at boot: skip them.
	export E2E_KERNEL_ARGS="${E2E_KERNEL_ARGS:-cryptomgr.notests}"
	BENCH_OUT=$work BENCH_IRQBALANCE=$irqbalance BENCH_COMMAND="$command" E2E_LOG_DIR=$work/logs \
		go test -tags e2e -count=1 -timeout 110m -v -run '^TestBench$' ./bench/ 2>&1 | tee "$work/qemu.log"
	echo "bench: QEMU part took $(($(date +%s) - start)) s" >&2
fi

# benchpkgs DIR prints the packages of gopkgs that have tests in the
# tree DIR (BenchmarkRound* moved from pkg/state to pkg/machine).
benchpkgs() {
	local p
	for p in "${gopkgs[@]}"; do
		if compgen -G "$1/$p/*_test.go" >/dev/null; then echo "$p"; fi
	done
}

# gocompare REV runs the Go benchmarks at REV, in a temporary worktree,
# and in the working tree, interleaved so that both see the same host
# load: $rounds rounds of -count 1, each side's test binaries built
# beforehand, the side that goes first alternating. It writes
# gobench.txt (the working tree's) and gobench-REV.txt, and sets
# statargs to compare them by benchmark name, whatever package holds it.
gocompare() {
	local rev tmp side p out r
	rev=$(git rev-parse --short "$1^{commit}")
	tmp=$(mktemp -d)
	# shellcheck disable=SC2064 # expand $tmp now
	trap "git worktree remove --force '$tmp/src' >/dev/null 2>&1; rm -rf '$tmp'" EXIT
	git worktree add --detach "$tmp/src" "$rev" >/dev/null
	declare -A tree=([old]="$tmp/src" [new]="$PWD")
	for side in old new; do
		mkdir -p "$tmp/$side"
		benchpkgs "${tree[$side]}" >"$tmp/$side/pkgs"
		while read -r p; do
			(cd "${tree[$side]}" && go test -c -o "$tmp/$side/${p//\//_}.test" "$p")
		done <"$tmp/$side/pkgs"
	done
	: >"$work/gobench.txt"
	: >"$work/gobench-$rev.txt"
	for ((r = 1; r <= rounds; r++)); do
		for side in $([ $((r % 2)) = 1 ] && echo old new || echo new old); do
			out=$work/gobench.txt
			[ "$side" = old ] && out=$work/gobench-$rev.txt
			echo "bench: Go benchmarks, round $r of $rounds: $([ "$side" = old ] && echo "$rev" || echo "working tree")" >&2
			while read -r p; do
				(cd "${tree[$side]}/$p" && TMPDIR=/dev/shm "$tmp/$side/${p//\//_}.test" -test.run '^$' \
					-test.bench "$gobench" -test.count 1 -test.benchmem) >>"$out" 2>&1 ||
					printf 'FAIL\t%s\n' "$p" >>"$out"
			done <"$tmp/$side/pkgs"
		done
	done
	statargs=(-ignore pkg "$rev=$work/gobench-$rev.txt" "new=$work/gobench.txt")
}

if [ "$what" = all ] || [ "$what" = go ]; then
	sums=$(sha256sum go.mod go.sum)
	# BenchmarkRead's fixture takes ~80 s to build on /tmp; tmpfs is fast.
	# The pattern takes the planner's benchmarks by prefix, so a renamed
	# BenchmarkCompute... or a new BenchmarkRound... (pkg/machine,
	# pkg/inventory) is included; a benchmark that fails is listed in
	# the report and does not stop the others.
	rm -f "$work"/gobench-*.txt
	if [ -n "${BENCH_BASELINE:-}" ]; then
		gocompare "$BENCH_BASELINE"
	else
		mapfile -t pkgs < <(benchpkgs .)
		if ! TMPDIR=/dev/shm go test -run '^$' -bench "$gobench" -count "$rounds" -benchmem "${pkgs[@]}" | tee "$work/gobench.txt"; then
			echo "bench: some Go benchmarks failed (see $work/gobench.txt); the report lists them" >&2
		fi
		statargs=("$work/gobench.txt")
	fi
	if go run "$benchstat" "${statargs[@]}" >"$work/benchstat.txt" 2>"$work/benchstat.err"; then
		[ -n "${BENCH_BASELINE:-}" ] && cat "$work/benchstat.txt"
	else
		echo "bench: benchstat unavailable ($(head -c 300 "$work/benchstat.err")); the table in RESULTS.md does not need it" >&2
		: >"$work/benchstat.txt"
	fi
	if [ "$sums" != "$(sha256sum go.mod go.sum)" ]; then
		echo "bench: go.mod or go.sum changed: benchstat must not become a dependency" >&2
		exit 1
	fi
fi


if [ "$what" = all ] || [ "$what" = fixtures ]; then
	missing=()
	[ "$(id -u)" = 0 ] || missing+=("root (irqbalance runs in a mount namespace of its own)")
	for c in unshare setpriv apt-get dpkg-deb cp cmp; do
		command -v "$c" >/dev/null || missing+=("$c")
	done
	if [ ${#missing[@]} -gt 0 ]; then
		echo "bench: missing: ${missing[*]}" >&2
		exit 2
	fi
	irqbalance=$(irqbalancebin)
	rm -f "$work/fixtures.json"
	fstart=$(date +%s)
	# The scale host's trees are about 50,000 files each: tmpfs is fast.
	if ! TMPDIR=/dev/shm BENCH_OUT=$work BENCH_IRQBALANCE=$irqbalance BENCH_COMMAND="$command" \
		go test -tags fixtures -count=1 -timeout 60m -v -run '^TestFixtures$' ./bench/ 2>&1 | tee "$work/fixtures.log"; then
		echo "bench: the fixture part failed (see $work/fixtures.log); the report shows what it recorded" >&2
	fi
	echo "bench: fixture part took $(($(date +%s) - fstart)) s" >&2
fi

fx=()
[ -s "$work/fixtures.json" ] && fx=(-fixtures "$work/fixtures.json")
wall=$(($(date +%s) - start))
wallflag=()
[ "$what" = all ] && wallflag=(-wall "$((wall / 60))m$(printf %02d $((wall % 60)))s")
if [ ! -s "$work/raw.json" ]; then
	if [ ${#fx[@]} -gt 0 ] && { [ "$what" = fixtures ] || [ "$what" = report ]; }; then
		# No QEMU part to merge with: the fixture part alone, beside
		# its data, so that bench/RESULTS.md keeps the last full run.
		go run -C bench/report . "${fx[@]}" -out "$work/RESULTS.md"
		echo "bench: no $work/raw.json (QEMU part): wrote the fixture part alone to $work/RESULTS.md; bench/RESULTS.md unchanged" >&2
		exit 0
	fi
	echo "bench: no $work/raw.json: run bench/run.sh qemu first" >&2
	exit 1
fi
gob=()
if [ -s "$work/gobench.txt" ]; then
	gob=(-gobench "$work/gobench.txt" -benchstat "$work/benchstat.txt")
	for f in "$work"/gobench-*.txt; do # gocompare's baseline
		[ -e "$f" ] && gob+=(-gobench-baseline "$(basename "$f" .txt | cut -d- -f2-)")
	done
fi
go run -C bench/report . -raw "$work/raw.json" "${fx[@]}" "${gob[@]}" "${wallflag[@]}" \
	-out "$PWD/bench/RESULTS.md" -png "$PWD/bench/placement.png" -traffic-png "$PWD/bench/traffic.png"
echo "bench: wrote bench/RESULTS.md, bench/placement.png, bench/traffic.png and bench/balance.png in ${wall} s" >&2
