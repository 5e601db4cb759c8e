package perf

import (
	"flag"
	"fmt"
	"strconv"
	"time"

	"cclab/internal/cli"
	"cclab/internal/psk"
	"cclab/internal/units"
	"cclab/transport"
)

// MaxLimit is the largest value of a receiver's admission-limit flags.
const MaxLimit = 1 << 20

// AdmissionFlags registers a receiver's admission limits (docs/security.md
// "Admission") on fs, each range-checked when parsed, into ec's fields:
// -max-conns, -max-half-open, -max-conns-per-source, -max-conns-per-prefix,
// -max-half-open-per-source, -max-half-open-per-prefix and -evict-idle.
// Unset flags leave ec's fields alone (zero: the transport's defaults).
// CheckLimits then checks them together.
func AdmissionFlags(fs *flag.FlagSet, ec *transport.EndpointConfig) {
	limit := func(p *int, name string, def int, what string) {
		fs.Var(cli.Value[int]{P: p, Format: strconv.Itoa, Parse: func(s string) (int, error) {
			n, err := strconv.Atoi(s)
			if err == nil && (n < 1 || n > MaxLimit) {
				err = fmt.Errorf("must be 1..%d", MaxLimit)
			}
			return n, err
		}}, name, fmt.Sprintf("%s, 1..%d (default %d)", what, MaxLimit, def))
	}
	limit(&ec.MaxConns, "max-conns", transport.DefaultMaxConns, "connections at once")
	limit(&ec.MaxHalfOpen, "max-half-open", transport.DefaultMaxHalfOpen, "half-open connections (address proven, handshake not yet confirmed)")
	limit(&ec.MaxConnsPerSource, "max-conns-per-source", transport.DefaultMaxConnsPerSource, "connections from one source IP address (behind a relay every flow has the relay's)")
	limit(&ec.MaxConnsPerPrefix, "max-conns-per-prefix", transport.DefaultMaxConnsPerPrefix, "connections from one source prefix (IPv4 /24, IPv6 /56)")
	limit(&ec.MaxHalfOpenPerSource, "max-half-open-per-source", transport.DefaultMaxHalfOpenPerSource, "half-open connections from one source IP address")
	limit(&ec.MaxHalfOpenPerPrefix, "max-half-open-per-prefix", transport.DefaultMaxHalfOpenPerPrefix, "half-open connections from one source prefix")
	fs.Var(cli.Value[time.Duration]{P: &ec.EvictIdle, Format: time.Duration.String, Parse: func(s string) (time.Duration, error) {
		d, err := units.ParseDuration(s)
		if err == nil && (d < 100*time.Millisecond || d > time.Hour) {
			err = fmt.Errorf("must be 100ms..1h")
		}
		return d, err
	}}, "evict-idle", fmt.Sprintf("when a limit is reached, a new client may evict an established connection idle this long, 100ms..1h (default %v)", transport.DefaultEvictIdle))
}

// CheckLimits checks ec's admission limits together (zero fields: the
// defaults): a per-source limit above its per-prefix limit, or a per-prefix
// limit above the total, could never be reached, so it names the flag to
// raise with it.
func CheckLimits(ec transport.EndpointConfig) error {
	or := func(v, def int) int {
		if v == 0 {
			return def
		}
		return v
	}
	conns := or(ec.MaxConns, transport.DefaultMaxConns)
	half := or(ec.MaxHalfOpen, transport.DefaultMaxHalfOpen)
	src := or(ec.MaxConnsPerSource, transport.DefaultMaxConnsPerSource)
	pfx := or(ec.MaxConnsPerPrefix, transport.DefaultMaxConnsPerPrefix)
	hsrc := or(ec.MaxHalfOpenPerSource, transport.DefaultMaxHalfOpenPerSource)
	hpfx := or(ec.MaxHalfOpenPerPrefix, transport.DefaultMaxHalfOpenPerPrefix)
	switch {
	case src > pfx:
		return fmt.Errorf("-max-conns-per-source %d is above -max-conns-per-prefix %d: raise that too", src, pfx)
	case pfx > conns:
		return fmt.Errorf("-max-conns-per-prefix %d is above -max-conns %d: raise that too", pfx, conns)
	case hsrc > hpfx:
		return fmt.Errorf("-max-half-open-per-source %d is above -max-half-open-per-prefix %d: raise that too", hsrc, hpfx)
	case hpfx > half:
		return fmt.Errorf("-max-half-open-per-prefix %d is above -max-half-open %d: raise that too", hpfx, half)
	}
	return nil
}

// ResetKeyFlag registers -reset-key-file on fs; LoadResetKey reads it.
func ResetKeyFlag(fs *flag.FlagSet) *string {
	return fs.String("reset-key-file", "", "file holding the stateless-reset key (one line of hex, 16..64 bytes; created with a fresh key if absent, mode 0600): with the same key after a restart, the old process's senders end at once (default: a key per process)")
}

// LoadResetKey reads (or creates) the -reset-key-file at path; "" gives nil.
func LoadResetKey(path string) ([]byte, error) {
	if path == "" {
		return nil, nil
	}
	return psk.LoadOrCreateKey("-reset-key-file", path)
}

// Limits returns the admission limits and the reset key of ec (the fields
// ServerConfig.Driver.Endpoint passes to the receiver's endpoint).
func Limits(ec transport.EndpointConfig) transport.EndpointConfig {
	return transport.EndpointConfig{
		MaxConns: ec.MaxConns, MaxHalfOpen: ec.MaxHalfOpen,
		MaxConnsPerSource: ec.MaxConnsPerSource, MaxConnsPerPrefix: ec.MaxConnsPerPrefix,
		MaxHalfOpenPerSource: ec.MaxHalfOpenPerSource, MaxHalfOpenPerPrefix: ec.MaxHalfOpenPerPrefix,
		EvictIdle: ec.EvictIdle, ResetKey: ec.ResetKey,
	}
}
