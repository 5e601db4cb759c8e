package report

import (
	"os"
	"strings"
	"testing"
)

// TestTransferPage plots iperf3's own -J output (the schema cclab's sender
// writes): a TCP test with two streams has throughput, cwnd and RTT panels
// with a line per stream; a UDP test only throughput; a document without
// intervals is an error.
func TestTransferPage(t *testing.T) {
	for _, tc := range []struct {
		file   string
		panels int
		want   []string
	}{
		{"tcp-p2.json", 3, []string{"stream 5", "stream 7", "congestion window", "smoothed RTT"}},
		{"udp.json", 1, []string{"throughput"}},
	} {
		f, err := os.Open("../perf/testdata/iperf3/" + tc.file)
		if err != nil {
			t.Fatal(err)
		}
		var b strings.Builder
		err = TransferPage(&b, f, tc.file)
		f.Close()
		if err != nil {
			t.Fatalf("%s: %v", tc.file, err)
		}
		if got := strings.Count(b.String(), "<svg"); got != tc.panels {
			t.Errorf("%s: %d panels, want %d", tc.file, got, tc.panels)
		}
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: page lacks %q", tc.file, w)
			}
		}
	}
	var b strings.Builder
	if err := TransferPage(&b, strings.NewReader(`{"error": "unable to connect"}`), "x"); err == nil || !strings.Contains(err.Error(), "unable to connect") {
		t.Errorf("failed transfer: got %v, want its error", err)
	}
}
