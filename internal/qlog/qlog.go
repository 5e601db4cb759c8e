// Package qlog writes cclab events (event.Event) as a qlog trace in the
// JSON-SEQ serialization (RFC 7464: every record is preceded by the record
// separator 0x1E and followed by a line feed), as docs/sender.md ("qlog") describes.
//
// The first record is the qlog header (qlog 0.4 style, with the
// "qlog_format": "JSON-SEQ" and "qlog_version" fields that qvis still
// requires); every following record is one event:
//
//	␞{"time":12.345,"name":"recovery:metrics_updated","data":{"congestion_window":14400,...}}
//
// "time" is in milliseconds relative to the header's reference time.
// Main-schema names are used where an event fits one (transport:packet_sent,
// transport:packet_received, transport:data_moved, recovery:packet_lost,
// recovery:metrics_updated, recovery:congestion_state_updated); every other
// event is written as "cclab:<kind>" with its non-zero fields.
//
// The writer is allocation-free per event in steady state: it appends JSON
// with strconv into a reused scratch buffer and writes through a bufio.Writer.
// It is safe for concurrent use.
package qlog

import (
	"bufio"
	"io"
	"strconv"
	"sync"
	"time"

	"cclab/clock"
	"cclab/event"
)

// RecordSeparator is the JSON text sequence record separator, RFC 7464 §2.
const RecordSeparator = 0x1E

// Version is the qlog_version written in the header.
const Version = "0.4"

// Header describes the trace written in the first record.
type Header struct {
	Title        string     // free text, e.g. "cclab sender 127.0.0.1:5201"
	VantagePoint string     // "client", "server" or "network"
	GroupID      string     // connection ID or flow name (hex or text); optional
	Reference    clock.Time // project time that "time" 0 refers to; Never: the first event's time
	WallClock    time.Time  // wall-clock instant of Reference, for humans; optional
	CC           string     // congestion controller spec, recorded in common_fields; optional
	Recovery     string     // loss recovery strategy, recorded in common_fields; optional
}

// Writer is an event.Sink that writes a qlog JSON-SEQ trace.
type Writer struct {
	mu      sync.Mutex
	w       *bufio.Writer
	c       io.Closer // closed by Close, if the destination is an io.Closer
	hdr     Header
	ref     clock.Time
	started bool
	scratch []byte
	err     error
	events  uint64
	closed  bool

	// congestion state tracked for recovery:congestion_state_updated
	state string
}

// NewWriter returns a Writer on w. The header is written with the first event
// (so that a Reference of Never can take the first event's time) or at Close.
// If w is an io.Closer, Close closes it.
func NewWriter(w io.Writer, h Header) *Writer {
	q := &Writer{w: bufio.NewWriterSize(w, 64<<10), hdr: h, ref: h.Reference, scratch: make([]byte, 0, 512)}
	if c, ok := w.(io.Closer); ok {
		q.c = c
	}
	return q
}

// Events returns how many events have been written.
func (q *Writer) Events() uint64 {
	q.mu.Lock()
	defer q.mu.Unlock()
	return q.events
}

// Record writes e as one JSON-SEQ record. Write errors are remembered and
// returned by Flush and Close.
func (q *Writer) Record(e *event.Event) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.ready(e.Time) {
		return
	}
	b := q.scratch[:0]
	if e.Kind == event.MetricsUpdated && e.Cwnd > 0 && e.Ssthresh > 0 {
		// Derive the congestion state from cwnd and ssthresh (RFC 5681 §3.1:
		// slow start while cwnd < ssthresh) and log transitions.
		st := "congestion_avoidance"
		if e.Cwnd < e.Ssthresh {
			st = "slow_start"
		}
		if q.state != "recovery" && st != q.state {
			b = q.stateChange(b, e.Time, st, "")
		}
	}
	q.emit(q.appendEvent(b, e))
}

// ready reports whether a record may be written (no write error, not
// closed), writing the file header first the first time, with t as the
// reference time unless one was set. q.mu is held.
func (q *Writer) ready(t clock.Time) bool {
	if q.err != nil || q.closed {
		return false
	}
	if !q.started {
		if q.ref == clock.Never {
			q.ref = t
		}
		q.writeHeader()
	}
	return true
}

// emit writes the record b (built in q.scratch) and counts it; a write
// error is remembered for Flush and Close. q.mu is held.
func (q *Writer) emit(b []byte) {
	q.scratch = b
	if _, err := q.w.Write(b); err != nil {
		q.err = err
	}
	q.events++
}

func (q *Writer) stateChange(b []byte, t clock.Time, st, trigger string) []byte {
	b = q.begin(b, t, "recovery:congestion_state_updated")
	if q.state != "" {
		b = appendStr(b, "old", q.state)
		b = append(b, ',')
	}
	b = appendStr(b, "new", st)
	if trigger != "" {
		b = append(b, ',')
		b = appendStr(b, "trigger", trigger)
	}
	q.state = st
	return end(b)
}

// begin appends the record separator, time and name and opens "data".
func (q *Writer) begin(b []byte, t clock.Time, name string) []byte {
	b = append(b, RecordSeparator)
	b = append(b, `{"time":`...)
	b = strconv.AppendFloat(b, float64(t-q.ref)/1e6, 'f', -1, 64)
	b = append(b, `,"name":"`...)
	b = append(b, name...)
	b = append(b, `","data":{`...)
	return b
}

func end(b []byte) []byte { return append(b, "}}\n"...) }

func appendInt(b []byte, key string, v int64) []byte {
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendInt(b, v, 10)
}

func appendUint(b []byte, key string, v uint64) []byte {
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendUint(b, v, 10)
}

// appendMs appends a duration as milliseconds (qlog's unit for RTTs).
func appendMs(b []byte, key string, d time.Duration) []byte {
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendFloat(b, float64(d)/1e6, 'f', -1, 64)
}

func appendStr(b []byte, key, v string) []byte {
	b = append(b, '"')
	b = append(b, key...)
	b = append(b, `":`...)
	return strconv.AppendQuote(b, v)
}

// lossTriggers names event.PacketLost reasons; see the transport's LossReason.
var lossTriggers = [...]string{0: "unspecified", 1: "reordering_threshold", 2: "time_threshold", 3: "rto"}

func lossTrigger(r uint8) string {
	if int(r) < len(lossTriggers) {
		return lossTriggers[r]
	}
	return "reason_" + strconv.Itoa(int(r))
}

// rtoCauses names event.RTO reasons (transport.RTOCause values).
var rtoCauses = [...]string{0: "unknown", 1: "lost_retransmission", 2: "too_few_dupacks", 3: "burst_loss", 4: "handshake", 5: "spurious"}

// appendEvent appends one event record.
func (q *Writer) appendEvent(b []byte, e *event.Event) []byte {
	switch e.Kind {
	case event.MetricsUpdated:
		b = q.begin(b, e.Time, "recovery:metrics_updated")
		b = appendInt(b, "congestion_window", int64(e.Cwnd))
		b = append(b, ',')
		b = appendInt(b, "ssthresh", int64(e.Ssthresh))
		b = append(b, ',')
		b = appendInt(b, "bytes_in_flight", int64(e.InFlight))
		if e.SRTT > 0 {
			b = append(b, ',')
			b = appendMs(b, "smoothed_rtt", e.SRTT)
		}
		if e.RTT > 0 {
			b = append(b, ',')
			b = appendMs(b, "latest_rtt", e.RTT)
		}
		if e.MinRTT > 0 {
			b = append(b, ',')
			b = appendMs(b, "min_rtt", e.MinRTT)
		}
		return end(b)
	case event.PacketSent:
		b = q.begin(b, e.Time, "transport:packet_sent")
		b = append(b, `"header":{`...)
		b = appendUint(b, "packet_number", e.Seq)
		b = append(b, `},"raw":{`...)
		b = appendInt(b, "length", int64(e.Bytes))
		b = append(b, '}')
		if e.Reason == event.SentRetransmission {
			b = append(b, `,"is_retransmission":true`...)
		}
		return end(b)
	case event.PacketLost:
		b = q.begin(b, e.Time, "recovery:packet_lost")
		b = append(b, `"header":{`...)
		b = appendUint(b, "packet_number", e.Seq)
		b = append(b, `},`...)
		b = appendInt(b, "length", int64(e.Bytes))
		b = append(b, ',')
		b = appendStr(b, "trigger", lossTrigger(e.Reason))
		return end(b)
	case event.RecoveryStart:
		return q.stateChange(b, e.Time, "recovery", "loss")
	case event.RecoveryEnd:
		st := "congestion_avoidance"
		if e.Cwnd > 0 && e.Cwnd < e.Ssthresh {
			st = "slow_start"
		}
		return q.stateChange(b, e.Time, st, "recovery_end")
	case event.RTO:
		b = q.begin(b, e.Time, "cclab:rto")
		cause := "unknown"
		if int(e.Reason) < len(rtoCauses) {
			cause = rtoCauses[e.Reason]
		}
		b = appendStr(b, "cause", cause)
		b = append(b, ',')
		b = appendUint(b, "seq", e.Seq)
		if e.Cwnd != 0 {
			b = append(b, ',')
			b = appendInt(b, "congestion_window", int64(e.Cwnd))
		}
		return end(b)
	case event.Delivered:
		b = q.begin(b, e.Time, "transport:data_moved")
		b = appendUint(b, "offset", e.Seq)
		b = append(b, ',')
		b = appendInt(b, "length", int64(e.Bytes))
		b = append(b, `,"from":"transport","to":"application"`...)
		return end(b)
	}
	name := e.Kind.String()
	if name == "packet_received" {
		b = q.begin(b, e.Time, "transport:packet_received")
		b = append(b, `"header":{`...)
		b = appendUint(b, "packet_number", e.Seq)
		b = append(b, `},"raw":{`...)
		b = appendInt(b, "length", int64(e.Bytes))
		b = append(b, '}')
		return end(b)
	}
	b = append(b, RecordSeparator)
	b = append(b, `{"time":`...)
	b = strconv.AppendFloat(b, float64(e.Time-q.ref)/1e6, 'f', -1, 64)
	b = append(b, `,"name":"cclab:`...)
	b = append(b, name...)
	b = append(b, `","data":{`...)
	return end(appendFields(b, e))
}

// appendFields appends every non-zero field of e (for cclab: events).
func appendFields(b []byte, e *event.Event) []byte {
	start := len(b)
	if e.Flow != 0 {
		b = appendUint(append(b, ','), "flow", e.Flow)
	}
	if e.Link != 0 {
		b = appendInt(append(b, ','), "link", int64(e.Link))
	}
	if e.Seq != 0 {
		b = appendUint(append(b, ','), "seq", e.Seq)
	}
	if e.Bytes != 0 {
		b = appendInt(append(b, ','), "length", int64(e.Bytes))
	}
	if e.Reason != 0 {
		b = appendInt(append(b, ','), "reason", int64(e.Reason))
	}
	if e.Cwnd != 0 {
		b = appendInt(append(b, ','), "congestion_window", int64(e.Cwnd))
	}
	if e.Ssthresh != 0 {
		b = appendInt(append(b, ','), "ssthresh", int64(e.Ssthresh))
	}
	if e.InFlight != 0 {
		b = appendInt(append(b, ','), "bytes_in_flight", int64(e.InFlight))
	}
	if e.SRTT != 0 {
		b = appendMs(append(b, ','), "smoothed_rtt", e.SRTT)
	}
	if e.RTT != 0 {
		b = appendMs(append(b, ','), "latest_rtt", e.RTT)
	}
	if e.MinRTT != 0 {
		b = appendMs(append(b, ','), "min_rtt", e.MinRTT)
	}
	if e.QueueLen != 0 {
		b = appendInt(append(b, ','), "queue_packets", int64(e.QueueLen))
	}
	if e.QueueBytes != 0 {
		b = appendInt(append(b, ','), "queue_bytes", int64(e.QueueBytes))
	}
	if e.Sojourn != 0 {
		b = appendMs(append(b, ','), "sojourn_time", e.Sojourn)
	}
	if len(b) > start { // drop the leading comma
		copy(b[start:], b[start+1:])
		b = b[:len(b)-1]
	}
	return b
}

func (q *Writer) writeHeader() {
	q.started = true
	h := q.hdr
	b := q.scratch[:0]
	b = append(b, RecordSeparator)
	b = append(b, `{"qlog_version":"`+Version+`","qlog_format":"JSON-SEQ",`...)
	b = append(b, `"file_schema":"urn:ietf:params:qlog:file:sequential",`...)
	b = append(b, `"serialization_format":"application/qlog+json-seq",`...)
	b = appendStr(b, "title", h.Title)
	b = append(b, `,"trace":{"vantage_point":{`...)
	vp := h.VantagePoint
	if vp == "" {
		vp = "unknown"
	}
	b = appendStr(b, "type", vp)
	b = append(b, `},"common_fields":{"time_format":"relative",`...)
	if h.GroupID != "" {
		b = appendStr(b, "group_id", h.GroupID)
		b = append(b, ',')
	}
	if h.CC != "" {
		b = appendStr(b, "cclab_cc", h.CC)
		b = append(b, ',')
	}
	if h.Recovery != "" {
		b = appendStr(b, "cclab_recovery", h.Recovery)
		b = append(b, ',')
	}
	b = append(b, `"reference_time":{"clock_type":"monotonic","epoch":"unknown"`...)
	if !h.WallClock.IsZero() {
		b = append(b, ',')
		b = appendStr(b, "wall_clock_time", h.WallClock.UTC().Format(time.RFC3339Nano))
	}
	b = append(b, `},"cclab_reference_ns":`...)
	b = strconv.AppendInt(b, int64(q.ref), 10)
	b = append(b, `},"event_schemas":["urn:ietf:params:qlog:events:transport","urn:ietf:params:qlog:events:recovery","urn:cclab:qlog:events"]}}`+"\n"...)
	q.scratch = b
	if _, err := q.w.Write(b); err != nil {
		q.err = err
	}
}

// Flush writes buffered records to the destination.
func (q *Writer) Flush() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.err == nil {
		q.err = q.w.Flush()
	}
	return q.err
}

// Close writes the header if no event was recorded, flushes, and closes the
// destination if it is an io.Closer. Further Records are ignored.
func (q *Writer) Close() error {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return q.err
	}
	q.closed = true
	if !q.started && q.err == nil {
		q.writeHeader()
	}
	if q.err == nil {
		q.err = q.w.Flush()
	}
	if q.c != nil {
		if err := q.c.Close(); q.err == nil {
			q.err = err
		}
	}
	return q.err
}

// Authentication writes a connection's authentication account at t as a
// cclab:authentication record (perf writes it as a flow's qlog closes): the
// cipher and the packets the connection dropped failing authentication or
// as replays (transport.ConnStats.AuthFailed, Replayed).
func (q *Writer) Authentication(t clock.Time, cipher string, failed, replayed uint64) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !q.ready(t) {
		return
	}
	b := q.begin(q.scratch[:0], t, "cclab:authentication")
	b = appendStr(b, "cipher", cipher)
	b = appendUint(append(b, ','), "auth_failed", failed)
	b = appendUint(append(b, ','), "replayed", replayed)
	q.emit(end(b))
}
