#!/usr/bin/env bash
# The project's test command (README "Test"); .ci/run runs exactly this.
# Checks formatting, vets, runs every unit test with the race detector,
# then the QEMU end-to-end suite (installing its Debian packages when
# missing; needs root). NUMAIRQD_SKIP_E2E=1 skips the QEMU part.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
echo "== go vet"
go vet ./...
go vet -tags e2e ./test/e2e/... ./bench/...
echo "== go test -race"
go test -race -count=1 ./...

if [ "${NUMAIRQD_SKIP_E2E:-}" = 1 ]; then
	echo "== e2e skipped (NUMAIRQD_SKIP_E2E=1)"
	exit 0
fi
echo "== e2e (QEMU)"
E2E_INSTALL=1 test/e2e/run.sh
