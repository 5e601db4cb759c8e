package main

import (
	"fmt"
	"strings"
)

func init() { campaignCommands["relays"] = runCampaignRelays }

// runCampaignRelays prints the command line of each of the spec's relays
// (docs/campaigns.md, "Relays"): bottleneck with the relay's link in both
// directions, to run on the relay's host.
func runCampaignRelays(args []string) int {
	c := newCampaignFlags("relays")
	sp, code, ok := c.parse(args)
	if !ok {
		return code
	}
	if len(sp.Relays) == 0 {
		fmt.Printf("campaign %s has no relays\n", sp.Name)
		return 0
	}
	for _, r := range sp.Relays {
		var pairs []string
		for _, p := range sp.Pairs {
			if sp.Via[p] == r.Name {
				pairs = append(pairs, p.String())
			}
		}
		fmt.Printf("# relay %s, for %s\nbottleneck %s\n", r.Name, strings.Join(pairs, ", "), strings.Join(r.BottleneckArgs(sp.Target(r)), " "))
	}
	return 0
}
