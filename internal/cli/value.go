package cli

import (
	"flag"
	"time"

	"cclab/internal/units"
)

// Value is a flag.Value that parses into *P with Parse and prints *P with
// Format (the zero value prints as "", so -h shows no default for it).
type Value[T comparable] struct {
	P      *T
	Parse  func(string) (T, error)
	Format func(T) string
}

// String formats the current value (flag.Value).
func (v Value[T]) String() string {
	var zero T
	if v.P == nil || *v.P == zero {
		return ""
	}
	return v.Format(*v.P)
}

// Set parses s into *P (flag.Value).
func (v Value[T]) Set(s string) error {
	x, err := v.Parse(s)
	if err != nil {
		return err
	}
	*v.P = x
	return nil
}

// Rate is a flag.Value for a rate in bits/s written with units ("20Mbit").
func Rate(p *float64) flag.Value {
	return Value[float64]{P: p, Parse: units.ParseRate, Format: units.FormatRate}
}

// Bytes is a flag.Value for a byte count written with units ("100M",
// "1GiB", "64KiB", or a bare integer).
func Bytes(p *int64) flag.Value {
	return Value[int64]{P: p, Parse: units.ParseBytes, Format: units.FormatBytes}
}

// Duration is a flag.Value for a Go duration ("30s", "1m", "250ms").
func Duration(p *time.Duration) flag.Value {
	return Value[time.Duration]{P: p, Parse: units.ParseDuration, Format: time.Duration.String}
}
