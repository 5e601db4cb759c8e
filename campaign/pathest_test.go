package campaign

import (
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"cclab/internal/qlog"
	"cclab/transport"
)

// synthProbe writes a probe's sender qlog: n packets of payload bytes,
// the ith acknowledged at start + i × gap (plus stall after the
// stallAfter-th) with an RTT of minRTT plus a queue growing by grow per
// ACK up to full, and the packets lost (declared at their ACK's instant).
func synthProbe(n, payload int, start, gap, minRTT, grow, full time.Duration, lost map[int]bool) []byte {
	return synthStalled(n, payload, start, gap, minRTT, grow, full, lost, n, 0)
}

func synthStalled(n, payload int, start, gap, minRTT, grow, full time.Duration, lost map[int]bool, stallAfter int, stall time.Duration) []byte {
	var b strings.Builder
	rec := func(format string, args ...any) {
		b.WriteByte(qlog.RecordSeparator)
		fmt.Fprintf(&b, format+"\n", args...)
	}
	ms := func(d time.Duration) float64 { return float64(d) / 1e6 }
	for i := range n {
		rec(`{"time":%g,"name":"transport:packet_sent","data":{"header":{"packet_number":%d},"raw":{"length":%d}}}`, ms(time.Duration(i)*gap/2), i, payload)
	}
	for i := range n {
		at := start + time.Duration(i)*gap
		if i > stallAfter {
			at += stall
		}
		rtt := minRTT + min(time.Duration(i)*grow, full)
		rec(`{"time":%g,"name":"recovery:metrics_updated","data":{"latest_rtt":%g,"smoothed_rtt":%g}}`, ms(at), ms(rtt), ms(rtt))
		if lost[i] {
			rec(`{"time":%g,"name":"recovery:packet_lost","data":{"header":{"packet_number":%d}}}`, ms(at), i)
			continue
		}
		rec(`{"time":%g,"name":"cclab:packet_acked","data":{"length":%d}}`, ms(at), payload)
	}
	return []byte(b.String())
}

// TestEstimateProbe: a probe's full queue's delay and busy-period rate
// from synthetic traces with known truth (its buffer: TestCountedBuffer).
func TestEstimateProbe(t *testing.T) {
	const payload = 1200
	for _, c := range []struct {
		name      string
		stall     time.Duration // after the 450th ACK
		n         int
		gap, grow time.Duration
		full      time.Duration
		lost      map[int]bool
		ok        bool
		wantRate  float64 // payload bits/s
		wantQueue time.Duration
	}{
		// 1 ms per 1200-byte packet: 9.6 Mbit/s; a 200 ms queue
		// reached at the 400th ACK, two losses there.
		{"full queue", 0, 600, time.Millisecond, 500 * time.Microsecond, 200 * time.Millisecond, map[int]bool{500: true, 550: true}, true, 9.6e6 * 398 / 399, 200 * time.Millisecond},
		// A random loss early (queue 10 ms) is no overflow.
		{"early loss", 0, 600, time.Millisecond, 500 * time.Microsecond, 200 * time.Millisecond, map[int]bool{20: true}, true, 9.6e6, 200 * time.Millisecond},
		// Too short a busy period for a rate.
		// A stall (a timeout) in the busy period: its trains are left out.
		{"stall", 300 * time.Millisecond, 600, time.Millisecond, 500 * time.Microsecond, 200 * time.Millisecond, nil, true, 9.6e6, 200 * time.Millisecond},
		{"short", 0, 40, time.Millisecond, time.Millisecond, 20 * time.Millisecond, nil, false, 0, 20 * time.Millisecond},
	} {
		t.Run(c.name, func(t *testing.T) {
			tr := estimateTrace(synthStalled(c.n, payload, 100*time.Millisecond, c.gap, 80*time.Millisecond, c.grow, c.full, c.lost, 450, c.stall))
			pe, ok := estimateProbe(tr, 0)
			if ok != c.ok {
				t.Fatalf("ok %v, want %v", ok, c.ok)
			}
			if got, want := pe.queue, c.wantQueue; got != want {
				t.Errorf("queue %v, want %v", got, want)
			}
			if !ok {
				return
			}
			if got, want := pe.rate, c.wantRate; math.Abs(got/want-1) > 0.01 {
				t.Errorf("rate %.4g, want %.4g", got, want)
			}
			if pe.rateLo > pe.rate || pe.rateHi < pe.rate {
				t.Errorf("rate %g outside its interval [%g, %g]", pe.rate, pe.rateLo, pe.rateHi)
			}
		})
	}
}

// TestProfileFromProbe: a path profile takes its rate (in wire bits) and
// its queue (packets) from the probe when the probe overflowed the queue,
// and marks the queue a bound when it did not.
func TestProfileFromProbe(t *testing.T) {
	const payload = 1200
	for _, c := range []struct {
		name      string
		gain      float64
		wantBound bool
	}{
		{"overflowed", 1.5, false},
		{"not overflowed", 1.1, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			pp := PathProfile{Packet: payload + 28, MinRTT: 80 * time.Millisecond}
			probe := queuePath{n: 900, payload: payload, buffer: 200, rate: 1000, gain: c.gain, minRTT: 80 * time.Millisecond}
			pe := pp.probe(Row{Status: StatusDone, SenderJSON: `{"end":{"host_limit":{"role":"sender","host_limited": true}}}`, SenderQlog: string(probe.qlog())})
			if pe == nil {
				t.Fatalf("no probe estimate: %v", pp.Warnings)
			}
			if !strings.Contains(strings.Join(pp.Warnings, "\n"), "probe: its sender reported itself host-limited") {
				t.Errorf("no host-limited warning: %v", pp.Warnings)
			}
			pp.estimate(nil, []float64{1e6}, pe)
			wantRate := 9.6e6 * float64(transport.DatagramFor(payload)+28) / payload // the segments' datagrams and IPv4 and UDP headers
			if math.Abs(pp.RateBps/wantRate-1) > 0.01 || pp.RateBound {
				t.Errorf("rate %.4g (bound %v), want %.4g measured", pp.RateBps, pp.RateBound, wantRate)
			}
			if pp.QueueBound != c.wantBound {
				t.Errorf("queue %dp bound %v, want bound %v; warnings %v", pp.QueuePackets, pp.QueueBound, c.wantBound, pp.Warnings)
			}
			if got, want := pp.QueuePackets, 200; !c.wantBound && (got < want-2 || got > want+2 || pp.QueueLo > got || pp.QueueHi < got) {
				t.Errorf("queue %dp [%d, %d], want %dp", got, pp.QueueLo, pp.QueueHi, want)
			}
		})
	}
}

// TestEstimateProbeStaleRTT: after a stall at the probe's end, hundreds of
// ACKs of retransmissions repeat the stall's RTT (and the smoothed RTT)
// without sampling it: they are not samples, and the full queue stays the
// plateau's. A constant RTT that the smoothed RTT has converged to (a
// simulated path) is sampled.
func TestEstimateProbeStaleRTT(t *testing.T) {
	trace := string(synthProbe(600, 1200, 100*time.Millisecond, time.Millisecond, 80*time.Millisecond, 500*time.Microsecond, 200*time.Millisecond, map[int]bool{500: true, 550: true}))
	var b strings.Builder
	b.WriteString(trace)
	for i := range 300 {
		fmt.Fprintf(&b, "%c{\"time\":%g,\"name\":\"recovery:metrics_updated\",\"data\":{\"latest_rtt\":400,\"smoothed_rtt\":290}}\n", qlog.RecordSeparator, 800+float64(i)/10)
	}
	tr := estimateTrace([]byte(b.String()))
	pe, ok := estimateProbe(tr, 0)
	if !ok {
		t.Fatal("no estimate")
	}
	if got, want := pe.queue, 200*time.Millisecond; got != want {
		t.Errorf("queue %v, want %v (the plateau's, not the stale RTT's)", got, want)
	}
	if got, want := len(tr.rtts), 601; got != want {
		t.Errorf("%d RTT samples, want %d (600 and the first of the repeats)", got, want)
	}
}

// TestProfileProbeBoundsTransfers: when the probe did not overflow its
// queue (it counted at least buffer packets), the transfers' losses at the
// probe's plateau never set the queue: the queue is the probe's bound. In
// CI a loaded run wrote "queue 60p [45p, 68p]" under a warning "at least 75
// packets", and a CI-mode run "53p [45, 65]" against 200 from losses that
// allowed more than the probe's 45.
func TestProfileProbeBoundsTransfers(t *testing.T) {
	const payload = 1200
	// 9.6 Mbit/s of payload, 9.82 on the wire: a 50 ms plateau holds 50
	// wire packets of 1228 bytes.
	rate := 9.6e6
	for _, c := range []struct {
		name      string
		buffer    float64 // the probe's count, packets (not overflowed)
		wantBound bool
		wantMin   int // the written queue and its low end at least this
	}{
		{"probe count above the transfers'", 75, true, 75},
		// Below the transfers' too: the transfers' losses near the probe's
		// plateau are no overflow the probe did not show (a CI-mode run
		// wrote 53p [45, 65] against 200 from them).
		{"probe count below the transfers'", 40, true, 40},
	} {
		t.Run(c.name, func(t *testing.T) {
			pp := PathProfile{Packet: payload + 28, MinRTT: 80 * time.Millisecond}
			pe := &probeEstimate{rate: rate, rateLo: rate, rateHi: rate, queue: 50 * time.Millisecond,
				buffer: c.buffer, bufferLo: c.buffer, bufferHi: c.buffer, payload: payload}
			// Two losses at the plateau in one transfer: what the transfers
			// alone would call overflows of a 50-packet queue.
			tr := traceEstimate{payload: payload, lost: make([]bool, 10),
				lossAt: []lossPoint{{2, 130 * time.Millisecond}, {5, 129 * time.Millisecond}}} // RTTs: min 80 ms + the plateau
			tr.lost[2], tr.lost[5] = true, true
			pp.estimate([]traceEstimate{tr}, []float64{1e6}, pe)
			if pp.QueueBound != c.wantBound {
				t.Errorf("queue %dp [%d, %d] bound %v, want bound %v; warnings %v", pp.QueuePackets, pp.QueueLo, pp.QueueHi, pp.QueueBound, c.wantBound, pp.Warnings)
			}
			if pp.QueuePackets < c.wantMin || pp.QueueLo < c.wantMin {
				t.Errorf("queue %dp [%d, %d], want at least %d (the probe's count)", pp.QueuePackets, pp.QueueLo, pp.QueueHi, c.wantMin)
			}
			if pp.QueueHi < pp.QueuePackets {
				t.Errorf("queue %dp above its interval's high end %d", pp.QueuePackets, pp.QueueHi)
			}
		})
	}
}
