package perfcli

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"cclab/internal/buildinfo"
	"cclab/internal/units"
	"cclab/perf"
)

// runDgram runs a datagram-mode test (-mode datagram).
func runDgram(cfg perf.DgramClientConfig, jsonOut bool, stdout, stderr io.Writer) int {
	if err := cfg.Validate(); err != nil {
		fmt.Fprintf(stderr, "sender: %v\n", err)
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if !jsonOut {
		rate := "greedy"
		if cfg.Rate > 0 {
			rate = units.FormatRate(cfg.Rate)
		}
		fmt.Fprintf(stdout, "cclab sender: datagram mode for %v to %s, cc=%s rate=%s\n", cfg.Duration, cfg.Addr, cfg.CC, rate)
	}
	host := perf.HostSince(hostVersion(), buildinfo.Read().System())
	res, err := perf.RunDgram(ctx, cfg)
	if jsonOut {
		if res != nil {
			writeJSON(stdout, perf.ToIperf3Dgram(res, host(), err))
		} else {
			writeJSON(stdout, jsonError{err.Error()})
		}
	} else if res != nil {
		fmt.Fprintf(stdout, "sent %d datagrams (%s, %.2f Mbit/s), queue-dropped %d, acked %d, declared lost %d, congestion events %d, RTOs %d, srtt %.2f ms\n",
			res.Sent, perf.FormatSize(int64(res.SentBytes)), res.SendRateBps/1e6, res.QueueDropped, res.Acked, res.LostDeclared, res.Congestion, res.RTOs, res.SRTTms)
		if r := res.Receiver; r != nil {
			fmt.Fprintf(stdout, "receiver: %d datagrams (%.2f Mbit/s), lost in the network %d, missing %d, one-way delay %.2f ms (min %.2f, max %.2f), jitter %.3f ms\n",
				r.Datagrams, r.ThroughputBps/1e6, r.LostNetwork, r.Missing, r.OWDms, r.OWDMinms, r.OWDMaxms, r.Jitterms)
		} else if res.ReceiverError != "" {
			fmt.Fprintf(stdout, "receiver report unavailable: %s\n", res.ReceiverError)
		}
		if p := res.PLPMTU; p != nil {
			fmt.Fprintf(stdout, "datagram size discovery: %d bytes (%s), %d probes, %d sizes given up, %d black holes\n", p.Size, p.State, p.Probes, p.ProbesLost, p.BlackHoles)
		}
		if res.Auth != nil {
			perf.WriteAuth(stdout, "", res.Auth)
		}
	}
	if res != nil {
		warnHost(stderr, res.Host)
	}
	if err != nil {
		fmt.Fprintf(stderr, "sender: %v\n", err)
		return 1
	}
	return 0
}
