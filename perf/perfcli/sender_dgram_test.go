package perfcli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"strings"
	"testing"

	"cclab/internal/hostlimit"
	"cclab/perf"
)

// TestDgramJSON runs -mode datagram -cc none against an in-process
// receiver and checks the JSON has the documented fields.
func TestDgramJSON(t *testing.T) {
	srv, err := perf.NewServer(perf.ServerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	defer func() { cancel(); srv.Close(); <-done }()
	var out, errb bytes.Buffer
	if code := Sender([]string{"-c", srv.Addr().String(), "-mode", "datagram", "-cc", "none", "-rate", "2Mbit", "-t", "0.5", "-J"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	var m struct {
		Start struct {
			TestStart map[string]any `json:"test_start"`
		} `json:"start"`
		End struct {
			Sum   map[string]any `json:"sum"`
			Cclab map[string]any `json:"cclab"`
		} `json:"end"`
	}
	if err := json.Unmarshal(out.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	if m.Start.TestStart["protocol"] != "UDP" {
		t.Errorf("start.test_start.protocol %v, want UDP", m.Start.TestStart["protocol"])
	}
	for _, k := range []string{"jitter_ms", "lost_packets", "packets", "lost_percent", "bits_per_second"} {
		if _, ok := m.End.Sum[k]; !ok {
			t.Errorf("end.sum lacks %q", k)
		}
	}
	for _, k := range []string{"sent", "queue_dropped", "lost_declared", "ack_ratio", "intervals", "receiver"} {
		if _, ok := m.End.Cclab[k]; !ok {
			t.Errorf("end.cclab lacks %q", k)
		}
	}
	r, _ := m.End.Cclab["receiver"].(map[string]any)
	for _, k := range []string{"datagrams", "lost_network", "missing", "owd_ms", "jitter_ms"} {
		if _, ok := r[k]; !ok {
			t.Errorf("end.cclab.receiver lacks %q", k)
		}
	}
}

// TestDgramPort: -p sets the port in datagram mode too (it was ignored:
// the sender dialled 5301), and iperf3's -u and -b select the mode and rate.
func TestDgramPort(t *testing.T) {
	srv, err := perf.NewServer(perf.ServerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx); close(done) }()
	defer func() { cancel(); srv.Close(); <-done }()
	_, port, _ := net.SplitHostPort(srv.Addr().String())
	var out, errb bytes.Buffer
	if code := Sender([]string{"-c", "127.0.0.1", "-p", port, "-u", "-cc", "none", "-b", "2M", "-t", "0.3", "-J"}, &out, &errb); code != 0 {
		t.Fatalf("sender -c 127.0.0.1 -p %s -u: exit %d: %s", port, code, errb.String())
	}
	var doc struct {
		Start struct {
			ConnectingTo struct {
				Port int `json:"port"`
			} `json:"connecting_to"`
			TestStart struct {
				Protocol      string  `json:"protocol"`
				TargetBitrate float64 `json:"target_bitrate"`
			} `json:"test_start"`
		} `json:"start"`
	}
	if err := json.Unmarshal(out.Bytes(), &doc); err != nil {
		t.Fatal(err)
	}
	if got := fmt.Sprint(doc.Start.ConnectingTo.Port); got != port || doc.Start.TestStart.Protocol != "UDP" || doc.Start.TestStart.TargetBitrate != 2e6 {
		t.Errorf("connecting_to.port %s, protocol %s, target_bitrate %g; want %s, UDP, 2e6", got, doc.Start.TestStart.Protocol, doc.Start.TestStart.TargetBitrate, port)
	}
}

// TestWarnHost: a host-limited report gives one warning line on stderr,
// a clean or missing one none.
func TestWarnHost(t *testing.T) {
	var b strings.Builder
	warnHost(&b, nil)
	clean := &hostlimit.Report{Role: "sender"}
	clean.Judge()
	warnHost(&b, clean)
	if b.Len() != 0 {
		t.Errorf("no report or a clean one: printed %q", b.String())
	}
	r := &hostlimit.Report{Role: "sender", Generated: 2110, QueueDropped: 814, Uncontrolled: true}
	r.Judge()
	warnHost(&b, r)
	if got := b.String(); !strings.HasPrefix(got, "sender: warning: host-limited run (sender): send_queue: the sender's queue dropped 814 of 2110") || strings.Count(got, "\n") != 1 {
		t.Errorf("warning: %q", got)
	}
}
