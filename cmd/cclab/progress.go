package main

import (
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

	"github.com/schollz/progressbar/v3"

	"cclab/eval"
	"cclab/scenario"
	"cclab/store"
)

// progressView shows a sweep's progress (eval.ProgressMeter): on a terminal
// a bar whose length is the expected wall time done, naming the phase, the
// run under way and the time left; otherwise one line per finished run.
type progressView struct {
	w     io.Writer
	meter *eval.ProgressMeter
	bar   *progressbar.ProgressBar // nil: line mode
	mu    sync.Mutex
	last  int    // bar position, permille (never moves back)
	phase string // backend of the last line-mode phase header
	stopc chan struct{}
	done  chan struct{}
	now   func() time.Time
}

func newProgressView(w io.Writer, meter *eval.ProgressMeter, bar bool) *progressView {
	v := &progressView{w: w, meter: meter, now: time.Now}
	if bar {
		v.bar = progressbar.NewOptions(1000, progressbar.OptionSetWriter(w), progressbar.OptionSetWidth(30),
			progressbar.OptionSetPredictTime(false), progressbar.OptionSetElapsedTime(false),
			progressbar.OptionShowDescriptionAtLineEnd(), progressbar.OptionClearOnFinish(),
			progressbar.OptionThrottle(100*time.Millisecond))
	}
	return v
}

// start updates the bar as time passes (a live run moves it while it runs).
func (v *progressView) start() {
	if v.bar == nil {
		return
	}
	v.stopc, v.done = make(chan struct{}), make(chan struct{})
	go func() {
		defer close(v.done)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-v.stopc:
				return
			case <-t.C:
				v.mu.Lock()
				v.render()
				v.mu.Unlock()
			}
		}
	}()
}

func (v *progressView) stop() {
	if v.bar == nil {
		return
	}
	close(v.stopc)
	<-v.done
	v.bar.Finish()
}

// event feeds the meter and updates the display.
func (v *progressView) event(ev eval.ProgressEvent) {
	v.meter.Observe(ev)
	v.mu.Lock()
	defer v.mu.Unlock()
	if v.bar != nil {
		if ev.Kind == eval.ProgressDone && ev.Status != store.StatusDone {
			v.bar.Clear()
			fmt.Fprintf(v.w, "FAILED %s %s seed %d: %s\n", ev.Spec.Backend, ev.Label, ev.Spec.Seed, ev.Error)
		}
		v.render()
		return
	}
	st := v.meter.State(v.now())
	switch ev.Kind {
	case eval.ProgressStart:
		if ev.Spec.Backend != v.phase {
			v.phase = ev.Spec.Backend
			how := "one at a time"
			if ev.Spec.Backend == scenario.BackendSim {
				how = "in parallel"
			}
			fmt.Fprintf(v.w, "%s: %d runs %s; about %s left in all\n", st.Phase, st.PhaseTotal, how, roundDur(st.Remaining))
		}
	case eval.ProgressDone:
		outcome := "done"
		if ev.Status != store.StatusDone {
			outcome = "FAILED (" + ev.Error + ")"
		}
		fmt.Fprintf(v.w, "[%*d/%d %3.0f%%] %s %s seed %d: %s in %s; %s elapsed, about %s left\n", len(fmt.Sprint(st.Total)), st.Done, st.Total, 100*st.Fraction,
			ev.Spec.Backend, ev.Label, ev.Spec.Seed, outcome, ev.Wall.Round(10*time.Millisecond), roundDur(st.Elapsed), roundDur(st.Remaining))
	}
}

// render sets the bar from the meter's state (with v.mu held).
func (v *progressView) render() {
	st := v.meter.State(v.now())
	if pos := int(st.Fraction * 1000); pos > v.last {
		v.last = pos
	}
	desc := fmt.Sprintf("%d/%d runs", st.Done, st.Total)
	if st.Phase != "" {
		desc = fmt.Sprintf("%s %d/%d · %d/%d runs", st.Phase, st.PhaseDone, st.PhaseTotal, st.Done, st.Total)
	}
	if len(st.Running) > 0 {
		desc += " · " + strings.TrimPrefix(st.Running[0], st.Phase+" ")
		if len(st.Running) > 1 {
			desc += fmt.Sprintf(" (+%d)", len(st.Running)-1)
		}
	}
	desc += " · " + roundDur(st.Remaining) + " left"
	v.bar.Describe(desc)
	v.bar.Set(v.last)
}

func roundDur(d time.Duration) string {
	if d < time.Second {
		return "<1s"
	}
	return d.Round(time.Second).String()
}
