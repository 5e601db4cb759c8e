#!/usr/bin/env bash
# The project's test command (README "Run the tests"): formatting, vet,
# staticcheck, the sans-I/O architecture check, all tests (with the race
# detector on the core and driver packages), and a bounded fuzz run of every
# decoder. Tests run with -json through scripts/testfilter, which prints what
# plain go test prints and then every skipped test with its reason; the
# script ends with the list of all skips, so none is silent. FUZZTIME bounds each fuzz target by execution count (default
# 3000x): a count, unlike a wall-clock bound, does not depend on how loaded
# the machine is, and avoids Go's fuzz-deadline race ("context deadline
# exceeded") that a 5 s bound hit on a loaded 2-core machine.
set -euo pipefail
cd "$(dirname "$0")/.."
export GOFLAGS="${GOFLAGS:-} -buildvcs=false"
FUZZTIME="${FUZZTIME:-3000x}"
STATICCHECK_VERSION=v0.8.2

echo "== gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.git/*'))
if [ -n "$unformatted" ]; then
  echo "gofmt would reformat:"; echo "$unformatted"; exit 1
fi

echo "== tracked files (none over 2 MB: binaries and data dumps stay out of the history)"
big=$(git ls-files -z 2>/dev/null | xargs -0 -r du -k 2>/dev/null | awk '$1 > 2048 {print $2 " (" $1 " KiB)"}')
if [ -n "$big" ]; then
  echo "tracked files over 2 MB:"; echo "$big"; exit 1
fi

echo "== go vet"
go vet ./...

echo "== staticcheck $STATICCHECK_VERSION"
go run "honnef.co/go/tools/cmd/staticcheck@$STATICCHECK_VERSION" ./...

# Core (sans-I/O) and driver packages run under the race detector; the rest
# (tools, harness) without it, to keep the suite within a few minutes.
race_re='^cclab/(transport|ccalgo|link|qdisc|traffic|sim|netio|relay|perf|ippkt|tunshell)(/|$)'
race_pkgs=$(go list ./... | grep -E "$race_re" || true)
other_pkgs=$(go list ./... | grep -vE "$race_re" || true)

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/testfilter" ./scripts/testfilter
skips="$tmp/skips"
: >"$skips"

echo "== go test -race (core and drivers)"
# shellcheck disable=SC2086
[ -z "$race_pkgs" ] || go test -json -race -timeout 15m $race_pkgs | "$tmp/testfilter" -skips "$skips"
echo "== go test (tools and harness)"
# shellcheck disable=SC2086
[ -z "$other_pkgs" ] || go test -json -timeout 15m $other_pkgs | "$tmp/testfilter" -skips "$skips"

echo "== adversarial suite (perf/adversary_test.go: spoofed sources through raw sockets, needs root; docs/security.md)"
go test -json -tags adversary -run Adversary -count=1 -timeout 10m ./perf/ | "$tmp/testfilter" -skips "$skips"

echo "== fuzz (each target for $FUZZTIME)"
grep -rlE '^func Fuzz[A-Za-z0-9_]+\(' --include='*_test.go' . | sort | while read -r f; do
  dir=$(dirname "$f")
  for target in $(grep -oE '^func Fuzz[A-Za-z0-9_]+' "$f" | sed 's/^func //'); do
    echo "-- $dir $target"
    # Show the last lines on success, everything on failure (a crasher's
    # input is then saved under $dir/testdata/fuzz/$target).
    if ! out=$(go test -run '^$' -fuzz "^${target}\$" -fuzztime "$FUZZTIME" "$dir" 2>&1); then
      echo "$out"; exit 1
    fi
    echo "$out" | tail -n 3
  done
done
echo "== skipped tests: $(wc -l <"$skips")"
cat "$skips"
echo "== all checks passed"
