#!/usr/bin/env bash
# Regenerates the documentation's generated outputs (internal/docgen): the
# blocks between "<!-- begin generated NAME: ... -->" and "<!-- end generated
# NAME -->" in docs/*.md and data files such as docs/traces/steps.trace. Each
# is produced by a test that otherwise fails while the documentation differs,
# so a change of behaviour shows up in the tests and then, after this script,
# in the documentation's diff for review. Runs the tests of every package
# whose tests use internal/docgen, one package at a time (several write the
# same files), on amd64 (docgen.Arch).
set -euo pipefail
cd "$(dirname "$0")/.."
pkgs=$(go list -f '{{.ImportPath}} {{join .TestImports " "}} {{join .XTestImports " "}}' ./... |
  awk '/cclab\/internal\/docgen/ && $1 != "cclab/internal/docgen" {print $1}')
pkgs="cclab/internal/docgen $pkgs"
echo "== regenerating documented outputs: $pkgs"
# shellcheck disable=SC2086
CCLAB_UPDATE_DOCS=1 go test -count=1 -p 1 $pkgs
git --no-pager diff --stat -- docs README.md 2>/dev/null || true
