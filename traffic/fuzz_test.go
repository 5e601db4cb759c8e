package traffic

import (
	"math"
	"testing"

	"cclab/clock"
)

// FuzzSpec: any generator spec or distribution text either fails to parse
// or yields a generator whose first draws are finite and non-negative; it
// never panics.
func FuzzSpec(f *testing.F) {
	for _, s := range []string{"onoff:on=exp(1s),off=pareto(2s/1.5)", "web:size=pareto(scale=1kB/0.5)", "cbr:1Mbit",
		"layered:layers=3", "udponoff:rate=0.001bit,on=1ns,off=0", "pareto(1s/", "uniform(3s/1s)"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		var d DurationDist
		if d.UnmarshalText([]byte(s)) == nil {
			r := Stream(1, "fuzz")
			for range 3 {
				if v := d.Sample(r); v < 0 {
					t.Fatalf("%q: negative sample %v", s, v)
				}
			}
		}
		var z SizeDist
		if z.UnmarshalText([]byte(s)) == nil {
			if v := z.Sample(Stream(1, "fuzz")); v < 1 || math.IsNaN(z.Mean()) {
				t.Fatalf("%q: size sample %v mean %v", s, v, z.Mean())
			}
		}
		g, err := New(s, Env{Rand: Stream(1, "fuzz")})
		if err != nil {
			return
		}
		switch g := g.(type) {
		case StreamGen:
			g.NextTransfer(1e9)
		case DatagramGen:
			now := int64(1e9)
			for range 3 {
				at, size := g.NextDatagram(clock.Time(now))
				if at != 0 && (int64(at) < now || size < 0) {
					t.Fatalf("%q: datagram at %v size %d after %v", s, at, size, now)
				}
				if at != 0 {
					now = int64(at)
				}
			}
		}
	})
}
