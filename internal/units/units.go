// Package units parses and formats the quantities cclab's command lines and
// specs use: rates ("16Mbit", "1.5Gbit", "500kbit", "2MB/s"), sizes ("100M",
// "1G", "64KiB", "1500") and durations ("7.5ms").
//
// Prefixes k/K, M, G, T are decimal (10^3, 10^6, 10^9, 10^12) and Ki, Mi, Gi,
// Ti binary (2^10 ..), as iperf3 and tc users expect. Rates are in bits per
// second and need a unit or a prefix ("10Mbit", "10M"): a bare number such as
// "10" is an error (10 bit/s is almost never meant), and so are byte units
// ("10MBps", "10MB/s"), which a reader easily takes for bits (docs/scenarios.md,
// "Units").
package units

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
	"unicode"
)

type prefix struct {
	name string
	mult float64
}

// Longest names first so "Ki" wins over "K".
var prefixes = []prefix{
	{"Ki", 1 << 10}, {"Mi", 1 << 20}, {"Gi", 1 << 30}, {"Ti", 1 << 40},
	{"ki", 1 << 10}, {"mi", 1 << 20}, {"gi", 1 << 30}, {"ti", 1 << 40},
	{"k", 1e3}, {"K", 1e3}, {"M", 1e6}, {"m", 1e6}, {"G", 1e9}, {"g", 1e9}, {"T", 1e12}, {"t", 1e12},
}

// splitNumber splits s into its leading decimal number and the rest.
func splitNumber(s string) (num float64, rest string, ok bool) {
	i := 0
	for i < len(s) {
		c := s[i]
		if (c >= '0' && c <= '9') || c == '.' || c == '+' || c == '-' ||
			((c == 'e' || c == 'E') && i > 0 && i+1 < len(s) && (s[i+1] >= '0' && s[i+1] <= '9' || s[i+1] == '-' || s[i+1] == '+')) {
			i++
			continue
		}
		break
	}
	if i == 0 {
		return 0, s, false
	}
	f, err := strconv.ParseFloat(s[:i], 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, s, false
	}
	return f, strings.TrimSpace(s[i:]), true
}

// splitQuantity trims s and splits it into its non-negative number and unit;
// what ("rate", "size") and help (examples) go into the errors.
func splitQuantity(s, what, help string) (num float64, unit string, err error) {
	num, unit, ok := splitNumber(strings.TrimSpace(s))
	if !ok {
		return 0, "", fmt.Errorf("%s %q: not a number with a unit (%s)", what, s, help)
	}
	if num < 0 {
		return 0, "", fmt.Errorf("%s %q: must not be negative (%s)", what, s, help)
	}
	return num, unit, nil
}

// splitPrefix removes a decimal or binary prefix from the front of unit.
func splitPrefix(unit string) (mult float64, rest string) {
	for _, p := range prefixes {
		if strings.HasPrefix(unit, p.name) {
			return p.mult, unit[len(p.name):]
		}
	}
	return 1, unit
}

const rateHelp = "bits/s with a unit: 16Mbit, 1.5Gbit, 500kbit, 10M (= 10Mbit), 0 for none or unlimited"

// ParseRate parses a rate and returns it in bits per second. Bit units: bit,
// bits, bit/s, bps, b/s, after an optional prefix; a prefix alone ("10M")
// means bits/s, as in iperf3 -b. Rejected, with an error that suggests the
// unit: a bare number other than 0 ("10": which unit?) and byte units ("10MBps",
// "10MB/s", "10B": a capital B reads as bits too easily; the error gives the
// value in bits). Negative rates are rejected.
func ParseRate(s string) (float64, error) {
	num, unit, err := splitQuantity(s, "rate", rateHelp)
	if err != nil {
		return 0, err
	}
	mult, u := splitPrefix(unit)
	switch u {
	case "":
		if unit == "" && num != 0 {
			return 0, fmt.Errorf("rate %q: a number without a unit: write %sMbit, %skbit or %sbit (%s)", s, trim(num), trim(num), trim(num), rateHelp)
		}
	case "bit", "bits", "bit/s", "bits/s", "bps", "b/s", "b":
	case "B/s", "Bps", "byte/s", "bytes/s", "B", "Byte/s", "Bytes/s":
		return 0, fmt.Errorf("rate %q: bytes per second are not accepted (B is bytes): write %s for %s, or %sbit if you meant bits",
			s, FormatRate(num*mult*8), strings.TrimSpace(s), trim(num)+strings.TrimSuffix(strings.TrimSpace(unit), u))
	default:
		return 0, fmt.Errorf("rate %q: unknown unit %q (%s)", s, unit, rateHelp)
	}
	v := num * mult
	if math.IsInf(v, 0) || v > 1e18 {
		return 0, fmt.Errorf("rate %q: too large", s)
	}
	return v, nil
}

const bytesHelp = "examples: 1500B, 64KiB, 100M, 1G, 30kB; K/M/G = 10^3/10^6/10^9, KiB/MiB/GiB = 2^10/2^20/2^30"

// ParseBytes parses a size in bytes: a bare integer, or a number with a
// decimal (K, M, G, T; optionally followed by B) or binary (Ki, Mi, Gi, Ti;
// optionally followed by B) prefix. Fractions are allowed when the result is a
// whole number of bytes after rounding ("1.5K" = 1500). Negative sizes are rejected.
func ParseBytes(s string) (int64, error) {
	num, unit, err := splitQuantity(s, "size", bytesHelp)
	if err != nil {
		return 0, err
	}
	mult, u := splitPrefix(unit)
	switch u {
	case "", "B", "b", "byte", "bytes":
	default:
		return 0, fmt.Errorf("size %q: unknown unit %q (%s)", s, unit, bytesHelp)
	}
	v := math.Round(num * mult)
	if v > math.MaxInt64/2 {
		return 0, fmt.Errorf("size %q: too large", s)
	}
	return int64(v), nil
}

// ParseBytesIEC is ParseBytes with iperf3's meaning of the one-letter
// prefixes: K, M, G, T (any case, with or without B) are 2^10, 2^20, 2^30,
// 2^40, so "20M" is 20971520 bytes, as iperf3's -n 20M. Everything else
// (bare integers, KiB, MiB, ...) is read as ParseBytes reads it.
func ParseBytesIEC(s string) (int64, error) {
	t := strings.TrimSpace(s)
	t = strings.TrimSuffix(strings.TrimSuffix(t, "B"), "b")
	if t != "" {
		if k := strings.IndexByte("KMGT", byte(unicode.ToUpper(rune(t[len(t)-1])))); k >= 0 {
			if _, rest, ok := splitNumber(t); ok && len(rest) == 1 {
				return ParseBytes(t + "i")
			}
		}
	}
	return ParseBytes(s)
}

// ParseSize is ParseBytes for places where a number alone is ambiguous (a
// scenario file's sizes, next to packet counts): it also requires a unit or
// a prefix ("1500B", "1.5kB", "64KiB"); only 0 may stand alone.
func ParseSize(s string) (int64, error) {
	n, err := ParseBytes(s)
	if err != nil {
		return 0, err
	}
	if _, unit, _ := splitNumber(strings.TrimSpace(s)); unit == "" && n != 0 {
		return 0, fmt.Errorf("size %q: a number without a unit: write %sB for bytes (%s)", s, strings.TrimSpace(s), bytesHelp)
	}
	return n, nil
}

// ParseDuration parses a Go duration ("7.5ms", "1s", "250us"); a bare "0" is
// allowed. The error lists examples.
func ParseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("duration %q: not a duration (examples: 7.5ms, 250us, 1s, 0)", s)
	}
	return d, nil
}

// FormatRate formats bits/s with the largest decimal prefix that keeps the
// value at least 1, e.g. 16e6 → "16Mbit", 1.5e9 → "1.5Gbit", 500e3 →
// "500kbit", 0 → "0bit". The result parses back with ParseRate (up to the
// four decimals it keeps).
func FormatRate(bps float64) string {
	abs := math.Abs(bps)
	switch {
	case abs >= 1e12:
		return trim(bps/1e12) + "Tbit"
	case abs >= 1e9:
		return trim(bps/1e9) + "Gbit"
	case abs >= 1e6:
		return trim(bps/1e6) + "Mbit"
	case abs >= 1e3:
		return trim(bps/1e3) + "kbit"
	}
	return trim(bps) + "bit"
}

func trim(v float64) string {
	return strconv.FormatFloat(math.Round(v*1e4)/1e4, 'f', -1, 64)
}

// FormatBytes formats a size in bytes: exact multiples of a power of 1024
// that are not exact multiples of the same power of 1000 use binary prefixes
// ("64KiB"), others decimal ones ("100MB", "1.5kB"); below 1000 plain "B".
// The result parses back with ParseBytes (up to the four decimals it keeps).
func FormatBytes(n int64) string {
	neg := n < 0
	u := n
	if neg {
		u = -n
	}
	sign := ""
	if neg {
		sign = "-"
	}
	bin := []string{"KiB", "MiB", "GiB", "TiB"}
	dec := []string{"kB", "MB", "GB", "TB"}
	for k := 3; k >= 0; k-- {
		b := int64(1) << (10 * (k + 1))
		d := int64(math.Pow(1000, float64(k+1)))
		if u >= b && u%b == 0 && u%d != 0 {
			return sign + strconv.FormatInt(u/b, 10) + bin[k]
		}
	}
	for k := 3; k >= 0; k-- {
		d := math.Pow(1000, float64(k+1))
		if float64(u) >= d {
			return sign + trim(float64(u)/d) + dec[k]
		}
	}
	return sign + strconv.FormatInt(u, 10) + "B"
}

// Rate is a rate in bits/s that parses with ParseRate ("1Mbit", "500kbit"):
// a spec parameter's type (traffic generators, ccalgo's probe).
type Rate float64

// UnmarshalText parses a rate.
func (r *Rate) UnmarshalText(b []byte) error {
	v, err := ParseRate(string(b))
	if err != nil {
		return err
	}
	*r = Rate(v)
	return nil
}

// String formats the rate.
func (r Rate) String() string { return FormatRate(float64(r)) }
