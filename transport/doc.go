// Package transport is cclab's sans-I/O reliable stream transport (docs/transport.md,
// docs/architecture.md): a TCP-like byte stream over datagrams with connection IDs, address
// validation, cumulative ACKs with SACK blocks and echoed timestamps, delayed
// ACKs, RFC 6298 retransmission timers, flow control, orderly close and ECN,
// with congestion control delegated to a ccalgo.Controller and loss recovery
// delegated to a pluggable Recovery strategy (recovery.go).
//
// Nothing here reads a clock, sleeps, starts a goroutine or touches a socket:
// drivers pass time in (clock.Time), feed received datagrams to
// Endpoint.Receive, pull datagrams to send from Endpoint.Transmit and call
// Endpoint.OnDeadline when Endpoint.Deadline is reached. See docs/transport.md
// for the driver contract and docs/wire.md for the wire format.
//
// Units: stream offsets and windows in bytes, times as clock.Time /
// time.Duration.
package transport
