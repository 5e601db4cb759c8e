package traffic

import (
	"fmt"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"cclab/internal/units"
)

// distKind names a distribution family.
type distKind uint8

const (
	distConst distKind = iota
	distExp
	distPareto
	distUniform
)

// dist is a distribution of a positive quantity in a base unit (nanoseconds
// or bytes). Syntax (arguments separated by '/', because ',' separates spec
// parameters):
//
//	X                 constant X
//	const(X)          constant X
//	exp(MEAN)         exponential with mean MEAN
//	pareto(MEAN/K)    Pareto with shape K (> 1) and mean MEAN (scale = MEAN·(K−1)/K)
//	pareto(scale=S/K) Pareto with scale (minimum) S and shape K
//	uniform(A/B)      uniform on [A, B]
type dist struct {
	kind distKind
	a, b float64 // const: a; exp: mean a; pareto: scale a, shape b; uniform: [a, b]
	text string
}

// sample draws one value. Each call consumes the stream the same way
// whatever the caller's state, so sample paths depend only on the call count.
func (d dist) sample(r *rand.Rand) float64 {
	switch d.kind {
	case distExp:
		return r.ExpFloat64() * d.a
	case distPareto:
		// Inverse CDF: F(x) = 1 - (scale/x)^shape, u in (0, 1].
		u := 1 - r.Float64()
		return d.a / math.Pow(u, 1/d.b)
	case distUniform:
		return d.a + (d.b-d.a)*r.Float64()
	}
	return d.a
}

// Mean returns the distribution's theoretical mean in its base unit
// (+Inf for a Pareto with shape <= 1).
func (d dist) Mean() float64 {
	switch d.kind {
	case distExp, distConst:
		return d.a
	case distPareto:
		if d.b <= 1 {
			return math.Inf(1)
		}
		return d.a * d.b / (d.b - 1)
	case distUniform:
		return (d.a + d.b) / 2
	}
	return 0
}

func parseDist(s string, value func(string) (float64, error)) (dist, error) {
	s = strings.TrimSpace(s)
	d := dist{text: s}
	name, args, hasArgs := strings.Cut(s, "(")
	if !hasArgs {
		v, err := value(s)
		if err != nil {
			return d, err
		}
		d.kind, d.a = distConst, v
		return d, nil
	}
	if !strings.HasSuffix(args, ")") {
		return d, fmt.Errorf("distribution %q: missing ')'", s)
	}
	parts := strings.Split(strings.TrimSuffix(args, ")"), "/")
	want := func(n int) error {
		if len(parts) != n {
			return fmt.Errorf("distribution %q: %s takes %d argument(s) separated by '/'", s, name, n)
		}
		return nil
	}
	switch strings.ToLower(strings.TrimSpace(name)) {
	case "const":
		if err := want(1); err != nil {
			return d, err
		}
		v, err := value(parts[0])
		if err != nil {
			return d, err
		}
		d.kind, d.a = distConst, v
	case "exp":
		if err := want(1); err != nil {
			return d, err
		}
		v, err := value(parts[0])
		if err != nil {
			return d, err
		}
		if v <= 0 {
			return d, fmt.Errorf("distribution %q: mean must be positive", s)
		}
		d.kind, d.a = distExp, v
	case "pareto":
		if err := want(2); err != nil {
			return d, err
		}
		k, err := strconv.ParseFloat(strings.TrimSpace(parts[1]), 64)
		if err != nil || !(k > 0) || math.IsInf(k, 0) {
			return d, fmt.Errorf("distribution %q: shape must be a positive number", s)
		}
		first := strings.TrimSpace(parts[0])
		scaleGiven := false
		if rest, ok := strings.CutPrefix(first, "scale="); ok {
			first, scaleGiven = rest, true
		} else if rest, ok := strings.CutPrefix(first, "mean="); ok {
			first = rest
		}
		v, err := value(first)
		if err != nil {
			return d, err
		}
		if v <= 0 {
			return d, fmt.Errorf("distribution %q: mean/scale must be positive", s)
		}
		d.kind, d.b = distPareto, k
		if scaleGiven {
			d.a = v
		} else {
			if k <= 1 {
				return d, fmt.Errorf("distribution %q: a Pareto with shape <= 1 has no mean; give scale=S instead", s)
			}
			d.a = v * (k - 1) / k
		}
	case "uniform":
		if err := want(2); err != nil {
			return d, err
		}
		a, err := value(parts[0])
		if err != nil {
			return d, err
		}
		b, err := value(parts[1])
		if err != nil {
			return d, err
		}
		if b < a {
			return d, fmt.Errorf("distribution %q: upper bound below lower bound", s)
		}
		d.kind, d.a, d.b = distUniform, a, b
	default:
		return d, fmt.Errorf("distribution %q: unknown family %q (allowed: const, exp, pareto, uniform)", s, name)
	}
	return d, nil
}

// DurationDist is a distribution of durations, e.g. "exp(1s)", "pareto(2s/1.5)".
type DurationDist struct{ d dist }

// UnmarshalText parses a duration distribution.
func (d *DurationDist) UnmarshalText(b []byte) error {
	x, err := parseDist(string(b), func(s string) (float64, error) {
		v, err := units.ParseDuration(s)
		if err == nil && v < 0 {
			err = fmt.Errorf("duration %q: must not be negative", s)
		}
		return float64(v), err
	})
	if err != nil {
		return err
	}
	d.d = x
	return nil
}

// String returns the distribution as written.
func (d DurationDist) String() string { return d.d.text }

// IsZero reports whether the distribution is unset.
func (d DurationDist) IsZero() bool { return d.d.text == "" }

// MaxSample bounds every duration sample (about 13 days), so sums of many
// samples cannot overflow clock.Time.
const MaxSample = time.Duration(1 << 50)

// Sample draws a duration in [0, MaxSample].
func (d DurationDist) Sample(r *rand.Rand) time.Duration {
	return time.Duration(math.Max(0, math.Min(d.d.sample(r), float64(MaxSample))))
}

// Mean returns the theoretical mean.
func (d DurationDist) Mean() time.Duration { return time.Duration(d.d.Mean()) }

// SizeDist is a distribution of sizes in bytes, e.g. "pareto(12kB/1.2)", "exp(100kB)".
type SizeDist struct{ d dist }

// UnmarshalText parses a size distribution.
func (d *SizeDist) UnmarshalText(b []byte) error {
	x, err := parseDist(string(b), func(s string) (float64, error) {
		v, err := units.ParseBytes(s)
		return float64(v), err
	})
	if err != nil {
		return err
	}
	d.d = x
	return nil
}

// String returns the distribution as written.
func (d SizeDist) String() string { return d.d.text }

// IsZero reports whether the distribution is unset.
func (d SizeDist) IsZero() bool { return d.d.text == "" }

// Sample draws a size, rounded to whole bytes, at least 1.
func (d SizeDist) Sample(r *rand.Rand) int64 {
	return int64(math.Max(1, math.Min(math.Round(d.d.sample(r)), 1<<50)))
}

// Mean returns the theoretical mean in bytes.
func (d SizeDist) Mean() float64 { return d.d.Mean() }
