// Command receiver is cclab's bulk-transfer server (like iperf3 -s): it
// accepts many concurrent flows from cmd/sender, reads each stream to its end,
// reports the stream's SHA-256 digest back so the sender can verify the
// transfer, and prints interval reports and a summary line (or a JSON
// object with -J) per flow. With -allow-reverse it also serves reverse (-R)
// requests by sending. See docs/receiver.md; cclab perf -s takes the same
// flags (package perf/perfcli).
package main

import (
	"os"

	"cclab/perf/perfcli"
)

func main() {
	os.Exit(perfcli.Receiver(os.Args[1:], os.Stdout, os.Stderr, nil))
}
