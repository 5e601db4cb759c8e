package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"cclab/campaign"
	"cclab/scenario"
	"cclab/store"
)

func init() { campaignCommands["validate"] = runCampaignValidate }

// runCampaignValidate replays the campaign's measured paths (its profiles)
// for every variant measured on them and prints predicted against measured
// goodput, retransmissions and RTT (docs/campaigns.md, "Validate").
func runCampaignValidate(args []string) int {
	c := newCampaignFlags("validate")
	backends := c.backends
	sp, code, ok := c.parse(args)
	if !ok {
		return code
	}
	bs := strings.Split(*backends, ",")
	for _, b := range bs {
		if b != scenario.BackendSim && b != scenario.BackendLive {
			fmt.Fprintf(os.Stderr, "cclab campaign validate: -backends %s: unknown backend %q (allowed: sim, live)\n", *backends, b)
			return 2
		}
	}
	cst, err := c.open(sp, true)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab campaign validate:", err)
		return 1
	}
	defer cst.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	rows, err := cst.Transfers(ctx, sp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab campaign validate:", err)
		return 1
	}
	cs, stats, err := campaign.Validate(ctx, sp, rows, campaign.ValidateOptions{Store: cst.SQL, Runners: runners(), Backends: bs, Log: os.Stdout,
		IncludeHostLimited: *c.hostLimited, Alone: *c.alone})
	fmt.Printf("%s v%d: %d runs: %d done now, %d already done, %d failed (%.1fs); database %s\n", campaign.ValidationName(sp),
		stats.Version, stats.Total, stats.Ran, stats.Skipped, stats.Failed, stats.Duration.Seconds(), store.DBName(c.dbName(sp)))
	if errors.Is(err, context.Canceled) {
		fmt.Println("interrupted: completed runs are stored; run the same command again to resume")
		return 130
	}
	if err == nil {
		err = campaign.WriteComparisons(os.Stdout, cs)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab campaign validate:", err)
		return 1
	}
	if stats.Failed > 0 {
		return 1
	}
	return 0
}
