package qdisc

import (
	"strings"
	"testing"
	"time"
)

func TestRegistryNames(t *testing.T) {
	want := []string{"codel", "csfq", "droptail", "drr", "fred", "red"}
	got := Registry.Names()
	if strings.Join(got, ",") != strings.Join(want, ",") {
		t.Errorf("registered disciplines got %v, want %v", got, want)
	}
}

// Every parameter parses into its field.
func TestSpecParse(t *testing.T) {
	env := Env{Rate: 10e6, MTU: 1000}
	tests := []struct {
		spec  string
		check func(Queue) bool
	}{
		{"droptail:limit=7p", func(q Queue) bool { return q.(*DropTail).cfg.Limit == Limit{Packets: 7} }},
		{"red:min=3,max=9,maxp=0.2,wq=0.01,limit=50p,gentle,ecn,bytes", func(q Queue) bool {
			r := q.(*RED)
			return r.minTh == 3000 && r.maxTh == 9000 && r.cfg.MaxP == 0.2 && r.cfg.Wq == 0.01 &&
				r.cfg.Limit == Limit{Packets: 50} && r.cfg.Gentle && r.cfg.ECN && r.cfg.Bytes && r.avg.txTime == 0.0008
		}},
		{"red", func(q Queue) bool {
			r := q.(*RED)
			return r.minTh == 5 && r.maxTh == 15 && r.cfg.MaxP == 0.1 && r.cfg.Wq == 0.002 &&
				r.cfg.Limit == Limit{Packets: 100} && !r.cfg.Gentle && !r.cfg.ECN && !r.cfg.Bytes
		}},
		{"red:min=5,max=15,maxp=0.1,wq=0.002,limit=100p,gentle,ecn,bytes", func(q Queue) bool {
			r := q.(*RED)
			return r.minTh == 5000 && r.maxTh == 15000 && r.cfg.Gentle && r.cfg.ECN && r.cfg.Bytes
		}},
		{"red:min=4500b,max=12kb", func(q Queue) bool { r := q.(*RED); return r.minTh == 4.5 && r.maxTh == 12 }},
		{"fred:min=4,max=8,maxp=0.05,wq=0.003,minq=4,limit=40,ecn", func(q Queue) bool {
			f := q.(*FRED)
			return f.cfg == FREDConfig{Min: 4, Max: 8, MaxP: 0.05, Wq: 0.003, MinQ: 4, Limit: Limit{Packets: 40}, ECN: true}
		}},
		{"fred", func(q Queue) bool { return q.(*FRED).cfg == DefaultFREDConfig() }},
		{"fred:limit=30p", func(q Queue) bool { return q.(*FRED).cfg.Limit == Limit{Packets: 30} }},
		{"drr:quantum=3000,limit=20kb", func(q Queue) bool {
			d := q.(*DRR)
			return d.quantum == 3000 && d.limit == Limit{Bytes: 20000}
		}},
		{"drr", func(q Queue) bool { d := q.(*DRR); return d.quantum == 1000 && d.limit == Limit{Packets: 100} }},
		{"csfq:k=50ms,kalpha=300ms,kc=150ms,limit=64kb,edge=false", func(q Queue) bool {
			c := q.(*CSFQ)
			return c.cfg == CSFQConfig{K: 50 * time.Millisecond, KAlpha: 300 * time.Millisecond,
				Kc: 150 * time.Millisecond, Limit: Limit{Bytes: 64000}} && c.c == 10e6
		}},
		{"csfq", func(q Queue) bool { return q.(*CSFQ).cfg == DefaultCSFQConfig() }},
		{"codel:target=2ms,interval=50ms,limit=200p,ecn", func(q Queue) bool {
			c := q.(*CoDel)
			return c.cfg == CoDelConfig{Target: 2 * time.Millisecond, Interval: 50 * time.Millisecond,
				Limit: Limit{Packets: 200}, ECN: true} && c.mtu == 1000
		}},
		{"codel", func(q Queue) bool { return q.(*CoDel).cfg == DefaultCoDelConfig() }},
	}
	for _, tt := range tests {
		q, err := New(tt.spec, env)
		if err != nil {
			t.Errorf("%s: got error %v, want none", tt.spec, err)
			continue
		}
		if !tt.check(q) {
			t.Errorf("%s: parsed config does not match the spec: %+v", tt.spec, q)
		}
	}
}

// Bad values give errors naming the field.
func TestSpecErrors(t *testing.T) {
	tests := []struct {
		spec  string
		env   Env
		field string // must appear in the error
	}{
		{"droptail:limit=0", Env{}, "limit"},
		{"droptail:limit=x", Env{}, "limit"},
		{"red:min=0", Env{}, "min"},
		{"red:min=abc", Env{}, "min"},
		{"red:max=-3", Env{}, "max"},
		{"red:min=10,max=5", Env{}, "max"},
		{"red:maxp=0", Env{}, "maxp"},
		{"red:maxp=1.5", Env{}, "maxp"},
		{"red:wq=1", Env{}, "wq"},
		{"red:wq=x", Env{}, "wq"},
		{"red:limit=-1p", Env{}, "limit"},
		{"red:gentle=maybe", Env{}, "gentle"},
		{"red:nosuch=1", Env{}, "nosuch"},
		{"fred:min=0", Env{}, "min"},
		{"fred:min=8,max=4", Env{}, "max"},
		{"fred:maxp=2", Env{}, "maxp"},
		{"fred:wq=0", Env{}, "wq"},
		{"fred:minq=-1", Env{}, "minq"},
		{"fred:limit=0", Env{}, "limit"},
		{"fred:limit=10kb", Env{}, "limit"},
		{"drr:quantum=-1", Env{}, "quantum"},
		{"drr:quantum=0", Env{}, "quantum"},
		{"drr:quantum=2000000", Env{}, "quantum"},
		{"drr:quantum=big", Env{}, "quantum"},
		{"drr:limit=0b", Env{}, "limit"},
		{"csfq:k=0s", Env{Rate: 1e6}, "k="},
		{"csfq:k=100", Env{Rate: 1e6}, "k="},
		{"csfq:kalpha=-1ms", Env{Rate: 1e6}, "kalpha"},
		{"csfq:kc=0s", Env{Rate: 1e6}, "kc"},
		{"csfq:edge=perhaps", Env{Rate: 1e6}, "edge"},
		{"csfq", Env{}, "Env.Rate"},
		{"codel:target=0s", Env{}, "target"},
		{"codel:interval=-5ms", Env{}, "interval"},
		{"codel:interval=5", Env{}, "interval"},
		{"codel:limit=zero", Env{}, "limit"},
	}
	for _, tt := range tests {
		_, err := New(tt.spec, tt.env)
		if err == nil {
			t.Errorf("%s: got no error, want one naming %q", tt.spec, tt.field)
			continue
		}
		if !strings.Contains(err.Error(), tt.field) {
			t.Errorf("%s: error got %q, want it to name %q", tt.spec, err, tt.field)
		}
	}
}

// TestEveryDisciplineBounded: every registered discipline's configuration
// reports its capacity (Bounded), with the limit its spec sets.
func TestEveryDisciplineBounded(t *testing.T) {
	for _, name := range Registry.Names() {
		_, cfg, err := Registry.Config(name)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if _, ok := cfg.(Bounded); !ok {
			t.Errorf("%s: configuration %T does not implement qdisc.Bounded", name, cfg)
			continue
		}
		_, cfg, err = Registry.Config(name + ":limit=37p")
		if err != nil {
			t.Fatalf("%s:limit=37p: %v", name, err)
		}
		if got := cfg.(Bounded).Capacity(); got.Packets != 37 {
			t.Errorf("%s:limit=37p: Capacity() = %+v, want 37 packets", name, got)
		}
	}
}
