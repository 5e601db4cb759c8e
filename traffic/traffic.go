// Package traffic holds cclab's workload generators (docs/traffic.md), shared by the
// simulator and the live tools: greedy, ON/OFF, web-like, UDP CBR, UDP ON/OFF
// and layered (RLM-like).
//
// Generators are sans-I/O and pull-based: a driver asks "when does the next
// transfer start and how large is it" (stream generators, driving a reliable
// connection) or "when is the next datagram due and how large is it" (datagram
// generators, driving raw UDP), passing the current time in; no goroutines, no
// clocks. Each generator owns a *rand.Rand derived from the scenario seed and
// its own name (Stream), so changing one flow leaves every other generator's
// random stream untouched (common random numbers). Every draw a generator
// makes depends only on its own stream and the number of calls, never on the
// times passed in, so the sample path of sizes and idle periods is the same
// whatever the network does with the traffic.
//
// Generators are built from specs such as
//
//	onoff:on=exp(1s),off=pareto(2s/1.5)
//	web:size=pareto(12kB/1.2),think=exp(5s)
//	cbr:rate=1Mbit,size=1000
//
// see docs/traffic.md for the syntax of every generator and distribution.
package traffic

import (
	"encoding/binary"
	"fmt"
	"hash/fnv"
	"math/rand/v2"
	"time"

	"cclab/clock"
	"cclab/internal/mix"
	"cclab/internal/spec"
	"cclab/internal/units"
)

// Stream returns the random source for the component called name in a
// scenario with the given seed: a PCG seeded from an FNV-1a hash of (seed,
// name) run through two SplitMix64 finalisers. Distinct names give
// independent-looking streams; the same (seed, name) always gives the same one.
func Stream(seed uint64, name string) *rand.Rand {
	h := fnv.New64a()
	var b [8]byte
	binary.LittleEndian.PutUint64(b[:], seed)
	h.Write(b[:])
	h.Write([]byte(name))
	x := h.Sum64()
	return rand.New(rand.NewPCG(mix.SplitMix64(x), mix.SplitMix64(x^mix.Golden)))
}

// Generator is any traffic generator; it is also a StreamGen or a DatagramGen.
type Generator interface {
	// Name returns the registry name ("greedy", "onoff", ...).
	Name() string
}

// Transfer is one unit of work for a reliable connection: from Start, offer
// Bytes bytes (0: unlimited) to the connection; if Duration is non-zero, stop
// offering data at Start+Duration (an ON period measured in time).
type Transfer struct {
	Start    clock.Time    // when the application starts offering data
	Bytes    int64         // bytes to send; 0 means unlimited
	Duration time.Duration // 0: until Bytes are sent; >0: offered data stops after this long
	Idle     time.Duration // the idle (OFF/think) period drawn before Start, for sample-path comparisons
}

// StreamGen generates transfers for a reliable connection.
type StreamGen interface {
	Generator
	// NextTransfer returns the next transfer. now is the start of the run for
	// the first call and, after that, the instant the previous transfer ended
	// (its last byte acknowledged, or its Duration over): generators with idle
	// periods start the next transfer an idle period after now (closed loop,
	// as a user waits for a page before thinking). ok is false when there are
	// no more transfers.
	NextTransfer(now clock.Time) (t Transfer, ok bool)
}

// DatagramGen generates datagrams for an unreliable (UDP) flow.
type DatagramGen interface {
	Generator
	// NextDatagram returns the send time and size (bytes of UDP payload) of
	// the next datagram. now is the start of the run for the first call and
	// the send time of the previous datagram afterwards. Open-loop: the
	// schedule does not depend on the network. at is clock.Never when the
	// generator is done.
	NextDatagram(now clock.Time) (at clock.Time, size int)
}

// FeedbackGen is a DatagramGen that adapts to loss (layered/RLM): the driver
// reports how many of its datagrams were received and lost since the previous report.
type FeedbackGen interface {
	DatagramGen
	Feedback(now clock.Time, received, lost int)
}

// Env is what a generator needs from its surroundings.
type Env struct {
	Rand *rand.Rand // the generator's own stream (see Stream); nil seeds a fixed one
	MSS  int        // payload bytes per packet of the carrying connection (informational), bytes; 0 means 1200
}

func (e Env) rand() *rand.Rand {
	if e.Rand == nil {
		return rand.New(rand.NewPCG(1, 2))
	}
	return e.Rand
}

// Registry holds the generators by name.
var Registry = spec.NewRegistry[Generator, Env]("traffic generator")

// New builds a generator from a spec string.
func New(s string, env Env) (Generator, error) { return Registry.New(s, env) }

// Rate is a rate in bits/s that parses with units.ParseRate ("1Mbit", "500kbit").
type Rate = units.Rate

// MaxRate is the largest sending rate a generator accepts, bits/s.
const MaxRate = 1e12

// checkRate validates a datagram generator's rate and size: positive, the
// rate at most MaxRate, and an inter-packet interval of at least 1 ns (a
// driver must never be asked to send infinitely many datagrams at one instant).
func checkRate(name string, rate Rate, size Size) error {
	if !(rate > 0) || rate > MaxRate || size <= 0 || size > 1<<16 {
		return fmt.Errorf("%s: rate must be in (0, %g] bits/s and size in 1..65536 bytes", name, float64(MaxRate))
	}
	if float64(size)*8/float64(rate)*1e9 < 1 {
		return fmt.Errorf("%s: interval size·8/rate below 1 ns", name)
	}
	return nil
}

// Size is a size in bytes that parses with units.ParseBytes ("1500", "64KiB", "10MB").
type Size int64

// UnmarshalText parses a size.
func (s *Size) UnmarshalText(b []byte) error {
	v, err := units.ParseBytes(string(b))
	if err != nil {
		return err
	}
	*s = Size(v)
	return nil
}

// String formats the size.
func (s Size) String() string { return units.FormatBytes(int64(s)) }
