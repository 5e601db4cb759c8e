package perf

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"cclab/internal/cli"
	"cclab/internal/units"
	"cclab/transport"
)

// ReceiveFlags registers the receiving side's transport settings on fs,
// each range-checked when parsed (so a bad value exits 2 naming the flag):
// -ack-every N and -delayed-ack D (the delayed-ACK policy, RFC 5681 §4.2)
// into cfg.AckEvery and cfg.DelayedAck, and the receive window (flag name
// window, bytes with units) into cfg.RecvWindow, which must hold two
// datagrams of maxDatagram bytes. Unset flags leave cfg's fields alone.
func ReceiveFlags(fs *flag.FlagSet, cfg *transport.Config, window string, maxDatagram int) {
	fs.Var(cli.Value[int]{P: &cfg.AckEvery, Format: strconv.Itoa, Parse: func(s string) (int, error) {
		n, err := strconv.Atoi(s)
		if err == nil {
			err = transport.CheckAckEvery(n)
		}
		return n, err
	}}, "ack-every", fmt.Sprintf("receiving side: ACK at once after N full-sized segments, 1..%d (default %d, RFC 5681 §4.2; above 2: stretch ACKs)",
		transport.MaxAckEvery, transport.DefaultAckEvery))
	fs.Var(cli.Value[time.Duration]{P: &cfg.DelayedAck, Format: time.Duration.String, Parse: func(s string) (time.Duration, error) {
		d, err := units.ParseDuration(s)
		if err == nil {
			err = transport.CheckDelayedAck(d)
		}
		return transport.UserDelayedAck(d), err
	}}, "delayed-ack", fmt.Sprintf("receiving side: longest an ACK is delayed, below %v (default %v as Linux; ns-3 200ms); 0: ACK every segment at once",
		transport.MaxDelayedAck, transport.DefaultDelayedAck))
	fs.Var(cli.Value[int]{P: &cfg.RecvWindow, Format: func(n int) string { return units.FormatBytes(int64(n)) }, Parse: func(s string) (int, error) {
		n, err := units.ParseBytes(s)
		if err == nil {
			err = transport.CheckRecvWindow(int(min(n, transport.MaxRecvWindow+1)), maxDatagram)
		}
		return int(n), err
	}}, window, fmt.Sprintf("receiving side: receive window advertised to the sender (flow control), bytes with units, up to 1GiB (default %s)",
		units.FormatBytes(transport.DefaultRecvWindow)))
}
