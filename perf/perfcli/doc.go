// Package perfcli is the command line of cclab's live tools: the sender
// (like iperf3 -c: Sender) and the receiver (like iperf3 -s: Receiver),
// flags, text and JSON output. cmd/sender, cmd/receiver and cclab perf
// -c/-s call it, so one binary and the two separate tools take the same
// flags (docs/sender.md, docs/receiver.md).
package perfcli
