package simrun

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"cclab/internal/qlog"
	"cclab/plan"
	"cclab/transport"
)

// largestSegment returns the largest and the first data segment (stream
// bytes) a sender qlog records sent.
func largestSegment(t *testing.T, file string) (largest, first int) {
	t.Helper()
	b, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	for _, rec := range bytes.Split(b, []byte{qlog.RecordSeparator}) {
		var r struct {
			Name string `json:"name"`
			Data struct {
				Raw struct {
					Length int `json:"length"`
				} `json:"raw"`
			} `json:"data"`
		}
		if json.Unmarshal(rec, &r) != nil || r.Name != "transport:packet_sent" {
			continue
		}
		if first == 0 {
			first = r.Data.Raw.Length
		}
		largest = max(largest, r.Data.Raw.Length)
	}
	return largest, first
}

// TestSimRunPMTUD: a flow with pmtud discovers the datagram size up to
// the topology's MTU less the IPv4 and UDP headers (plan.PLPMTUMax), as a
// live sender does up to its route's, starting at the handshake's 1200
// bytes; without pmtud it keeps its datagram size throughout.
func TestSimRunPMTUD(t *testing.T) {
	for _, tc := range []struct {
		name, mtu, flow string
		want            int // largest datagram sent
	}{
		{"off", "", "{cc: reno, traffic: \"greedy:bytes=300000\"}", transport.DefaultMaxDatagram},
		{"ethernet", "", "{cc: reno, pmtud: true, traffic: \"greedy:bytes=300000\"}", 1500 - 28},
		{"mtu 1400", "  mtu: 1400B\n", "{cc: reno, recovery: sack, pmtud: true, traffic: \"greedy:bytes=300000\"}", 1400 - 28},
		{"mtu below the datagram", "  mtu: 1200B\n", "{cc: reno, pmtud: true, traffic: \"greedy:bytes=300000\"}", transport.DefaultMaxDatagram},
	} {
		t.Run(tc.name, func(t *testing.T) {
			src := "name: pmtud\nduration: 5s\nuntil_done: true\ntopology:\n  kind: dumbbell\n" + tc.mtu +
				"  bottleneck: {rate: 10Mbit, delay: 10ms, queue: droptail:100p}\nflows: [" + tc.flow + "]\n"
			p, err := plan.New(parseScenario(t, src).Points[0].Scenario, 1)
			if err != nil {
				t.Fatal(err)
			}
			dir := t.TempDir()
			s, err := Build(p, Options{QlogDir: dir, NoSeries: true})
			if err != nil {
				t.Fatal(err)
			}
			res, err := s.Run(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			if got := res.Metrics.Flows[0].Values["total_delivered"]; got != 300000 {
				t.Errorf("delivered %v bytes, want 300000", got)
			}
			largest, first := largestSegment(t, filepath.Join(dir, p.Flows[0].Name+".qlog"))
			if want := transport.SegmentSize(tc.want); largest != want {
				t.Errorf("largest segment %d bytes, want %d (datagram %d)", largest, want, tc.want)
			}
			if want := transport.SegmentSize(transport.DefaultMaxDatagram); first != want {
				t.Errorf("first segment %d bytes, want %d (the handshake's size)", first, want)
			}
		})
	}
}
