#!/usr/bin/env bash
# The project's test command (README "Test"); .ci/run runs exactly this.
# Checks formatting, vets, and runs every unit test with the race detector.
set -euo pipefail
cd "$(dirname "$0")/.."

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go'))
if [ -n "$unformatted" ]; then
	echo "gofmt would change:"; echo "$unformatted"; exit 1
fi
echo "== go vet"
go vet ./...
echo "== go test -race"
go test -race -count=1 ./...
