package netio

import (
	"testing"

	"cclab/ecn"
)

// TestParseTOSMalformed: malformed control messages yield Not-ECT, never a
// panic or an out-of-range read.
func TestParseTOSMalformed(t *testing.T) {
	for _, oob := range [][]byte{nil, {1}, make([]byte, 16), {255, 255, 255, 255, 255, 255, 255, 255, 0, 0, 0, 0, 1, 0, 0, 0}} {
		if got := parseTOS(oob); got != ecn.NotECT {
			t.Errorf("parseTOS(%v) = %v, want Not-ECT", oob, got)
		}
	}
}
