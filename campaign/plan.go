package campaign

import (
	"fmt"
	"math/rand/v2"
	"strconv"
)

// Item is one planned transfer.
type Item struct {
	Seq     int // position in the plan, 0-based
	Round   int // 1-based
	Pair    Pair
	Variant Variant
}

// ID is the transfer's ID within the campaign ("r2/zurich->boston/sack"),
// echoed by the agents.
func (it Item) ID() string { return fmt.Sprintf("r%d/%s/%s", it.Round, it.Pair, it.Variant.Name) }

// Path is the unordered host pair a transfer uses: both directions between
// two hosts share the network path (its queues carry the data one way and
// the ACKs the other), so they never run at once.
func (it Item) Path() [2]string {
	a, b := it.Pair.From, it.Pair.To
	if b < a {
		a, b = b, a
	}
	return [2]string{a, b}
}

// Plan returns the campaign's transfers in order: round by round, pair by
// pair in the spec's order, and within each round and pair every variant
// once in an order drawn from the schedule's seed (a Fisher-Yates shuffle of
// a PCG stream seeded with the seed and the round and pair), so that
// the variants take turns on each path in each round and no variant is
// always first. The plan depends only on the spec: the same spec gives the
// same plan, which is how a resumed campaign knows what is left.
func (s *Spec) Plan() []Item {
	out := make([]Item, 0, s.Schedule.Rounds*len(s.Pairs)*len(s.Variants))
	for r := 1; r <= s.Schedule.Rounds; r++ {
		for pi, p := range s.Pairs {
			rng := rand.New(rand.NewPCG(s.Schedule.Seed, uint64(r)<<32|uint64(pi)))
			order := rng.Perm(len(s.Variants))
			for _, vi := range order {
				out = append(out, Item{Seq: len(out), Round: r, Pair: p, Variant: s.Variants[vi]})
			}
		}
	}
	return out
}

// ProbeVariant is the variant name of the probe phase's transfers.
const ProbeVariant = "probe"

// ProbeRecovery is the probe's loss recovery: SACK (RFC 6675), so the
// overflow losses of a full queue are repaired in one round trip, with
// lost-retransmission detection: a full queue drops a third of the
// retransmissions too, and without it each such loss waited for a
// timeout, whose retransmission of everything outstanding made the
// packets sent again no record of the ones lost (countedBuffer).
const ProbeRecovery = "sack:lostretx"

// CC is the probe's controller spec: ccalgo's probe at the rate and gain.
func (p *ProbeSettings) CC() string {
	return "probe:rate=" + strconv.FormatFloat(p.Rate, 'f', 0, 64) + "bit,gain=" + strconv.FormatFloat(p.Gain, 'g', -1, 64)
}

// ProbePlan returns the probe phase's transfers (docs/campaigns.md,
// "Probing"; none without Spec.Probe): one per pair in the spec's order,
// round 0, numbered before the plan (Seq −len(pairs) … −1), so the
// scheduler runs them first and the analyses, which follow Plan, never
// count them as measurements of a variant.
func (s *Spec) ProbePlan() []Item {
	if s.Probe == nil {
		return nil
	}
	v := Variant{Name: ProbeVariant, CC: s.Probe.CC(), Recovery: ProbeRecovery}
	out := make([]Item, len(s.Pairs))
	for i, p := range s.Pairs {
		out[i] = Item{Seq: i - len(s.Pairs), Round: 0, Pair: p, Variant: v}
	}
	return out
}

// IsProbe reports whether the item is a probe phase's transfer.
func (it Item) IsProbe() bool { return it.Round == 0 && it.Variant.Name == ProbeVariant }
