package main

import (
	"fmt"
	"io"
	"os"
	"strings"

	"cclab/internal/buildinfo"
	"cclab/perf/perfcli"
)

func init() {
	register("perf", "iperf3-style transfers in one binary: perf -s (the receiver's flags) or perf -c HOST (the sender's); docs/sender.md", func(args []string) int {
		return runPerf(args, os.Stdout, os.Stderr)
	})
}

// runPerf runs the receiver with -s/--server or the sender with
// -c/--client HOST, each with all its flags, as iperf3 does in one binary.
func runPerf(args []string, stdout, stderr io.Writer) int {
	server, client, version := perfMode(args)
	switch {
	case server && client:
		fmt.Fprintln(stderr, "cclab perf: -s and -c: want one of them (-s: receiver, -c HOST: sender)")
		return 2
	case server:
		return perfcli.Receiver(args, stdout, stderr, nil)
	case client:
		return perfcli.Sender(args, stdout, stderr)
	case version:
		fmt.Fprintln(stdout, buildinfo.Read().Line("cclab perf"))
		return 0
	}
	fmt.Fprintln(stderr, "usage: cclab perf -s [receiver flags] | cclab perf -c HOST[:PORT] [sender flags]\n\n"+
		"-s runs the receiver (flags: receiver -h, docs/receiver.md), -c the sender (sender -h, docs/sender.md).")
	return 2
}

// perfMode reports which of -s/--server, -c/--client and -v/--version
// args holds (before a "--").
func perfMode(args []string) (server, client, version bool) {
	for _, a := range args {
		if a == "--" {
			break
		}
		if !strings.HasPrefix(a, "-") {
			continue
		}
		name, _, _ := strings.Cut(strings.TrimLeft(a, "-"), "=")
		switch name {
		case "s", "server":
			server = true
		case "c", "client":
			client = true
		case "v", "version":
			version = true
		}
	}
	return server, client, version
}
