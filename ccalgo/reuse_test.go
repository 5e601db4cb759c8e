package ccalgo

import (
	"math/rand/v2"
	"reflect"
	"testing"
	"time"

	"cclab/clock"
)

// TestReuse: a controller built with a used one of its type (Env.Reuse)
// is that one, with exactly the state of a fresh controller; one of
// another type is not touched.
func TestReuse(t *testing.T) {
	for _, s := range append(allControllers, "dca:w=40", "cubic:beta=0.8") {
		t.Run(s, func(t *testing.T) {
			env := Env{MSS: testMSS, Rand: rand.New(rand.NewPCG(3, 4))}
			fresh, err := New(s, env)
			if err != nil {
				t.Fatal(err)
			}
			old, err := New(s, env)
			if err != nil {
				t.Fatal(err)
			}
			dirty(old)
			if reflect.DeepEqual(old, fresh) {
				t.Fatalf("driving the controller left it as fresh: the test would not see a stale field")
			}
			env.Reuse = old
			got, err := New(s, env)
			if err != nil {
				t.Fatal(err)
			}
			if got != old {
				t.Errorf("the former controller of the same type was not reused")
			}
			if !reflect.DeepEqual(got, fresh) {
				t.Errorf("controller built in a used one:\n%+v\nwant as fresh:\n%+v", got, fresh)
			}
		})
	}
	other := newTest[*Reno](t, "reno")
	dirty(other)
	before := *other
	got, err := New("cubic", Env{MSS: testMSS, Reuse: other})
	if err != nil || any(got) == any(other) || *other != before {
		t.Errorf("cubic built with a reno to reuse: err %v, reused %v, reno changed %v; want a new cubic, the reno untouched",
			err, any(got) == any(other), *other != before)
	}
}

// TestReuseTypedNil: a nil controller pointer of the type to build (not
// nil as an interface) in Env.Reuse is ignored: a new controller, as for
// Reuse nil.
func TestReuseTypedNil(t *testing.T) {
	for _, c := range []struct {
		spec  string
		reuse Controller
	}{{"reno", (*Reno)(nil)}, {"cubic", (*Cubic)(nil)}, {"vegas", (*Vegas)(nil)}, {"bbr", (*BBR)(nil)}, {"dca", (*DCA)(nil)}} {
		want, err := New(c.spec, Env{MSS: testMSS})
		if err != nil {
			t.Fatal(err)
		}
		got, err := New(c.spec, Env{MSS: testMSS, Reuse: c.reuse})
		if err != nil || !reflect.DeepEqual(got, want) {
			t.Errorf("%s built with a nil %T to reuse: got %+v, %v; want a fresh one %+v", c.spec, c.reuse, got, err, want)
		}
	}
}

// TestReuseDCAGrows: a DCA reused for a longer sample window gets a ring
// of that length.
func TestReuseDCAGrows(t *testing.T) {
	old := newTest[*DCA](t, "dca:w=10")
	dirty(old)
	got, err := New("dca:w=40", Env{MSS: testMSS, Reuse: old})
	if err != nil {
		t.Fatal(err)
	}
	want := newTest[*DCA](t, "dca:w=40")
	if !reflect.DeepEqual(got, want) {
		t.Errorf("dca:w=10 reused as dca:w=40: ring %d samples, want as fresh (%d)", len(got.(*DCA).buf), len(want.buf))
	}
}

// dirty drives c through slow start, delay samples, a loss and an RTO, so
// that most of its fields leave their initial values.
func dirty(c Controller) {
	now := clock.Start
	var snd uint64
	for i := range 200 {
		now = now.Add(time.Millisecond)
		c.OnSent(now, testMSS, 10*testMSS)
		snd += testMSS
		rtt := time.Duration(40+i%13) * time.Millisecond
		c.OnAck(Ack{Now: now, Acked: testMSS, AckedPackets: 1, RTT: rtt, SRTT: rtt, MinRTT: 40 * time.Millisecond,
			InFlight: 9 * testMSS, CumAck: snd - 9*testMSS, SndNxt: snd,
			Rate: RateSample{Delivered: testMSS, Interval: rtt, DeliveryRate: 1e6, TotalDelivered: snd, RTT: rtt}})
		if i == 120 {
			c.OnCongestion(Congestion{Now: now, InFlight: 10 * testMSS, SndNxt: snd})
			c.OnRecoveryExit(now, 10*testMSS)
		}
	}
	c.OnRTO(now, 10*testMSS)
}
