package qlog

import (
	"bytes"
	"encoding/json"
	"io"
	"strings"
	"testing"
	"time"

	"cclab/clock"
	"cclab/event"
	"cclab/transport"
)

// parseSeq splits a JSON-SEQ stream into records, checking RFC 7464 framing:
// every record starts with 0x1E and ends with a line feed.
func parseSeq(t *testing.T, data []byte) []map[string]any {
	t.Helper()
	if len(data) == 0 || data[0] != RecordSeparator {
		t.Fatalf("stream does not start with the record separator: %q", data[:min(len(data), 20)])
	}
	var out []map[string]any
	for _, rec := range bytes.Split(data[1:], []byte{RecordSeparator}) {
		if len(rec) == 0 || rec[len(rec)-1] != '\n' {
			t.Fatalf("record does not end with a line feed: %q", rec)
		}
		var m map[string]any
		if err := json.Unmarshal(rec, &m); err != nil {
			t.Fatalf("record is not JSON: %v: %q", err, rec)
		}
		out = append(out, m)
	}
	return out
}

func TestHeaderAndEvents(t *testing.T) {
	var buf bytes.Buffer
	ref := clock.Start
	w := NewWriter(&buf, Header{Title: "t \"quoted\"", VantagePoint: "client", GroupID: "abcd", Reference: ref,
		WallClock: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC), CC: "reno", Recovery: "newreno"})
	ms := time.Millisecond
	w.Record(&event.Event{Time: ref.Add(1500 * time.Microsecond), Kind: event.PacketSent, Seq: 7, Bytes: 1200})
	w.Record(&event.Event{Time: ref.Add(2 * ms), Kind: event.PacketSent, Seq: 8, Bytes: 1200, Reason: 1})
	w.Record(&event.Event{Time: ref.Add(3 * ms), Kind: event.MetricsUpdated, Cwnd: 14400, Ssthresh: 1 << 30,
		InFlight: 2400, SRTT: 10 * ms, RTT: 12 * ms, MinRTT: 9 * ms})
	w.Record(&event.Event{Time: ref.Add(4 * ms), Kind: event.PacketLost, Seq: 7, Bytes: 1200, Reason: 1})
	w.Record(&event.Event{Time: ref.Add(4 * ms), Kind: event.RecoveryStart})
	w.Record(&event.Event{Time: ref.Add(5 * ms), Kind: event.RecoveryEnd, Cwnd: 7200, Ssthresh: 7200})
	w.Record(&event.Event{Time: ref.Add(6 * ms), Kind: event.RTO, Reason: 2, Cwnd: 1200})
	w.Record(&event.Event{Time: ref.Add(7 * ms), Kind: event.Delivered, Seq: 0, Bytes: 4096})
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	recs := parseSeq(t, buf.Bytes())

	h := recs[0]
	for k, want := range map[string]any{"qlog_format": "JSON-SEQ", "qlog_version": Version, "title": "t \"quoted\""} {
		if h[k] != want {
			t.Errorf("header %s: got %v, want %v", k, h[k], want)
		}
	}
	tr, _ := h["trace"].(map[string]any)
	vp, _ := tr["vantage_point"].(map[string]any)
	if vp["type"] != "client" {
		t.Errorf("vantage point: got %v, want client", vp["type"])
	}

	type want struct {
		name   string
		time   float64
		fields map[string]any
	}
	wants := []want{
		{"transport:packet_sent", 1.5, map[string]any{"header.packet_number": 7.0, "raw.length": 1200.0}},
		{"transport:packet_sent", 2, map[string]any{"header.packet_number": 8.0, "is_retransmission": true}},
		// a first metrics update with cwnd < ssthresh logs the slow_start state first
		{"recovery:congestion_state_updated", 3, map[string]any{"new": "slow_start"}},
		{"recovery:metrics_updated", 3, map[string]any{"congestion_window": 14400.0, "ssthresh": float64(1 << 30),
			"bytes_in_flight": 2400.0, "smoothed_rtt": 10.0, "latest_rtt": 12.0, "min_rtt": 9.0}},
		{"recovery:packet_lost", 4, map[string]any{"header.packet_number": 7.0, "trigger": "reordering_threshold"}},
		{"recovery:congestion_state_updated", 4, map[string]any{"old": "slow_start", "new": "recovery"}},
		{"recovery:congestion_state_updated", 5, map[string]any{"old": "recovery", "new": "congestion_avoidance"}},
		{"cclab:rto", 6, map[string]any{"cause": "too_few_dupacks", "congestion_window": 1200.0}},
		{"transport:data_moved", 7, map[string]any{"length": 4096.0, "to": "application"}},
	}
	if len(recs)-1 != len(wants) {
		t.Fatalf("records after header: got %d, want %d", len(recs)-1, len(wants))
	}
	for i, w := range wants {
		r := recs[i+1]
		if r["name"] != w.name {
			t.Errorf("event %d name: got %v, want %v", i, r["name"], w.name)
			continue
		}
		if r["time"] != w.time {
			t.Errorf("event %d (%s) time: got %v, want %v ms", i, w.name, r["time"], w.time)
		}
		data, _ := r["data"].(map[string]any)
		for path, v := range w.fields {
			var got any = data
			for _, k := range strings.Split(path, ".") {
				m, _ := got.(map[string]any)
				got = m[k]
			}
			if got != v {
				t.Errorf("event %d (%s) %s: got %v, want %v", i, w.name, path, got, v)
			}
		}
	}
}

func TestReferenceDefaultsToFirstEvent(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{VantagePoint: "server"})
	t0 := clock.Time(5 * time.Second)
	w.Record(&event.Event{Time: t0, Kind: event.Delivered, Bytes: 1})
	w.Record(&event.Event{Time: t0.Add(250 * time.Millisecond), Kind: event.Delivered, Bytes: 1})
	w.Close()
	recs := parseSeq(t, buf.Bytes())
	for i, want := range []float64{0, 250} {
		if got := recs[i+1]["time"]; got != want {
			t.Errorf("event %d time: got %v, want %v", i, got, want)
		}
	}
}

func TestCloseWithoutEventsWritesHeader(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{})
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	if recs := parseSeq(t, buf.Bytes()); len(recs) != 1 {
		t.Errorf("records: got %d, want 1 (header only)", len(recs))
	}
	w.Record(&event.Event{Kind: event.Delivered}) // ignored after Close
	if n := w.Events(); n != 0 {
		t.Errorf("events after close: got %d, want 0", n)
	}
}

func TestCclabEventsCarryNonZeroFields(t *testing.T) {
	var buf bytes.Buffer
	w := NewWriter(&buf, Header{Reference: 1})
	w.Record(&event.Event{Time: 1, Kind: event.Enqueue, Link: 2, QueueLen: 3, QueueBytes: 3600})
	w.Close()
	recs := parseSeq(t, buf.Bytes())
	r := recs[1]
	if r["name"] != "cclab:enqueue" {
		t.Fatalf("name: got %v, want cclab:enqueue", r["name"])
	}
	data := r["data"].(map[string]any)
	want := map[string]any{"link": 2.0, "queue_packets": 3.0, "queue_bytes": 3600.0}
	if len(data) != len(want) {
		t.Errorf("fields: got %v, want %v", data, want)
	}
	for k, v := range want {
		if data[k] != v {
			t.Errorf("%s: got %v, want %v", k, data[k], v)
		}
	}
}

func TestRecordDoesNotAllocate(t *testing.T) {
	w := NewWriter(io.Discard, Header{Reference: 1})
	e := event.Event{Time: 12345678, Kind: event.MetricsUpdated, Cwnd: 100000, Ssthresh: 50000, InFlight: 90000,
		SRTT: 1234567, RTT: 1300000, MinRTT: 1000000}
	w.Record(&e)
	if a := testing.AllocsPerRun(1000, func() { w.Record(&e) }); a != 0 {
		t.Errorf("allocs per Record: got %v, want 0", a)
	}
}

func BenchmarkRecord(b *testing.B) {
	w := NewWriter(io.Discard, Header{Reference: 1})
	e := event.Event{Time: 12345678, Kind: event.PacketSent, Seq: 1234, Bytes: 1200}
	b.ReportAllocs()
	for b.Loop() {
		e.Time++
		w.Record(&e)
	}
}

// TestRTOCauseNames keeps the qlog names in step with transport.RTOCause.
func TestRTOCauseNames(t *testing.T) {
	for i, name := range rtoCauses {
		if got := transport.RTOCause(i).String(); got != name {
			t.Errorf("RTO cause %d: qlog says %q, transport %q", i, name, got)
		}
	}
}

// TestLossTriggerNames keeps packet_lost triggers in step with transport.LossReason.
func TestLossTriggerNames(t *testing.T) {
	for _, tc := range []struct {
		r    transport.LossReason
		want string
	}{{transport.LossDupAck, "reordering_threshold"}, {transport.LossTime, "time_threshold"}, {transport.LossRTO, "rto"}} {
		if got := lossTrigger(uint8(tc.r)); got != tc.want {
			t.Errorf("loss reason %d: got %q, want %q", tc.r, got, tc.want)
		}
	}
}

// TestAuthentication: the account of an authenticated connection is one
// cclab:authentication record with the cipher and both counters.
func TestAuthentication(t *testing.T) {
	var buf bytes.Buffer
	q := NewWriter(&buf, Header{Title: "t", VantagePoint: "client", Reference: clock.Start})
	q.Authentication(clock.Start.Add(1500*time.Microsecond), "AES-128-GMAC", 3, 2)
	if err := q.Close(); err != nil {
		t.Fatal(err)
	}
	want := `{"time":1.5,"name":"cclab:authentication","data":{"cipher":"AES-128-GMAC","auth_failed":3,"replayed":2}}`
	if !strings.Contains(buf.String(), want) {
		t.Errorf("qlog\n%s\nwant a record %s", buf.String(), want)
	}
}
