package main

import (
	"bytes"
	"os"
	"testing"

	"cclab/internal/cli"
)

// TestFlagsDocumented: every flag ccbench -h lists is in docs/benchmark.md.
func TestFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/benchmark.md")
	if err != nil {
		t.Fatal(err)
	}
	var out, help bytes.Buffer
	run([]string{"-h"}, &out, &help)
	if missing := cli.Undocumented(help.String(), string(doc)); len(missing) > 0 {
		t.Errorf("flags missing from docs/benchmark.md: %v", missing)
	}
}
