package ccalgo

import (
	"math/rand/v2"
	"os"
	"strings"
	"testing"
	"time"

	"cclab/clock"
	"cclab/internal/spec"
)

var allControllers = []string{"bbr", "cubic", "dca", "newreno", "probe", "reno", "vegas"}

func TestRegistryNames(t *testing.T) {
	if got, want := strings.Join(Registry.Names(), ","), strings.Join(allControllers, ","); got != want {
		t.Errorf("registered: got %s, want %s", got, want)
	}
	_, err := New("nosuch", Env{MSS: testMSS})
	if err == nil {
		t.Fatal("New(nosuch): got nil error")
	}
	for _, n := range allControllers {
		if !strings.Contains(err.Error(), n) {
			t.Errorf("unknown-name error %q does not list %q", err, n)
		}
	}
	for _, n := range allControllers {
		e, _ := Registry.Lookup(n)
		if e.Doc == "" {
			t.Errorf("%s: empty Doc", n)
		}
		for _, p := range spec.Params(e.Defaults()) {
			if p.Help == "" {
				t.Errorf("%s: parameter %s has no help", n, p.Key)
			}
		}
		c, err := New(n, Env{MSS: testMSS})
		if err != nil {
			t.Fatalf("New(%s): %v", n, err)
		}
		if c.Name() != n {
			t.Errorf("Name: got %q, want %q", c.Name(), n)
		}
		if _, err := New(n+":iw=x", Env{MSS: testMSS}); err == nil || !strings.Contains(err.Error(), "iw") {
			t.Errorf("%s:iw=x: got %v, want an error naming iw", n, err)
		}
	}
}

// TestDocsListParameters checks docs/controllers.md names every controller
// and every parameter with its default.
func TestDocsListParameters(t *testing.T) {
	b, err := os.ReadFile("../docs/controllers.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	for _, n := range Registry.Names() {
		if !strings.Contains(doc, "`"+n+"`") {
			t.Errorf("docs/controllers.md does not mention `%s`", n)
		}
		e, _ := Registry.Lookup(n)
		for _, p := range spec.Params(e.Defaults()) {
			if !strings.Contains(doc, "`"+p.Key+"`") {
				t.Errorf("docs/controllers.md does not document %s parameter `%s`", n, p.Key)
			}
		}
	}
}

// run drives c with a seeded random sequence of ACKs, losses, ECN and
// timeouts, checking invariants after every call, and returns the cwnd trace.
func run(t *testing.T, c Controller, seed uint64, steps int) []int {
	rng := rand.New(rand.NewPCG(seed, 7))
	now := clock.Start
	var cum, sndNxt uint64
	inRec := false
	var trace []int
	for i := range steps {
		now = now.Add(time.Duration(rng.IntN(5000)+1) * time.Microsecond)
		flight := max(0, min(c.Cwnd(), int(sndNxt-cum)))
		switch r := rng.IntN(100); {
		case r < 2 && !inRec:
			c.OnCongestion(Congestion{Now: now, Kind: Loss, InFlight: flight, SndNxt: sndNxt})
			inRec = true
		case r < 4 && inRec:
			c.OnRecoveryExit(now, flight)
			inRec = false
		case r < 5:
			c.OnCongestion(Congestion{Now: now, Kind: ECN, InFlight: flight, SndNxt: sndNxt})
		case r < 6:
			c.OnRTO(now, flight)
			inRec = false
		default:
			sndNxt = max(sndNxt, cum+uint64(c.Cwnd()))
			c.OnSent(now, testMSS, flight)
			acked := (rng.IntN(3) + 1) * testMSS
			cum = min(cum+uint64(acked), sndNxt)
			rtt := 20*time.Millisecond + time.Duration(rng.IntN(30000))*time.Microsecond
			c.OnAck(Ack{Now: now, Acked: acked, AckedPackets: acked / testMSS, RTT: rtt, SRTT: rtt,
				MinRTT: 20 * time.Millisecond, InFlight: flight, CumAck: cum, SndNxt: sndNxt,
				InRecovery: inRec, AppLimited: rng.IntN(20) == 0})
		}
		if c.Cwnd() < testMSS || c.Ssthresh() < 2*testMSS {
			t.Fatalf("%s seed %d step %d: cwnd %d, ssthresh %d below 1/2 SMSS", c.Name(), seed, i, c.Cwnd(), c.Ssthresh())
		}
		if c.Cwnd() > 1<<30 {
			t.Fatalf("%s seed %d step %d: cwnd %d exploded", c.Name(), seed, i, c.Cwnd())
		}
		st := c.State()
		if st.Cwnd != c.Cwnd() || st.Ssthresh != c.Ssthresh() || st.Phase == "" {
			t.Fatalf("%s: State %+v disagrees with Cwnd %d / Ssthresh %d", c.Name(), st, c.Cwnd(), c.Ssthresh())
		}
		trace = append(trace, c.Cwnd())
	}
	return trace
}

// TestControllersInvariants runs every controller (and a few parameter
// sets) through random event sequences: no panic, cwnd >= 1 SMSS,
// ssthresh >= 2 SMSS, State consistent, and the same seed gives the same
// trajectory.
func TestControllersInvariants(t *testing.T) {
	specs := []string{"reno", "newreno", "reno:abc=1,iw=2", "dca", "dca:x=6,w=20,reduction=0.25,decision=rtt",
		"dca:x=2,w=200,reduction=0.125,decision=2rtt", "vegas", "vegas:alpha=1,beta=3,rtt=mean,finegrained",
		"cubic", "cubic:fastconv=false,friendly=false,beta=0.5"}
	steps := 20000
	if testing.Short() {
		steps = 3000
	}
	for _, s := range specs {
		for seed := uint64(1); seed <= 3; seed++ {
			a, _ := New(s, Env{MSS: testMSS})
			b, _ := New(s, Env{MSS: testMSS})
			ta, tb := run(t, a, seed, steps), run(t, b, seed, steps)
			for i := range ta {
				if ta[i] != tb[i] {
					t.Fatalf("%s seed %d: not deterministic at step %d: %d vs %d", s, seed, i, ta[i], tb[i])
				}
			}
		}
	}
}

// BenchmarkOnAck measures the per-ACK cost of each controller (steady state,
// congestion avoidance) and shows it allocates nothing.
func BenchmarkOnAck(b *testing.B) {
	for _, n := range allControllers {
		b.Run(n, func(b *testing.B) {
			c, _ := New(n+":ssthresh=10", Env{MSS: testMSS})
			now := clock.Start
			var cum uint64
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				now = now.Add(100 * time.Microsecond)
				cum += testMSS
				c.OnAck(Ack{Now: now, Acked: testMSS, AckedPackets: 1, RTT: ms(50 + float64(i%5)), SRTT: ms(52),
					CumAck: cum, SndNxt: cum + uint64(c.Cwnd())})
				if i%100000 == 99999 {
					c.OnCongestion(Congestion{Now: now, Kind: Loss, InFlight: c.Cwnd()})
					c.OnRecoveryExit(now, c.Cwnd())
				}
			}
		})
	}
}
