package main

import (
	"bytes"
	"context"
	"encoding/json"
	"testing"

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
	if code := run([]string{"-c", srv.Addr().String(), "-mode", "datagram", "-cc", "none", "-rate", "2Mbit", "-t", "0.5", "-J"}, &out, &errb); code != 0 {
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
