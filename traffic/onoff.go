package traffic

import (
	"fmt"
	"math/rand/v2"

	"cclab/clock"
	"cclab/internal/spec"
)

// OnOffConfig configures an ON/OFF source over a reliable connection. An ON
// period is measured in time (On) or in bytes (Size); exactly one is set.
type OnOffConfig struct {
	On    DurationDist `param:"on" help:"ON period length distribution, e.g. exp(1s), pareto(1s/1.5)"`
	Size  SizeDist     `param:"size" help:"ON period as a transfer size distribution instead of a time, e.g. pareto(100kB/1.5), bytes"`
	Off   DurationDist `param:"off" help:"OFF period length distribution, e.g. exp(1s)"`
	Count int          `param:"count" help:"number of ON periods; 0 means unlimited"`
}

// OnOff alternates ON periods, during which the application offers unlimited
// data (or a drawn number of bytes), with OFF periods of silence. The run
// starts with an OFF period so that many sources do not start in step. Each
// call draws, in this order, one OFF period and one ON length.
type OnOff struct {
	cfg  OnOffConfig
	r    *rand.Rand
	name string
	n    int
}

// NewOnOff returns an ON/OFF generator drawing from r.
func NewOnOff(cfg OnOffConfig, r *rand.Rand) (*OnOff, error) {
	if cfg.On.IsZero() == cfg.Size.IsZero() {
		return nil, fmt.Errorf("onoff: give exactly one of on= (ON time) or size= (ON bytes)")
	}
	if cfg.Off.IsZero() {
		return nil, fmt.Errorf("onoff: off= is required")
	}
	return &OnOff{cfg: cfg, r: r, name: "onoff"}, nil
}

// Name returns the registry name.
func (o *OnOff) Name() string { return o.name }

// NextTransfer starts the next ON period an OFF period after now.
func (o *OnOff) NextTransfer(now clock.Time) (Transfer, bool) {
	if o.cfg.Count > 0 && o.n >= o.cfg.Count {
		return Transfer{}, false
	}
	o.n++
	idle := o.cfg.Off.Sample(o.r)
	t := Transfer{Start: now.Add(idle), Idle: idle}
	if !o.cfg.On.IsZero() {
		t.Duration = max(1, o.cfg.On.Sample(o.r))
	} else {
		t.Bytes = o.cfg.Size.Sample(o.r)
	}
	return t, true
}

// WebConfig configures web-like traffic.
type WebConfig struct {
	Size    SizeDist     `param:"size" help:"object (transfer) size distribution, bytes"`
	Think   DurationDist `param:"think" help:"idle (think) time between transfers"`
	Objects int          `param:"objects" help:"objects fetched back to back per page before a think time"`
	Count   int          `param:"count" help:"number of pages; 0 means unlimited"`
}

// Web is web-like traffic: pages of Objects transfers of heavy-tailed
// (Pareto) size fetched one after another, separated by think times (SURGE,
// Barford & Crovella 1998). Each object draws one size; each page draws one
// think time before its first object.
type Web struct {
	cfg   WebConfig
	r     *rand.Rand
	obj   int // objects fetched in the current page
	pages int // pages started
}

// NewWeb returns a web-like generator drawing from r.
func NewWeb(cfg WebConfig, r *rand.Rand) (*Web, error) {
	if cfg.Objects < 1 {
		return nil, fmt.Errorf("web: objects must be at least 1")
	}
	return &Web{cfg: cfg, r: r}, nil
}

// Name returns "web".
func (*Web) Name() string { return "web" }

// NextTransfer returns the next object: at once within a page, after a think
// time at the start of a page.
func (w *Web) NextTransfer(now clock.Time) (Transfer, bool) {
	t := Transfer{Start: now}
	if w.obj == 0 { // first object of a page
		if w.cfg.Count > 0 && w.pages >= w.cfg.Count {
			return Transfer{}, false
		}
		w.pages++
		t.Idle = w.cfg.Think.Sample(w.r)
		t.Start = now.Add(t.Idle)
	}
	t.Bytes = w.cfg.Size.Sample(w.r)
	if w.obj++; w.obj == w.cfg.Objects {
		w.obj = 0
	}
	return t, true
}

func init() {
	spec.Add(Registry, "onoff", "ON/OFF source: ON periods (time or bytes) of unlimited data separated by OFF periods",
		func() OnOffConfig {
			var c OnOffConfig
			_ = c.Off.UnmarshalText([]byte("exp(1s)"))
			return c
		},
		func(c OnOffConfig, env Env) (Generator, error) {
			if c.On.IsZero() && c.Size.IsZero() {
				_ = c.On.UnmarshalText([]byte("exp(1s)")) // default ON period
			}
			return NewOnOff(c, env.rand())
		})
	spec.Add(Registry, "web", "web-like: pages of Pareto-sized objects separated by think times",
		func() WebConfig {
			c := WebConfig{Objects: 1}
			// Mean object size 12 kB and shape 1.2 after SURGE (Barford & Crovella 1998).
			_ = c.Size.UnmarshalText([]byte("pareto(12kB/1.2)"))
			_ = c.Think.UnmarshalText([]byte("exp(5s)"))
			return c
		},
		func(c WebConfig, env Env) (Generator, error) { return NewWeb(c, env.rand()) })
}
