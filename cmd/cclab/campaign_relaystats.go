package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"

	"cclab/campaign"
	"cclab/store"
)

// runCampaignRelayStats stores a relay's host-limit intervals (the host
// blocks of its -stats lines) under the links of the spec's routes its
// directions emulate (docs/campaigns.md, "Relays whose host could not
// keep up").
func runCampaignRelayStats(args []string) int {
	c := newCampaignFlags("relay-stats")
	file, fwd, rev := c.stats, c.fwd, c.rev
	sp, code, ok := c.parse(args)
	if !ok {
		return code
	}
	if *rev == "" && strings.HasPrefix(*fwd, "relay ") {
		*rev = *fwd
	}
	if msg := relayStatsArgs(sp, *file, *fwd, *rev); msg != "" {
		fmt.Fprintf(os.Stderr, "%s: %s\n", c.fs.Name(), msg)
		return 2
	}
	var in io.Reader = os.Stdin
	if *file != "-" {
		f, err := os.Open(*file)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", c.fs.Name(), err)
			return 1
		}
		defer f.Close()
		in = f
	}
	ivs, skipped, err := campaign.DecodeRelayStats(in, campaign.RelayLinks{Fwd: *fwd, Rev: *rev})
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %s: %v\n", c.fs.Name(), *file, err)
		return 1
	}
	st, err := c.open(sp, false)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", c.fs.Name(), err)
		return 1
	}
	defer st.Close()
	added, err := st.SaveRelayIntervals(context.Background(), sp.Name, ivs)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", c.fs.Name(), err)
		return 1
	}
	limited := 0
	for _, iv := range ivs {
		if len(iv.Host.Reasons()) > 0 {
			limited++
		}
	}
	fmt.Printf("campaign %s: %d relay intervals read (%d host-limited), %d new stored, %d lines without a host block; database %s\n",
		sp.Name, len(ivs), limited, added, skipped, store.DBName(c.dbName(sp)))
	return 0
}

// relayStatsArgs checks relay-stats' flags: a file, and links of the
// spec's routes; the problem, "" if none.
func relayStatsArgs(sp *campaign.Spec, file, fwd, rev string) string {
	if file == "" {
		return "-stats FILE is required (the relay's -stats output)"
	}
	links := sp.RouteLinks()
	for _, l := range []string{fwd, rev} {
		if l == "" && l == fwd {
			return fmt.Sprintf("-fwd LINK is required (the spec's links: %q)", links)
		}
		if l != "" && !slices.Contains(links, l) {
			return fmt.Sprintf("link %q is on no route of the spec (its links: %q)", l, links)
		}
	}
	return ""
}
