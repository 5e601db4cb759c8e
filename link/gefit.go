package link

import (
	"fmt"
	"math"
	"strconv"
)

// Spec returns the loss spec of c ("ge:p=P,r=R,h=H,k=K") that parseLoss,
// the scenario key loss and the tools' -loss flags accept (shortest exact
// decimals: the spec parses back to c).
func (c GEConfig) Spec() string {
	f := func(v float64) string { return strconv.FormatFloat(v, 'g', -1, 64) }
	return "ge:p=" + f(c.P) + ",r=" + f(c.R) + ",h=" + f(c.H) + ",k=" + f(c.K)
}

// LossRate returns the stationary loss rate of the model,
// (r(1−k) + p(1−h)) / (p + r); with p = r = 0 the chain stays in Good: 1−k.
func (c GEConfig) LossRate() float64 {
	if c.P+c.R == 0 {
		return 1 - c.K
	}
	return (c.R*(1-c.K) + c.P*(1-c.H)) / (c.P + c.R)
}

// GEFit is a Gilbert-Elliott fit of a loss sequence (FitGE).
type GEFit struct {
	Packets int64   // packets observed
	Losses  int64   // of which lost
	Bursts  int64   // loss runs (maximal runs of consecutive losses)
	Rate    float64 // Losses / Packets
	// MeanBurst is the mean loss-run length, packets (Losses / Bursts; 0
	// without losses).
	MeanBurst float64
	// Simple is the simple Gilbert model (h = 0, k = 1: a packet is lost
	// exactly in state Bad), whose state the sequence shows: p and r are the
	// maximum-likelihood transition probabilities of the two-state Markov
	// chain, p = n₀₁/(n₀₀ + n₀₁) and r = n₁₀/(n₁₀ + n₁₁) over consecutive
	// pairs (Yajnik, Moon, Kurose & Towsley, "Measurement and modelling of the
	// temporal dependence in packet loss", INFOCOM 1999, §4: the 2-state
	// Markov chain; 1/r is the mean loss-run length, p/(p+r) the loss rate).
	Simple GEConfig
	// Gilbert is Gilbert's three-parameter model (k = 1: no loss in Good, a
	// packet lost with probability 1−h in Bad) by Gilbert's moment estimator
	// (E. N. Gilbert, "Capacity of a burst-noise channel", Bell System
	// Technical Journal 39, 1960; as used by Hasslinger & Hohlfeld, MMB 2008):
	// from a = P(1), b = P(1|1) = P(11)/P(1) and c = P(111)/(P(101)+P(111))
	// (1 a loss, 0 a delivery, consecutive packets), with e = 1−h:
	//
	//	b = e(1−r),  c = e(1−r)² / ((1−r)² + rp),  a = e·p/(p+r)
	//
	// solved as e = b(2ac − b(a+c)) / (ac − b²), r = 1 − b/e, p = a·r/(e − a).
	// GilbertOK says whether the solution is a model (every parameter in
	// 0..1 and e > a); it is not when the sequence has too few loss runs or
	// is itself a simple Gilbert sequence up to noise (e ≥ 1: use Simple).
	Gilbert   GEConfig
	GilbertOK bool
	// Best is the model to replay: Gilbert when GilbertOK and its h is at
	// least GEFitMinH, else Simple. k, the delivery probability in Good, is
	// not identified by these estimators (isolated losses in Good cannot be
	// told from one-packet stays in Bad): it is always 1.
	Best GEConfig
}

// GEFitMinH is the smallest h (delivery probability in Bad) for which FitGE
// prefers Gilbert's three-parameter model over the simple Gilbert model:
// below it the two describe the sequence alike and the simple model's two
// parameters are the better-determined ones (a documented choice).
const GEFitMinH = 0.05

// FitGE fits Gilbert-Elliott models (GEFit) to a per-packet loss sequence,
// lost[i] true when packet i (in sending order) was lost, as link's "ge"
// loss model produces them (loss decided in the state a packet finds, then
// the transition): the simple Gilbert model by transition counts and
// Gilbert's three-parameter model by his moment estimator. The sequence must
// hold at least 2 packets. Without losses the fit is the loss-free model
// (p = 0, r = 1); a sequence of losses only stays in Bad (p = 1, r = 0).
// cclab campaign profile turns a measured path's loss into a replayable
// loss spec with it (GEFit.Best.Spec()).
func FitGE(lost []bool) (GEFit, error) {
	n := len(lost)
	if n < 2 {
		return GEFit{}, fmt.Errorf("link: FitGE: loss sequence of %d packets: need at least 2", n)
	}
	f := GEFit{Packets: int64(n)}
	var n00, n01, n10, n11 float64 // consecutive pairs
	var p111, p1x1 float64         // triples 1?1 and 111
	for i, l := range lost {
		if l {
			f.Losses++
			if i == 0 || !lost[i-1] {
				f.Bursts++
			}
		}
		if i+1 < n {
			switch {
			case !l && !lost[i+1]:
				n00++
			case !l:
				n01++
			case !lost[i+1]:
				n10++
			default:
				n11++
			}
		}
		if i+2 < n && l && lost[i+2] {
			p1x1++
			if lost[i+1] {
				p111++
			}
		}
	}
	f.Rate = float64(f.Losses) / float64(n)
	if f.Bursts > 0 {
		f.MeanBurst = float64(f.Losses) / float64(f.Bursts)
	}
	f.Simple = GEConfig{P: 0, R: 1, H: 0, K: 1}
	if n00+n01 > 0 {
		f.Simple.P = n01 / (n00 + n01)
	} else {
		f.Simple.P = 1 // no delivery followed by anything: never leaves Bad
	}
	if n10+n11 > 0 {
		f.Simple.R = n10 / (n10 + n11)
	}
	f.Best = f.Simple
	if n10+n11 > 0 && p1x1 > 0 {
		a, b, c := f.Rate, n11/(n10+n11), p111/p1x1
		if g, ok := gilbertMoments(a, b, c); ok {
			f.Gilbert, f.GilbertOK = g, true
			if g.H >= GEFitMinH {
				f.Best = g
			}
		}
	}
	return f, nil
}

// gilbertMoments solves Gilbert's three moment equations (GEFit.Gilbert)
// for a = P(1), b = P(1|1), c = P(111)/P(1?1); ok is false when they have no
// solution with every parameter a probability.
func gilbertMoments(a, b, c float64) (GEConfig, bool) {
	den := a*c - b*b
	if den == 0 || b == 0 {
		return GEConfig{}, false
	}
	e := b * (2*a*c - b*(a+c)) / den
	if !(e > a && e <= 1) {
		return GEConfig{}, false
	}
	r := 1 - b/e
	p := a * r / (e - a)
	if !(r >= 0 && r <= 1 && p >= 0 && p <= 1) || math.IsNaN(p) {
		return GEConfig{}, false
	}
	return GEConfig{P: p, R: r, H: 1 - e, K: 1}, true
}

// FitGilbertCounts fits the simple Gilbert model (h = 0, k = 1) from counts
// alone, when the per-packet sequence is not at hand: packets sent, packets
// lost, and loss bursts (maximal runs of consecutive losses). Each burst is
// one Good→Bad and one Bad→Good transition, so p = bursts/(packets − losses)
// and r = bursts/losses (1/r is the mean burst length; Yajnik et al. 1999,
// §4); the ends of the sequence make these exact up to one transition.
// Without losses the model is loss-free (p = 0, r = 1).
func FitGilbertCounts(packets, losses, bursts int64) (GEConfig, error) {
	switch {
	case packets <= 0:
		return GEConfig{}, fmt.Errorf("link: FitGilbertCounts: packets=%d: must be positive", packets)
	case losses < 0 || losses > packets:
		return GEConfig{}, fmt.Errorf("link: FitGilbertCounts: losses=%d: must be in 0..packets (%d)", losses, packets)
	case bursts < 0 || bursts > losses || (losses > 0 && bursts == 0) || bursts > packets-losses+1:
		return GEConfig{}, fmt.Errorf("link: FitGilbertCounts: bursts=%d: must be in 1..losses (%d) when there are losses, and at most "+
			"packets−losses+1 (%d)", bursts, losses, packets-losses+1)
	}
	if losses == 0 {
		return GEConfig{P: 0, R: 1, H: 0, K: 1}, nil
	}
	if losses == packets {
		return GEConfig{P: 1, R: 0, H: 0, K: 1}, nil
	}
	return GEConfig{P: min(1, float64(bursts)/float64(packets-losses)), R: float64(bursts) / float64(losses), H: 0, K: 1}, nil
}
