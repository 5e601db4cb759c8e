package eval

import "math"

// DDSketch (Masson, Rim and Lee, "DDSketch: A Fast and Fully-Mergeable
// Quantile Sketch with Relative-Error Guarantees", VLDB 2019) estimates
// quantiles of positive values with bounded relative error in bounded
// memory: value x counts in bucket i = ⌈log_γ x⌉, γ = (1+α)/(1−α), and a
// quantile is reported as 2γ^i/(γ+1), within a factor (1 ± α) of the true
// sample quantile. The delay percentiles (p50_rtt, p95_queue_delay, ...)
// come from it, so a long run's millions of samples take a few hundred
// buckets.
type DDSketch struct {
	gamma   float64
	lnGamma float64
	offset  int       // bucket index of counts[0]
	counts  []float64 // dense buckets from offset
	zeros   float64   // values ≤ 0 (kept apart: log undefined)
	n       float64
}

// sketchAlpha is the sketches' relative accuracy α: 0.5 %.
const sketchAlpha = 0.005

// NewDDSketch returns an empty sketch with relative accuracy alpha (0 < alpha < 1).
func NewDDSketch(alpha float64) *DDSketch {
	g := (1 + alpha) / (1 - alpha)
	return &DDSketch{gamma: g, lnGamma: math.Log(g)}
}

// Add counts x once.
func (s *DDSketch) Add(x float64) {
	s.n++
	if !(x > 0) || math.IsInf(x, 0) {
		s.zeros++
		return
	}
	i := int(math.Ceil(math.Log(x) / s.lnGamma))
	switch {
	case len(s.counts) == 0:
		s.offset = i
		s.counts = append(s.counts, 0)
	case i < s.offset:
		grown := make([]float64, s.offset-i+len(s.counts))
		copy(grown[s.offset-i:], s.counts)
		s.counts, s.offset = grown, i
	}
	for i-s.offset >= len(s.counts) {
		s.counts = append(s.counts, 0)
	}
	s.counts[i-s.offset]++
}

// Merge adds o's counts (a sketch of the same accuracy) to s.
func (s *DDSketch) Merge(o *DDSketch) {
	if o == nil || o.n == 0 {
		return
	}
	s.n += o.n
	s.zeros += o.zeros
	for k, c := range o.counts {
		if c == 0 {
			continue
		}
		i := o.offset + k
		if len(s.counts) == 0 {
			s.offset = i
			s.counts = []float64{0}
		}
		if i < s.offset {
			grown := make([]float64, s.offset-i+len(s.counts))
			copy(grown[s.offset-i:], s.counts)
			s.counts, s.offset = grown, i
		}
		for i-s.offset >= len(s.counts) {
			s.counts = append(s.counts, 0)
		}
		s.counts[i-s.offset] += c
	}
}

// Count returns the number of values added.
func (s *DDSketch) Count() int { return int(s.n) }

// Quantile returns the estimate of the q-quantile (0 ≤ q ≤ 1): the value of
// rank ⌊q·(n−1)⌋ in sorted order (0-based), within a factor 1 ± α; 0 when
// that value is ≤ 0; NaN for an empty sketch.
func (s *DDSketch) Quantile(q float64) float64 {
	if s.n == 0 {
		return math.NaN()
	}
	rank := math.Floor(q * (s.n - 1))
	if rank < s.zeros {
		return 0
	}
	cum := s.zeros
	for k, c := range s.counts {
		cum += c
		if cum > rank {
			i := s.offset + k
			return 2 * math.Pow(s.gamma, float64(i)) / (s.gamma + 1)
		}
	}
	return 2 * math.Pow(s.gamma, float64(s.offset+len(s.counts)-1)) / (s.gamma + 1)
}

// putPercentiles sets v["p50_"+name], v["p95_"+name] and v["p99_"+name]
// from sk, if it holds values.
func putPercentiles(v map[string]float64, name string, sk *DDSketch) {
	if sk == nil || sk.Count() == 0 {
		return
	}
	v["p50_"+name] = sk.Quantile(0.50)
	v["p95_"+name] = sk.Quantile(0.95)
	v["p99_"+name] = sk.Quantile(0.99)
}

// addSample adds x to sk, creating the sketch on first use.
func addSample(sk *DDSketch, x float64) *DDSketch {
	if sk == nil {
		sk = NewDDSketch(sketchAlpha)
	}
	sk.Add(x)
	return sk
}

// pooledRTTs merges the RTT samples of every flow (the network's delay
// percentiles weigh each sample once, so busier flows weigh more).
func (c *Collector) pooledRTTs() *DDSketch {
	all := NewDDSketch(sketchAlpha)
	for _, f := range c.flows {
		all.Merge(f.rtts)
	}
	return all
}
