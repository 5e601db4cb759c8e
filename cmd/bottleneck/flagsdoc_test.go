package main

import (
	"bytes"
	"os"
	"testing"

	"cclab/internal/cli"
)

// TestFlagsDocumented: every flag bottleneck -h lists is in docs/bottleneck.md.
func TestFlagsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/bottleneck.md")
	if err != nil {
		t.Fatal(err)
	}
	var out, help bytes.Buffer
	run([]string{"-h"}, &out, &help, nil)
	if missing := cli.Undocumented(help.String(), string(doc)); len(missing) > 0 {
		t.Errorf("flags missing from docs/bottleneck.md: %v", missing)
	}
}
