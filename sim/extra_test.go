package sim

import (
	"testing"
	"time"

	"cclab/clock"
	"cclab/traffic"
)

// TestLayeredOverBottleneck: a layered source sharing a 1 Mbit/s bottleneck
// joins layers until it sees loss and settles below the capacity.
func TestLayeredOverBottleneck(t *testing.T) {
	e := NewEngine()
	db, err := NewDumbbell(e, DumbbellConfig{Flows: 1, Rate: 1e6, Delay: 20 * time.Millisecond, Queue: "droptail:20p"}, Options{Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	s := New(db.Net, nil)
	g, err := traffic.New("layered:layers=6,base=64kbit,factor=2,join=2s,detect=1s", traffic.Env{Rand: traffic.Stream(1, "l")})
	if err != nil {
		t.Fatal(err)
	}
	l := g.(*traffic.Layered)
	s.AddUDPFlow("layered", db.Senders[0], db.Receivers[0], 7000, l, clock.Start)
	maxLevel := 0
	for range 600 {
		e.RunFor(time.Second)
		maxLevel = max(maxLevel, l.Level())
	}
	// Cumulative rates: 64, 192, 448, 960, 1984 kbit/s; the 5th layer overloads the link.
	if maxLevel < 4 {
		t.Errorf("highest level got %d, want >= 4 (960 kbit/s fits)", maxLevel)
	}
	if l.Level() > 4 {
		t.Errorf("final level got %d (%.0f bit/s), want <= 4 on a 1 Mbit/s link", l.Level(), l.Rate())
	}
	if s.UDP[0].Stats.Lost == 0 {
		t.Errorf("no loss seen: join experiments never failed")
	}
}
