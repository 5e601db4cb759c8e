package perfcli

import (
	"fmt"
	"io"

	"cclab/perf"
)

// writeDgramSummary prints a datagram-mode flow's line: delivered, lost in
// the network, missing (network loss plus the sender's queue drops),
// one-way delay and RFC 3550 jitter.
func writeDgramSummary(w io.Writer, s perf.FlowSummary) {
	d := s.Dgram
	fmt.Fprintf(w, "[%s] %s datagram flow: %d datagrams (%s) in %.3fs = %.2f Mbit/s, lost in the network %d, missing %d, receive-queue drops %d, CE %d, owd %.2f ms (min %.2f, max %.2f), jitter %.3f ms, ack ratio %d\n",
		s.ConnID, s.Peer, d.Datagrams, perf.FormatSize(int64(d.Bytes)), d.Seconds, d.ThroughputBps/1e6, d.LostNetwork, d.Missing,
		d.RecvDropped, d.CEMarked, d.OWDms, d.OWDMinms, d.OWDMaxms, d.Jitterms, d.PeerAckRatio)
	perf.WriteAuth(w, fmt.Sprintf("[%s] ", s.ConnID), s.Auth)
	perf.WriteEndpoint(w, fmt.Sprintf("[%s] ", s.ConnID), s.Endpoint)
}
