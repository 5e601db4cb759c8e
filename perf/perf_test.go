package perf

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// testBytes is the transfer size of the end-to-end tests (kept small: the
// machine is shared).
const testBytes = 16 << 20

// startServer runs a receiver on a loopback port until the test ends.
func startServer(t testing.TB, cfg ServerConfig) (*Server, *[]FlowSummary) {
	t.Helper()
	cfg.Listen = "127.0.0.1:0"
	var flows []FlowSummary
	var srv *Server
	cfg.OnFlow = func(s FlowSummary) {
		srv.mu.Lock()
		flows = append(flows, s)
		srv.mu.Unlock()
	}
	srv, err := NewServer(cfg)
	if err != nil {
		t.Fatalf("NewServer: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { srv.Serve(ctx); close(done) }()
	t.Cleanup(func() {
		cancel()
		srv.Close()
		<-done
	})
	return srv, &flows
}

// waitFlows waits (up to 10 s) for n flow summaries and returns them.
func waitFlows(t *testing.T, srv *Server, flows *[]FlowSummary, n int) []FlowSummary {
	t.Helper()
	for i := 0; i < 1000; i++ {
		srv.mu.Lock()
		got := append([]FlowSummary(nil), (*flows)...)
		srv.mu.Unlock()
		if len(got) >= n {
			return got
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("receiver reported fewer than %d flows within 10 s (a connection did not close cleanly)", n)
	return nil
}

func TestForwardTransferVerified(t *testing.T) {
	srv, flows := startServer(t, ServerConfig{})
	for _, tc := range []struct{ cc, recovery string }{{"reno", "newreno"}, {"reno", "reno"}} {
		t.Run(tc.cc+"/"+tc.recovery, func(t *testing.T) {
			res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: testBytes,
				CC: tc.cc, Recovery: tc.recovery, Interval: 100 * time.Millisecond})
			if err != nil {
				t.Fatalf("Run: %v", err)
			}
			e := res.End
			if !e.Verified {
				t.Errorf("verified: got false, want true (sender %s, receiver %s)", e.SenderDigest, e.ReceiverDigest)
			}
			if e.Bytes != testBytes {
				t.Errorf("bytes: got %d, want %d", e.Bytes, testBytes)
			}
			if e.CC != tc.cc || e.Recovery != tc.recovery {
				t.Errorf("cc/recovery: got %s/%s, want %s/%s", e.CC, e.Recovery, tc.cc, tc.recovery)
			}
			if e.Seconds <= 0 || e.ThroughputBps <= 0 {
				t.Errorf("seconds %v throughput %v: want both > 0", e.Seconds, e.ThroughputBps)
			}
			if e.MinRTTms <= 0 || e.MeanSRTTms < e.MinRTTms*0.5 {
				t.Errorf("min_rtt_ms %v mean_srtt_ms %v: want min > 0 and mean not far below min", e.MinRTTms, e.MeanSRTTms)
			}
			var sum int64
			for _, iv := range res.Intervals {
				sum += iv.Bytes
			}
			if sum > e.Bytes {
				t.Errorf("interval bytes sum %d exceeds the total %d", sum, e.Bytes)
			}
		})
	}
	// Both flows closed cleanly at the receiver too, with the same digests.
	for _, f := range waitFlows(t, srv, flows, 2) {
		if f.Error != "" || f.Bytes != testBytes {
			t.Errorf("receiver summary %s: error %q bytes %d, want no error and %d", f.ConnID, f.Error, f.Bytes, testBytes)
		}
	}
}

// TestClientLogf: a client with Logf reports its connection and its
// verified end through it.
func TestClientLogf(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{})
	var lines []string
	res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: 64 << 10,
		Logf: func(f string, a ...any) { lines = append(lines, fmt.Sprintf(f, a...)) }})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	id := res.Start.ConnID
	want := []string{"connected to " + srv.Addr().String() + ": connection " + id,
		"connection " + id + " done: 65536 bytes verified"}
	if len(lines) != len(want) {
		t.Fatalf("progress lines: got %q, want %d lines starting %q", lines, len(want), want)
	}
	for i := range want {
		if !strings.HasPrefix(lines[i], want[i]) {
			t.Errorf("progress line %d: got %q, want it to start %q", i, lines[i], want[i])
		}
	}
}

func TestJSONHasFields(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{})
	res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: 1 << 20})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	b, err := json.Marshal(res)
	if err != nil {
		t.Fatal(err)
	}
	var top map[string]json.RawMessage
	if err := json.Unmarshal(b, &top); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"start", "intervals", "end"} {
		if _, ok := top[k]; !ok {
			t.Errorf("JSON lacks %q", k)
		}
	}
	var end map[string]any
	json.Unmarshal(top["end"], &end)
	for _, k := range []string{"cc", "recovery", "bytes", "seconds", "throughput_bps", "retransmits", "rtos",
		"min_rtt_ms", "mean_srtt_ms", "verified"} {
		if _, ok := end[k]; !ok {
			t.Errorf("JSON end lacks %q", k)
		}
	}
	if end["verified"] != true {
		t.Errorf("end.verified: got %v, want true", end["verified"])
	}
}

func TestReverseNeedsAllowReverse(t *testing.T) {
	for _, allow := range []bool{false, true} {
		srv, flows := startServer(t, ServerConfig{AllowReverse: allow})
		res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: testBytes / 4, Reverse: true})
		if !allow {
			if err == nil || !strings.Contains(err.Error(), "allow-reverse") {
				t.Errorf("reverse without -allow-reverse: got error %v, want one naming -allow-reverse", err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("reverse with -allow-reverse: %v", err)
		}
		if !res.End.Verified || res.End.Bytes != testBytes/4 || !res.End.Reverse {
			t.Errorf("reverse end: got verified=%v bytes=%d reverse=%v, want true %d true",
				res.End.Verified, res.End.Bytes, res.End.Reverse, testBytes/4)
		}
		_ = flows
	}
}

func TestUnreachablePeer(t *testing.T) {
	// A port nobody listens on: bind one, then close it.
	pc, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := pc.LocalAddr().String()
	pc.Close()
	_, err = Run(context.Background(), ClientConfig{Addr: addr, Bytes: 1 << 20, Timeout: 2 * time.Second})
	if err == nil {
		t.Fatal("Run to a closed port: got nil error, want one")
	}
	if msg := err.Error(); !strings.Contains(msg, "refused") && !strings.Contains(msg, "no answer") {
		t.Errorf("error %q: want it to say the receiver refused or did not answer", msg)
	}
}

func TestBadNamesListRegistered(t *testing.T) {
	for _, tc := range []struct {
		cfg  ClientConfig
		want []string
	}{
		{ClientConfig{Addr: "x", CC: "nosuchcc"}, []string{"nosuchcc", "reno"}},
		{ClientConfig{Addr: "x", Recovery: "nosuch"}, []string{"nosuch", "newreno"}},
		{ClientConfig{Addr: ""}, []string{"-c"}},
		{ClientConfig{Addr: "x", Size: 1 << 20}, []string{"-size"}},
	} {
		err := tc.cfg.Validate()
		if err == nil {
			t.Errorf("Validate(%+v): got nil, want an error", tc.cfg)
			continue
		}
		for _, w := range tc.want {
			if !strings.Contains(err.Error(), w) {
				t.Errorf("Validate error %q: want it to contain %q", err, w)
			}
		}
	}
}

// qlogNames reads a qlog JSON-SEQ file and counts its event names.
func qlogNames(t *testing.T, name string) map[string]int {
	t.Helper()
	data, err := os.ReadFile(name)
	if err != nil {
		t.Fatalf("qlog file: %v", err)
	}
	recs := bytes.Split(data, []byte{0x1e})
	names := map[string]int{}
	for _, r := range recs[1:] {
		var m map[string]any
		if err := json.Unmarshal(r, &m); err != nil {
			t.Fatalf("qlog record not JSON: %v: %q", err, r)
		}
		if n, ok := m["name"].(string); ok {
			names[n]++
		}
	}
	return names
}

func TestQlogFiles(t *testing.T) {
	sdir, cdir := t.TempDir(), t.TempDir()
	srv, flows := startServer(t, ServerConfig{QlogDir: sdir})
	res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Bytes: 1 << 20, QlogDir: cdir})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	waitFlows(t, srv, flows, 1)
	for _, tc := range []struct {
		file string
		want []string
	}{
		{filepath.Join(cdir, res.Start.ConnID+"-client.sqlog"), []string{"transport:packet_sent", "recovery:metrics_updated"}},
		{filepath.Join(sdir, res.Start.ConnID+"-server.sqlog"), []string{"transport:data_moved"}},
	} {
		names := qlogNames(t, tc.file)
		for _, w := range tc.want {
			if names[w] == 0 {
				t.Errorf("%s has no %s event (names: %v)", filepath.Base(tc.file), w, names)
			}
		}
	}
}

func TestDurationModes(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{AllowReverse: true})
	for _, reverse := range []bool{false, true} {
		res, err := Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Duration: 300 * time.Millisecond,
			Reverse: reverse, ECN: true})
		if err != nil {
			t.Fatalf("reverse=%v: %v", reverse, err)
		}
		e := res.End
		if !e.Verified || e.Bytes <= 0 {
			t.Errorf("reverse=%v: verified %v bytes %d, want true and > 0", reverse, e.Verified, e.Bytes)
		}
		// The sender stops at 300 ms of its own clock; the transfer ends after
		// the queued data drains. Forward, the client is the sender, so its
		// measured time covers the whole duration. Reverse, the client's clock
		// starts at the first byte it receives, after the server's did, so only
		// a loose lower bound is a property (a tight one fails on a loaded host).
		lo := 0.3
		if reverse {
			lo = 0.15
		}
		if e.Seconds < lo {
			t.Errorf("reverse=%v: seconds %v, want ≥ %v (the requested duration is 0.3 s)", reverse, e.Seconds, lo)
		}
		if res.Start.Seconds != 0.3 || !res.Start.ECN {
			t.Errorf("reverse=%v: start seconds %v ecn %v, want 0.3 true", reverse, res.Start.Seconds, res.Start.ECN)
		}
	}
}

func TestReceiverShutdownFailsSender(t *testing.T) {
	srv, err := NewServer(ServerConfig{Listen: "127.0.0.1:0"})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	served := make(chan struct{})
	go func() { srv.Serve(ctx); close(served) }()
	defer func() { cancel(); <-served }()
	// Stop the receiver while the transfer runs: at the first interval
	// report, which the sender makes only once data is flowing (a sleep
	// instead lost the race on a loaded machine and stopped the receiver
	// before the sender had dialed).
	var once sync.Once
	_, err = Run(context.Background(), ClientConfig{Addr: srv.Addr().String(), Duration: 20 * time.Second,
		Interval: 50 * time.Millisecond, OnInterval: func(Interval) { once.Do(cancel) }})
	if err == nil {
		t.Fatal("Run against a receiver that shut down: got nil error, want one")
	}
	// The receiver aborts running flows when it stops, so the sender learns
	// it at once (not by idle timeout).
	if !strings.Contains(err.Error(), "aborted") {
		t.Errorf("error %q: want it to say the peer aborted", err)
	}
}

func TestCancelAbortsTransfer(t *testing.T) {
	srv, flows := startServer(t, ServerConfig{})
	ctx, cancel := context.WithCancel(context.Background())
	var once sync.Once // cancel while the transfer runs: at its first interval report
	_, err := Run(ctx, ClientConfig{Addr: srv.Addr().String(), Duration: 30 * time.Second,
		Interval: 50 * time.Millisecond, OnInterval: func(Interval) { once.Do(cancel) }})
	if err == nil || !strings.Contains(err.Error(), "interrupted") {
		t.Fatalf("Run with a cancelled context: got %v, want an 'interrupted' error", err)
	}
	// The receiver learns of the abort at once (its summary has an error).
	got := waitFlows(t, srv, flows, 1)
	if got[0].Error == "" {
		t.Errorf("receiver summary after the sender aborted: no error, want one")
	}
}
