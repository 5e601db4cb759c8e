package cli

import (
	"flag"

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
