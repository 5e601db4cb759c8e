#!/bin/sh
# ldflags.sh prints the -ldflags that stamp the commit into a cclab build
# (internal/buildinfo), so that builds without the go command's VCS stamp
# (GOFLAGS=-buildvcs=false, as scripts/test.sh sets; go run) still name it
# in -version, reports and stored runs:
#
#   go build -ldflags "$(scripts/ldflags.sh)" -o cclab ./cmd/cclab
#   go run -ldflags "$(scripts/ldflags.sh)" ./cmd/cclab run loss-resilience -quick
#
# Outside a git checkout it prints nothing (the build then says the commit
# is unknown).
cd "$(dirname "$0")/.." || exit 1
commit=$(git rev-parse HEAD 2>/dev/null) || exit 0
time=$(TZ=UTC git show -s --date=format-local:%Y-%m-%dT%H:%M:%SZ --format=%cd HEAD)
modified=false
[ -n "$(git status --porcelain 2>/dev/null)" ] && modified=true
pkg=cclab/internal/buildinfo
echo "-X $pkg.stampCommit=$commit -X $pkg.stampTime=$time -X $pkg.stampModified=$modified"
