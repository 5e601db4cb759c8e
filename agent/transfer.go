package agent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strconv"
	"strings"
	"time"
	"unicode"

	"cclab/ccalgo"
	"cclab/perf"
	"cclab/transport"
)

// TransferSpec is one transfer between two agents.
type TransferSpec struct {
	ID           string  `json:"id"`                     // unique, chosen by the scheduler (e.g. campaign/round/seq); echoed in results and logs
	ReceiverHost string  `json:"receiver_host"`          // address the sender's agent uses to reach the receiving agent's data port: "host" (the port the receiving agent reports is added) or "host:port" (used as is, e.g. a NAT's forwarded port)
	CC           string  `json:"cc,omitempty"`           // controller spec as the sender's -cc takes it ("": transport.DefaultCC)
	Recovery     string  `json:"recovery,omitempty"`     // recovery spec as the sender's -recovery takes it ("": transport.DefaultRecovery)
	Bytes        int64   `json:"bytes,omitempty"`        // bytes to send, or
	Seconds      float64 `json:"seconds,omitempty"`      // seconds to send (exactly one of Bytes and Seconds is set)
	MaxDatagram  int     `json:"max_datagram,omitempty"` // largest UDP payload, bytes (sender -size); 0 = the transport's default
	Qlog         bool    `json:"qlog,omitempty"`         // return both qlogs
}

// TransferResult is what both ends reported.
type TransferResult struct {
	ID           string          // the spec's ID
	Sender       *perf.Result    // the sender's JSON summary (as `sender -J`)
	Receiver     json.RawMessage // the receiver's JSON summary for this transfer (perf.FlowSummary, as `receiver -J`)
	ClockOffset  time.Duration   // receiving host's clock minus sending host's clock
	OffsetRTT    time.Duration   // the RTT of the samples the offset came from (its error bound is RTT/2): the sum of the two agents' sample RTTs
	SenderQlog   []byte          // with Qlog (at most the sending agent's -qlog-max, cut at a record boundary)
	ReceiverQlog []byte          // with Qlog (at most the receiving agent's -qlog-max)
}

// Spec bounds.
const (
	maxSpecID        = 128  // characters
	MaxSpecSeconds   = 3600 // longest transfer any agent runs, seconds (an agent's -max-seconds is at most this)
	maxSpecComponent = 256  // characters of ReceiverHost, CC, Recovery
)

// check checks the spec's shape (field presence and ranges), not its
// controller and recovery names; the decoder runs it on every message.
func (s *TransferSpec) check() error {
	switch {
	case s.ID == "" || len(s.ID) > maxSpecID || strings.ContainsFunc(s.ID, func(r rune) bool { return !unicode.IsPrint(r) }):
		return fmt.Errorf("id %q: want 1..%d printable characters", s.ID, maxSpecID)
	case s.ReceiverHost == "" || len(s.ReceiverHost) > maxSpecComponent:
		return fmt.Errorf("receiver_host %q: want a host or host:port of at most %d characters", s.ReceiverHost, maxSpecComponent)
	case len(s.CC) > maxSpecComponent || len(s.Recovery) > maxSpecComponent:
		return fmt.Errorf("cc or recovery longer than %d characters", maxSpecComponent)
	case s.Bytes < 0:
		return fmt.Errorf("bytes %d: must not be negative", s.Bytes)
	case !(s.Seconds >= 0 && s.Seconds <= MaxSpecSeconds):
		return fmt.Errorf("seconds %g: must be between 0 and %d", s.Seconds, MaxSpecSeconds)
	case (s.Bytes > 0) == (s.Seconds > 0):
		return fmt.Errorf("bytes %d, seconds %g: give exactly one of them", s.Bytes, s.Seconds)
	case s.MaxDatagram != 0 && (s.MaxDatagram < transport.MinDatagram || s.MaxDatagram > perf.MaxSize):
		return fmt.Errorf("max_datagram %d: must be between %d and %d bytes (0: the default %d)", s.MaxDatagram, transport.MinDatagram, perf.MaxSize, transport.DefaultMaxDatagram)
	}
	return nil
}

// Validate checks the spec: its fields' ranges and its controller and
// recovery specs with the parsers the sender uses (ccalgo.Registry,
// transport.Recoveries). RunTransfer and both agents call it before anything
// runs.
func (s *TransferSpec) Validate() error {
	if err := s.check(); err != nil {
		return fmt.Errorf("transfer %q: %v", s.ID, err)
	}
	cc, rec := s.ccRecovery()
	if err := ccalgo.Registry.Validate(cc); err != nil {
		return fmt.Errorf("transfer %q: cc %q: %v (registered controllers: %s)", s.ID, cc, err, strings.Join(ccalgo.Registry.Names(), ", "))
	}
	if err := transport.Recoveries.Validate(rec); err != nil {
		return fmt.Errorf("transfer %q: recovery %q: %v (registered strategies: %s)", s.ID, rec, err, strings.Join(transport.Recoveries.Names(), ", "))
	}
	return nil
}

// ccRecovery returns the controller and recovery specs with the defaults
// filled in.
func (s *TransferSpec) ccRecovery() (cc, rec string) {
	cc, rec = s.CC, s.Recovery
	if cc == "" {
		cc = transport.DefaultCC
	}
	if rec == "" {
		rec = transport.DefaultRecovery
	}
	return cc, rec
}

// probeRate is the rate of a path probe's spec (cc probe: its rate
// parameter, the most it paces at), bits/s; 0 for any other controller.
// The spec has been validated.
func (s *TransferSpec) probeRate() float64 {
	cc, _ := s.ccRecovery()
	c, err := ccalgo.New(cc, ccalgo.ProbeEnv())
	if p, ok := c.(*ccalgo.Probe); ok && err == nil {
		return p.PacingRate() // its rate until the first ACK, and its most
	}
	return 0
}

// duration is the transfer's requested length (0 for a bytes transfer).
func (s *TransferSpec) duration() time.Duration {
	return time.Duration(s.Seconds * float64(time.Second))
}

// dataAddr returns the address the sender dials: ReceiverHost, with port
// added when it has none.
func dataAddr(host string, port int) string {
	if _, _, err := net.SplitHostPort(host); err == nil {
		return host
	}
	return net.JoinHostPort(strings.Trim(host, "[]"), strconv.Itoa(port))
}

// offsetSamples is how many time exchanges RunTransfer makes with each
// agent; the offset comes from the one with the smallest RTT.
const offsetSamples = 8

// RunTransfer asks recv to accept one transfer and send to run it, and
// returns both summaries. The spec is validated before either agent is
// asked. It measures both agents' clock offsets from the caller first
// (ClockOffset, offsetSamples exchanges each): the result's ClockOffset is
// offset(recv) − offset(send), bounded by OffsetRTT/2.
//
// On an error the result, when not nil, holds what was learnt (e.g. the
// sender's summary of a failed transfer). Cancelling ctx cancels the
// requests at both agents, which abort the transfer.
func RunTransfer(ctx context.Context, send, recv *Client, spec TransferSpec) (*TransferResult, error) {
	if err := spec.Validate(); err != nil {
		return nil, err
	}
	res := &TransferResult{ID: spec.ID}
	offR, rttR, err := recv.ClockOffset(ctx, offsetSamples)
	if err != nil {
		return nil, fmt.Errorf("transfer %q: clock offset of the receiving agent %s: %w", spec.ID, recv.addr, err)
	}
	offS, rttS, err := send.ClockOffset(ctx, offsetSamples)
	if err != nil {
		return nil, fmt.Errorf("transfer %q: clock offset of the sending agent %s: %w", spec.ID, send.addr, err)
	}
	res.ClockOffset, res.OffsetRTT = offR-offS, rttR+rttS

	ready, err := recv.call(ctx, &message{Type: tReceive, Spec: &spec})
	if err != nil {
		return nil, fmt.Errorf("transfer %q: receiving agent %s: %w", spec.ID, recv.addr, err)
	}
	// The receiving agent reports the flow once it has ended; the request
	// runs beside the sender's and is cancelled if the sender fails first
	// and the flow never arrives.
	cctx, cancel := context.WithCancel(ctx)
	defer cancel()
	type collected struct {
		m   *message
		err error
	}
	col := make(chan collected, 1)
	go func() {
		m, err := recv.call(cctx, &message{Type: tCollect, Token: ready.Token})
		col <- collected{m, err}
	}()
	sent, serr := send.call(ctx, &message{Type: tSend, Spec: &spec, Token: ready.Token, Addr: dataAddr(spec.ReceiverHost, ready.DataPort)})
	if sent != nil {
		res.Sender, res.SenderQlog = sent.Sender, sent.Qlog
	}
	var re *RemoteError
	if serr != nil && !(errors.As(serr, &re) && res.Sender != nil) {
		// The sender never ran the flow (refused, unreachable, cancelled):
		// the receiving agent's wait is cancelled.
		cancel()
	}
	c := <-col
	if c.m != nil {
		res.Receiver, res.ReceiverQlog = c.m.Receiver, c.m.Qlog
	}
	switch {
	case serr != nil:
		return res, fmt.Errorf("transfer %q: sending agent %s: %w", spec.ID, send.addr, serr)
	case c.err != nil:
		return res, fmt.Errorf("transfer %q: receiving agent %s: %w", spec.ID, recv.addr, c.err)
	}
	if err := crossCheck(res); err != nil {
		return res, fmt.Errorf("transfer %q: %w", spec.ID, err)
	}
	return res, nil
}

// ErrDataPath is wrapped by RunTransfer's error when the receiving agent's
// summary, which came over its authenticated control connection, does not
// match what the sender sent: the sender's verification relied on the
// receiver's report over the (unauthenticated) data path.
var ErrDataPath = errors.New("the receiving agent's summary does not match the sender's")

// crossCheck compares the receiving agent's summary (digest and bytes of
// the stream it received) with the sender's account of what it sent.
func crossCheck(res *TransferResult) error {
	if res.Sender == nil {
		return fmt.Errorf("%w: no sender summary", ErrDataPath)
	}
	var sum perf.FlowSummary
	if err := json.Unmarshal(res.Receiver, &sum); err != nil {
		return fmt.Errorf("%w: summary %.80q: %v", ErrDataPath, res.Receiver, err)
	}
	e := res.Sender.End
	if sum.Digest != e.SenderDigest || sum.Bytes != e.SenderBytes {
		return fmt.Errorf("%w: received %d bytes with digest %.16s, sent %d with %.16s (the data path was altered)",
			ErrDataPath, sum.Bytes, sum.Digest, e.SenderBytes, e.SenderDigest)
	}
	return nil
}
