package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sync"
	"syscall"
	"time"

	"github.com/schollz/progressbar/v3"
	"golang.org/x/term"

	"cclab/agent"
	"cclab/campaign"
	"cclab/store"
)

func init() { campaignCommands["run"] = runCampaignRun }

// newCampaignRunner returns the agent runner with the spec's credentials.
func newCampaignRunner(sp *campaign.Spec) (campaign.Runner, func(), error) {
	c := sp.Credentials
	creds, err := agent.LoadCredentials(c.PSK, c.Identity, c.AuthorizedKeys)
	if err != nil {
		return nil, nil, err
	}
	r := campaign.NewAgentRunner(creds)
	return r, func() { r.Close() }, nil
}

// campaignProgress shows a campaign's progress on stderr: a bar on a
// terminal (transfers finished of those to run, the ones under way),
// otherwise one line per finished attempt.
type campaignProgress struct {
	w     io.Writer
	isBar bool                     // bar mode (a terminal)
	bar   *progressbar.ProgressBar // made at the first event, when the count to run is known
	mu    sync.Mutex
	start time.Time
}

func newCampaignProgress(w io.Writer, bar bool) *campaignProgress {
	return &campaignProgress{w: w, isBar: bar, start: time.Now()}
}

func (p *campaignProgress) event(ev campaign.Event) {
	p.mu.Lock()
	defer p.mu.Unlock()
	c := ev.Counts
	todo := c.Total - c.Skipped
	finished := c.Done + c.Failed
	outcome := ""
	if ev.Kind == campaign.EventDone {
		outcome = "done"
		if ev.Status != campaign.StatusDone {
			outcome = fmt.Sprintf("FAILED (%v)", ev.Err)
			if ev.Retry {
				outcome += ", will retry"
			}
		}
	}
	if p.isBar {
		if p.bar == nil {
			p.bar = progressbar.NewOptions(todo, progressbar.OptionSetWriter(p.w), progressbar.OptionSetWidth(30),
				progressbar.OptionShowCount(), progressbar.OptionShowDescriptionAtLineEnd(), progressbar.OptionClearOnFinish(),
				progressbar.OptionThrottle(100*time.Millisecond))
		}
		if ev.Kind == campaign.EventDone && ev.Status != campaign.StatusDone {
			p.bar.Clear()
			fmt.Fprintf(p.w, "%s attempt %d: %s\n", ev.Item.ID(), ev.Attempt, outcome)
		}
		p.bar.Describe(fmt.Sprintf("%d running · %s", ev.Running, ev.Item.ID()))
		p.bar.Set(finished)
		return
	}
	if ev.Kind == campaign.EventDone {
		fmt.Fprintf(p.w, "[%d/%d] %s attempt %d: %s in %s; %s elapsed\n", finished, todo, ev.Item.ID(), ev.Attempt, outcome,
			ev.Wall.Round(10*time.Millisecond), roundDur(time.Since(p.start)))
	}
}

func (p *campaignProgress) stop() {
	if p.bar != nil {
		p.bar.Finish()
	}
}

func runCampaignRun(args []string) int {
	c := newCampaignFlags("run")
	verbose, planOnly := c.verbose, c.plan
	sp, code, ok := c.parse(args)
	if !ok {
		return code
	}
	if *planOnly {
		for _, it := range sp.Plan() {
			fmt.Printf("%d %s %s %s/%s\n", it.Seq, it.ID(), it.Pair, it.Variant.CC, it.Variant.Recovery)
		}
		return 0
	}
	runner, closeRunner, err := newCampaignRunner(sp)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab campaign run: credentials:", err)
		return 2
	}
	defer closeRunner()
	st, err := c.open(sp, false)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab campaign run:", err)
		return 1
	}
	defer st.Close()
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	view := newCampaignProgress(os.Stderr, term.IsTerminal(int(os.Stderr.Fd())) && !*verbose)
	s := &campaign.Scheduler{Spec: sp, Store: st, Runner: runner, Progress: view.event,
		Log: func(format string, args ...any) { fmt.Printf(format+"\n", args...) }}
	t0 := time.Now()
	counts, err := s.Run(ctx)
	view.stop()
	if leased := (*campaign.LeasedError)(nil); errors.As(err, &leased) {
		fmt.Fprintln(os.Stderr, "cclab campaign run:", err)
		return 1
	}
	fmt.Printf("campaign %s (spec digest %s): %s (%s); database %s\n",
		sp.Name, sp.Digest(), counts.Summary(), roundDur(time.Since(t0)), store.DBName(c.dbName(sp)))
	switch {
	case errors.Is(err, context.Canceled):
		fmt.Println("interrupted: finished transfers are stored; run the same command again to resume")
		return 130
	case errors.Is(err, campaign.ErrMaxLength):
		fmt.Println(err)
		return 1
	case err != nil:
		fmt.Fprintln(os.Stderr, "cclab campaign run:", err)
		return 1
	}
	if counts.Done+counts.Skipped < counts.Total {
		fmt.Printf("%d transfers not done: cclab campaign status %s shows them; run again to retry\n", counts.Total-counts.Done-counts.Skipped, sp.File)
		return 1
	}
	return 0
}
