package perf

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// i3Read is what a small iperf3 consumer takes from a -J document, through
// iperf3's keys only (as iperf 3.12 writes them: the fixtures in
// testdata/iperf3 are its own output on loopback): protocol and streams
// from start, per-interval sums, the end's sent and received sums (TCP) or
// the UDP sum, and the CPU use.
type i3Read struct {
	Protocol                      string
	Streams, Connected, Intervals int
	EndStreams                    int
	SentBps, RecvBps              float64
	SentBytes, RecvBytes          int64
	Retransmits                   int64 // TCP sender: end.sum_sent.retransmits
	CwndSeen, RTTSeen             bool  // TCP sender: intervals[].streams[].snd_cwnd, rtt
	Jitter, LostPct               float64
	Packets, Lost                 int64
	HostCPU                       float64
}

// i3Get walks m by keys (strings for objects, ints for arrays).
func i3Get(m any, path ...any) (any, error) {
	for _, k := range path {
		switch k := k.(type) {
		case string:
			o, ok := m.(map[string]any)
			if !ok || o[k] == nil {
				return nil, fmt.Errorf("no key %q", k)
			}
			m = o[k]
		case int:
			a, ok := m.([]any)
			if !ok || k >= len(a) {
				return nil, fmt.Errorf("no element %d", k)
			}
			m = a[k]
		}
	}
	return m, nil
}

// readIperf3 is the consumer: it reads an iperf3 -J document and checks
// that its numbers agree with one another (bits_per_second = bytes*8/
// seconds; an interval's sum is its streams' total).
func readIperf3(b []byte) (r i3Read, err error) {
	var doc map[string]any
	if err := json.Unmarshal(b, &doc); err != nil {
		return r, err
	}
	num := func(path ...any) float64 {
		v, e := i3Get(doc, path...)
		f, ok := v.(float64)
		if e == nil && !ok {
			e = fmt.Errorf("%v: not a number", path)
		}
		if e != nil && err == nil {
			err = fmt.Errorf("%v: %w", path, e)
		}
		return f
	}
	length := func(path ...any) int {
		v, e := i3Get(doc, path...)
		if e != nil && err == nil {
			err = fmt.Errorf("%v: %w", path, e)
		}
		a, _ := v.([]any)
		return len(a)
	}
	proto, _ := i3Get(doc, "start", "test_start", "protocol")
	r.Protocol, _ = proto.(string)
	r.Streams = int(num("start", "test_start", "num_streams"))
	r.Connected = length("start", "connected")
	num("start", "timestamp", "timesecs")
	r.Intervals = length("intervals")
	for k := range r.Intervals {
		var total float64
		for i := range length("intervals", k, "streams") {
			total += num("intervals", k, "streams", i, "bytes")
			sender, _ := i3Get(doc, "intervals", k, "streams", i, "sender")
			if sender == true && r.Protocol == "TCP" {
				num("intervals", k, "streams", i, "retransmits")
				_, e1 := i3Get(doc, "intervals", k, "streams", i, "snd_cwnd")
				_, e2 := i3Get(doc, "intervals", k, "streams", i, "rtt")
				r.CwndSeen, r.RTTSeen = r.CwndSeen || e1 == nil, r.RTTSeen || e2 == nil
			}
		}
		sum := num("intervals", k, "sum", "bytes")
		if _, bidir := doc["end"].(map[string]any)["sum_sent_bidir_reverse"]; !bidir && total != sum && err == nil {
			err = fmt.Errorf("intervals[%d]: sum.bytes %v, streams' total %v", k, sum, total)
		}
		checkRate(&err, fmt.Sprintf("intervals[%d].sum", k), sum, num("intervals", k, "sum", "seconds"), num("intervals", k, "sum", "bits_per_second"))
	}
	r.EndStreams = length("end", "streams")
	for _, s := range []string{"sum_sent", "sum_received"} {
		checkRate(&err, "end."+s, num("end", s, "bytes"), num("end", s, "seconds"), num("end", s, "bits_per_second"))
	}
	r.SentBps, r.RecvBps = num("end", "sum_sent", "bits_per_second"), num("end", "sum_received", "bits_per_second")
	r.SentBytes, r.RecvBytes = int64(num("end", "sum_sent", "bytes")), int64(num("end", "sum_received", "bytes"))
	if r.Protocol == "UDP" {
		r.Jitter, r.LostPct = num("end", "sum", "jitter_ms"), num("end", "sum", "lost_percent")
		r.Packets, r.Lost = int64(num("end", "sum", "packets")), int64(num("end", "sum", "lost_packets"))
	} else if sender, _ := i3Get(doc, "end", "sum_sent", "sender"); sender == true {
		r.Retransmits = int64(num("end", "sum_sent", "retransmits"))
	}
	r.HostCPU = num("end", "cpu_utilization_percent", "host_total")
	return r, err
}

// checkRate checks bits_per_second against bytes*8/seconds (1 % and 1 bit/s
// of slack: iperf3 rounds its seconds).
func checkRate(err *error, what string, bytes, secs, rate float64) {
	if *err != nil || secs <= 0 {
		return
	}
	if want := bytes * 8 / secs; math.Abs(rate-want) > 0.01*want+1 {
		*err = fmt.Errorf("%s: bits_per_second %.0f, bytes*8/seconds %.0f", what, rate, want)
	}
}

// TestIperf3ReaderOnIperf3: the reader reads iperf3's own output, so it
// stands for iperf3's consumers.
func TestIperf3ReaderOnIperf3(t *testing.T) {
	for _, tc := range []struct {
		file             string
		proto            string
		streams, results int
	}{
		{"tcp.json", "TCP", 1, 1},
		{"tcp-p2.json", "TCP", 2, 2},
		{"tcp-bidir.json", "TCP", 1, 2},
		{"tcp-reverse.json", "TCP", 1, 1},
		{"udp.json", "UDP", 1, 1},
		{"server-tcp.json", "TCP", 2, 2}, // iperf3 -s -J serving -P 2
		{"server-udp.json", "UDP", 1, 1},
	} {
		b, err := os.ReadFile(filepath.Join("testdata", "iperf3", tc.file))
		if err != nil {
			t.Fatal(err)
		}
		r, err := readIperf3(b)
		if err != nil {
			t.Errorf("%s: %v", tc.file, err)
			continue
		}
		if r.Protocol != tc.proto || r.Streams != tc.streams || r.EndStreams != tc.results || r.RecvBytes <= 0 {
			t.Errorf("%s: got %+v, want protocol %s, %d streams, %d end streams, bytes received", tc.file, r, tc.proto, tc.streams, tc.results)
		}
	}
}

// TestIperf3ReaderOnCclab: the same reader reads the sender's and the
// receiver's -J output of stream tests (one flow, -P 2, --bidir, -R) and
// of a datagram test, and finds the transfer's numbers in iperf3's keys.
func TestIperf3ReaderOnCclab(t *testing.T) {
	var mu sync.Mutex
	tests := map[string]TestSummary{}
	srv, recv := startServer(t, ServerConfig{AllowReverse: true,
		OnTest: func(s TestSummary) { mu.Lock(); tests[s.Test] = s; mu.Unlock() }})
	addr := srv.Addr().String()
	h := Host{Version: "cclab test", SystemInfo: "test", User: time.Millisecond, System: time.Millisecond, Wall: 10 * time.Millisecond}
	for _, tc := range []struct {
		name              string
		tc                TestConfig
		streams, endFlows int
	}{
		{"one flow", TestConfig{Flow: ClientConfig{Addr: addr, Bytes: 1 << 20, Interval: 20 * time.Millisecond}, Parallel: 1}, 1, 1},
		{"-P 2", TestConfig{Flow: ClientConfig{Addr: addr, Bytes: 1 << 20, Interval: 20 * time.Millisecond}, Parallel: 2}, 2, 2},
		{"--bidir", TestConfig{Flow: ClientConfig{Addr: addr, Bytes: 1 << 20, Interval: 20 * time.Millisecond}, Parallel: 1, Bidir: true}, 1, 2},
		{"-R", TestConfig{Flow: ClientConfig{Addr: addr, Bytes: 1 << 20, Reverse: true, Interval: 20 * time.Millisecond}, Parallel: 1}, 1, 1},
	} {
		res, err := RunTest(context.Background(), tc.tc)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		b, _ := json.Marshal(ToIperf3(res, h, nil))
		r, err := readIperf3(b)
		if err != nil {
			t.Errorf("%s: reader: %v\n%s", tc.name, err, b)
			continue
		}
		if r.Protocol != "TCP" || r.Streams != tc.streams || r.Connected != tc.endFlows || r.EndStreams != tc.endFlows {
			t.Errorf("%s: got protocol %s, %d streams, %d connected, %d end streams; want TCP, %d, %d, %d",
				tc.name, r.Protocol, r.Streams, r.Connected, r.EndStreams, tc.streams, tc.endFlows, tc.endFlows)
		}
		if r.RecvBytes != res.End.Bytes || r.RecvBps <= 0 || r.Intervals == 0 || r.HostCPU != 20 {
			t.Errorf("%s: got received %d bytes at %.0f bit/s, %d intervals, host CPU %.1f %%; want %d bytes, a rate, intervals, 20 %%",
				tc.name, r.RecvBytes, r.RecvBps, r.Intervals, r.HostCPU, res.End.Bytes)
		}
		if fwd := !tc.tc.Flow.Reverse; fwd && (!r.CwndSeen || !r.RTTSeen || r.Retransmits != res.End.Retransmits) {
			t.Errorf("%s: snd_cwnd %v, rtt %v, retransmits %d; want cwnd and RTT in the intervals and %d retransmits",
				tc.name, r.CwndSeen, r.RTTSeen, r.Retransmits, res.End.Retransmits)
		}
	}
	dres, err := RunDgram(context.Background(), DgramClientConfig{Addr: addr, Duration: 500 * time.Millisecond, CC: "ccid2", Rate: 5e6})
	if err != nil {
		t.Fatal(err)
	}
	b, _ := json.Marshal(ToIperf3Dgram(dres, h, nil))
	r, err := readIperf3(b)
	if err != nil {
		t.Fatalf("datagram: reader: %v\n%s", err, b)
	}
	if r.Protocol != "UDP" || r.Packets != int64(dres.Sent) || r.Lost != int64(dres.Receiver.LostNetwork) || r.RecvBytes != int64(dres.Receiver.Bytes) {
		t.Errorf("datagram: got %+v; want UDP, %d packets, %d lost, %d bytes received", r, dres.Sent, dres.Receiver.LostNetwork, dres.Receiver.Bytes)
	}
	// The receiver's side: one document per test, as iperf3 -s -J.
	got := waitFlows(t, srv, recv, 7)
	for i := 0; i < 1000; i++ { // the -P 2 and --bidir tests' sums follow their last flows
		mu.Lock()
		n := len(tests)
		mu.Unlock()
		if n == 2 {
			break
		}
		time.Sleep(10 * time.Millisecond)
	}
	mu.Lock()
	defer mu.Unlock()
	byTest := map[string][]FlowSummary{}
	for _, f := range got {
		byTest[f.Test] = append(byTest[f.Test], f)
	}
	for _, f := range got {
		var test *TestSummary
		flows := []FlowSummary{f}
		if f.Test != "" {
			s := tests[f.Test]
			test, flows = &s, byTest[f.Test]
		}
		b, _ := json.Marshal(ToIperf3Receiver(flows, test, h, time.Now()))
		r, err := readIperf3(b)
		if err != nil {
			t.Errorf("receiver, flow %s: reader: %v\n%s", f.ConnID, err, b)
			continue
		}
		if r.EndStreams != len(flows) || r.RecvBytes <= 0 && !f.Reverse {
			t.Errorf("receiver, flow %s: got %+v; want %d end streams and bytes received", f.ConnID, r, len(flows))
		}
	}
}
