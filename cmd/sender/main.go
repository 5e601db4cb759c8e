// Command sender is cclab's bulk-transfer client (like iperf3 -c): it opens a
// connection to a cmd/receiver, sends a generated stream for -n bytes or -t
// seconds with the chosen congestion controller and loss-recovery strategy,
// and reports goodput, retransmissions, RTTs and whether the receiver's
// digest of the delivered stream equals the sender's. See docs/sender.md;
// cclab perf -c takes the same flags (package perf/perfcli).
//
// Exit status: 0 on a verified transfer, 1 when the receiver is unreachable,
// refuses, the transfer fails or verification fails, 2 on bad flags.
package main

import (
	"os"

	"cclab/perf/perfcli"
)

func main() {
	os.Exit(perfcli.Sender(os.Args[1:], os.Stdout, os.Stderr))
}
