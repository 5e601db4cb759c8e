package perfcli

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"cclab/perf"
)

// waitExit waits for a receiver started with -1 to exit.
func waitExit(t *testing.T, code <-chan int) {
	t.Helper()
	select {
	case c := <-code:
		if c != 0 {
			t.Errorf("receiver exit %d, want 0", c)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("receiver -1 did not exit after one test")
	}
}

// i3Interval is an element of iperf3's intervals[] as iperf3's consumers
// read it (iperf3's keys only).
type i3Interval struct {
	Streams []i3IvStats `json:"streams"`
	Sum     i3IvStats   `json:"sum"`
}

type i3IvStats struct {
	Socket        int      `json:"socket"`
	Start         float64  `json:"start"`
	End           float64  `json:"end"`
	Seconds       float64  `json:"seconds"`
	Bytes         int64    `json:"bytes"`
	BitsPerSecond float64  `json:"bits_per_second"`
	Omitted       *bool    `json:"omitted"`
	Sender        *bool    `json:"sender"`
	Packets       *int64   `json:"packets"`
	LostPackets   *int64   `json:"lost_packets"`
	JitterMs      *float64 `json:"jitter_ms"`
}

// checkIntervals checks intervals[] against iperf3's rules: each stream's
// intervals follow one another from 0, seconds = end - start, the rate is
// bytes over seconds, omitted and sender are present (sender false: this
// side received), and the sum adds the streams; it returns the bytes of
// every interval added.
func checkIntervals(t *testing.T, ivs []i3Interval) int64 {
	t.Helper()
	var total int64
	prevEnd := 0.0
	for k, iv := range ivs {
		if len(iv.Streams) != 1 {
			t.Fatalf("intervals[%d]: %d streams, want 1", k, len(iv.Streams))
		}
		st := iv.Streams[0]
		if st.Socket != 1 || math.Abs(st.Start-prevEnd) > 1e-9 || math.Abs(st.Seconds-(st.End-st.Start)) > 1e-9 || st.Omitted == nil || st.Sender == nil || *st.Sender {
			t.Errorf("intervals[%d].streams[0] = %+v: want socket 1, start %g (the last end), seconds end-start, omitted and sender false", k, st, prevEnd)
		}
		if want := float64(st.Bytes) * 8 / st.Seconds; math.Abs(st.BitsPerSecond-want) > 1e-6*want+1e-9 {
			t.Errorf("intervals[%d]: bits_per_second %g, want bytes*8/seconds %g", k, st.BitsPerSecond, want)
		}
		if iv.Sum.Bytes != st.Bytes || iv.Sum.Socket != 0 {
			t.Errorf("intervals[%d].sum.bytes %d socket %d, want the stream's %d and no socket", k, iv.Sum.Bytes, iv.Sum.Socket, st.Bytes)
		}
		prevEnd = st.End
		total += st.Bytes
	}
	return total
}

// TestIntervalsJSON: receiver -J -i has intervals[] in iperf3's keys whose
// bytes add up to the flow's (stream mode: every byte delivered).
func TestIntervalsJSON(t *testing.T) {
	addr, out, code := startReceiver(t, "-1", "-J", "-i", "0.05")
	const n = 1 << 20
	if _, err := perf.Run(context.Background(), perf.ClientConfig{Addr: addr, Bytes: n, RateCap: 40e6}); err != nil {
		t.Fatalf("sender: %v", err)
	}
	waitExit(t, code)
	var doc struct {
		Intervals []i3Interval `json:"intervals"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Fatalf("receiver JSON: %v: %q", err, out.String())
	}
	if len(doc.Intervals) < 2 {
		t.Fatalf("intervals: got %d, want at least 2 (0.2 s at 40 Mbit/s, -i 0.05)", len(doc.Intervals))
	}
	if got := checkIntervals(t, doc.Intervals); got != n {
		t.Errorf("intervals' bytes add up to %d, want the flow's %d", got, n)
	}
}

// TestIntervalsDatagram: a datagram-mode flow's intervals carry iperf3's
// UDP keys; their datagrams add up to the receiver's account.
func TestIntervalsDatagram(t *testing.T) {
	addr, out, code := startReceiver(t, "-1", "-J", "-i", "100ms")
	res, err := perf.RunDgram(context.Background(), perf.DgramClientConfig{Addr: addr, CC: "none", Rate: 2e6, Duration: 400 * time.Millisecond})
	if err != nil || res.Receiver == nil {
		t.Fatalf("sender -u: %v (receiver: %v)", err, res)
	}
	waitExit(t, code)
	var doc struct {
		Intervals []i3Interval `json:"intervals"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil {
		t.Fatalf("receiver JSON: %v: %q", err, out.String())
	}
	if got := checkIntervals(t, doc.Intervals); got != int64(res.Receiver.Bytes) {
		t.Errorf("intervals' bytes add up to %d, want the receiver's %d", got, res.Receiver.Bytes)
	}
	var packets, lost int64
	for k, iv := range doc.Intervals {
		st := iv.Streams[0]
		if st.Packets == nil || st.LostPackets == nil || st.JitterMs == nil {
			t.Fatalf("intervals[%d]: packets, lost_packets, jitter_ms missing: %+v", k, st)
		}
		packets, lost = packets+*st.Packets, lost+*st.LostPackets
	}
	if got, want := packets-lost, int64(res.Receiver.Datagrams); got != want {
		t.Errorf("intervals: packets - lost_packets = %d, want the datagrams delivered, %d", got, want)
	}
}

// TestIntervalsText: with -i the text output has a line per interval of
// the flow, each starting where the last ended, then the summary line.
func TestIntervalsText(t *testing.T) {
	addr, out, code := startReceiver(t, "-1", "-i", "50ms")
	res, err := perf.Run(context.Background(), perf.ClientConfig{Addr: addr, Bytes: 1 << 20, RateCap: 40e6})
	if err != nil {
		t.Fatalf("sender: %v", err)
	}
	waitExit(t, code)
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) < 3 {
		t.Fatalf("output: %d lines, want interval lines and a summary:\n%s", len(lines), out.String())
	}
	prefix := "[" + res.Start.ConnID + "]"
	prevEnd := 0.0
	for _, l := range lines[:len(lines)-1] {
		var start, end float64
		if _, err := fmt.Sscanf(strings.TrimPrefix(l, prefix), " %f-%f s", &start, &end); err != nil || !strings.HasPrefix(l, prefix) || math.Abs(start-prevEnd) > 0.006 || !strings.Contains(l, "Mbit/s") {
			t.Errorf("interval line %q: want %s START-END s ... Mbit/s, START %.2f (%v)", l, prefix, prevEnd, err)
		}
		prevEnd = end
	}
	if last := lines[len(lines)-1]; !strings.Contains(last, " received ") {
		t.Errorf("last line %q: want the summary", last)
	}
}

// TestIntervalsReverse: a reverse flow's intervals (this receiver sent)
// have sender true and the sending side's retransmits, snd_cwnd and rtt;
// their bytes add up to the bytes sent and acknowledged.
func TestIntervalsReverse(t *testing.T) {
	addr, out, code := startReceiver(t, "-1", "-J", "-allow-reverse", "-i", "20ms")
	const n = 2 << 20
	if _, err := perf.Run(context.Background(), perf.ClientConfig{Addr: addr, Bytes: n, Reverse: true}); err != nil {
		t.Fatalf("sender -R: %v", err)
	}
	waitExit(t, code)
	var doc struct {
		Intervals []struct {
			Streams []struct {
				Bytes       int64  `json:"bytes"`
				Sender      *bool  `json:"sender"`
				Retransmits *int64 `json:"retransmits"`
				SndCwnd     *int64 `json:"snd_cwnd"`
				RTT         *int64 `json:"rtt"`
			} `json:"streams"`
		} `json:"intervals"`
	}
	if err := json.Unmarshal([]byte(out.String()), &doc); err != nil || len(doc.Intervals) == 0 {
		t.Fatalf("receiver JSON: %v, %d intervals: %q", err, len(doc.Intervals), out.String())
	}
	var total int64
	for k, iv := range doc.Intervals {
		st := iv.Streams[0]
		if st.Sender == nil || !*st.Sender || st.Retransmits == nil || st.SndCwnd == nil || st.RTT == nil || *st.SndCwnd <= 0 {
			t.Errorf("intervals[%d].streams[0] = %+v: want sender true, retransmits, snd_cwnd > 0 and rtt", k, st)
		}
		total += st.Bytes
	}
	if total != n {
		t.Errorf("intervals' bytes add up to %d, want the %d sent and acknowledged", total, n)
	}
}
