// Package campaign runs measurement campaigns across hosts (docs/campaigns.md):
// a spec (hosts, pairs, variants, transfer, schedule), a deterministic plan
// of transfers, a scheduler that drives them through a Runner (the agents of
// package agent) with at most one transfer per path and per host at a time,
// and the campaign tables of the results database, one row per finished
// transfer, so that a campaign resumes after a crash.
package campaign

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"go.yaml.in/yaml/v3"

	"cclab/ccalgo"
	"cclab/scenario"
	"cclab/transport"
)

// Spec is a parsed campaign spec (docs/campaigns.md, "The spec").
type Spec struct {
	Name        string
	Description string
	Hosts       []Host
	Pairs       []Pair // ordered (sender, receiver); "all" expands to every ordered pair
	Variants    []Variant
	// Relays are the bottleneck relays pairs cross (spec field relays);
	// Via maps a pair to its relay's name (pairs[].via).
	Relays      []Relay
	Via         map[Pair]string
	Transfer    TransferSettings
	Probe       *ProbeSettings // nil: no probe phase
	Schedule    Schedule
	Credentials CredentialFiles
	DB          string // results database (SQLite file or PostgreSQL URL); "" = store.DefaultDB
	// Source is the spec's YAML text, File its file name.
	Source []byte
	File   string
}

// Host is one measurement host running `cclab agent`.
type Host struct {
	Name  string
	Agent string // the agent's control address, host:port
	Data  string // the address other agents reach this host's data port at (host name or IP)
	Group string // e.g. a continent; a path is intra-group or inter-group
	// Key is the name of the host's agent key in credentials.authorized_keys
	// (spec field key; default: the host's name). With Ed25519 credentials
	// the agent at Agent must authenticate with that key, or its transfers
	// fail as unauthorized: results are never stored under the wrong host
	// (a PSK names the campaign's shared key, not an agent: no check).
	Key string
}

// KeyName returns the name of the key the host's agent must authenticate
// with: Key, or the host's name.
func (h Host) KeyName() string {
	if h.Key != "" {
		return h.Key
	}
	return h.Name
}

// Pair is one ordered path: From sends to To.
type Pair struct{ From, To string }

// String returns "from->to".
func (p Pair) String() string { return p.From + "->" + p.To }

// Variant is one controller × recovery combination.
type Variant struct {
	Name     string
	CC       string // ccalgo spec
	Recovery string // transport recovery spec
}

// TransferSettings is what every transfer sends.
type TransferSettings struct {
	Bytes       int64   // bytes to send, or
	Seconds     float64 // how long to send
	MaxDatagram int     // bytes; 0 = the sender's default
	Qlog        bool    // store both qlogs
}

// ProbeSettings is the spec's probe phase (docs/campaigns.md, "Probing"):
// one transfer per pair with the path probe (ccalgo.Probe), before the
// campaign's transfers and alone on the network, that fills the
// bottleneck's queue so that the profile measures its rate and buffer.
type ProbeSettings struct {
	Rate  float64 // the probe's start rate and the most it paces at, bits/s
	Gain  float64 // it paces at Gain × the delivery rate after the start
	Bytes int64   // bytes each probe sends
}

// Probe defaults and bounds.
const (
	DefaultProbeGain  = 1.5
	DefaultProbeBytes = 1 << 20
	MaxProbeBytes     = 1 << 30
)

// Schedule is when and how the transfers run.
type Schedule struct {
	Rounds          int           // every pair × variant once per round
	Seed            uint64        // the seed of the variants' order and of the jitter
	Spacing         time.Duration // pause of a host between two of its transfers
	Jitter          time.Duration // plus a uniform random [0, Jitter) pause
	MaxLength       time.Duration // no transfer starts this long after the campaign's first (0 = unbounded)
	Concurrency     int           // transfers at once across disjoint paths
	HostConcurrency int           // transfers a host takes part in at once
	Timeout         time.Duration // one transfer's bound, dial to results
	Retries         int           // attempts after a failed one
	RetryDelay      time.Duration // before a failed transfer's next attempt
}

// CredentialFiles are the files of the campaign's agent credentials
// (agent.LoadCredentials), relative paths taken from the spec's directory.
type CredentialFiles struct {
	PSK            string
	Identity       string
	AuthorizedKeys string
}

// Defaults of the optional spec fields.
const (
	DefaultRounds          = 1
	DefaultConcurrency     = 1
	DefaultHostConcurrency = 1
	DefaultRetries         = 2
	DefaultRetryDelay      = 30 * time.Second
	DefaultSpacing         = time.Second
	// DefaultTimeoutSlack is added to a timed transfer's duration for its
	// default timeout (dial, handshake, results); a sized transfer's default
	// timeout is DefaultSizedTimeout.
	DefaultTimeoutSlack = time.Minute
	DefaultSizedTimeout = 10 * time.Minute
)

// Limits of the spec's values.
const (
	MaxHosts    = 1000
	MaxRounds   = 100000
	MaxVariants = 100
	MaxRetries  = 100
	MaxPlan     = 10000000 // transfers in the plan (rounds × pairs × variants)
)

// ETHSet is the `eth` variants shorthand: the ETH study's senders as cclab
// names them (docs/campaigns.md, "The spec"). Vegas runs with NewReno's
// recovery, the recovery of the Vegas sender the study measured (Linux's
// Vegas module leaves recovery to the stack's NewReno).
var ETHSet = []Variant{
	{"reno", "reno", "reno"},
	{"newreno", "reno", "newreno"},
	{"sack", "reno", "sack"},
	{"fack", "reno", "fack"},
	{"ratehalving", "reno", "ratehalving"},
	{"ratehalving+lostretx", "reno", "ratehalving:lostretx"},
	{"vegas", "vegas", "newreno"},
}

// VariantsShorthand names the shorthands the variants field accepts.
const VariantsShorthand = "eth"

// LoadSpec reads and parses a campaign spec file; relative credential
// paths are resolved against its directory.
func LoadSpec(path string) (*Spec, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	s, err := ParseSpec(path, b)
	if err != nil {
		return nil, err
	}
	dir := filepath.Dir(path)
	for _, p := range []*string{&s.Credentials.PSK, &s.Credentials.Identity, &s.Credentials.AuthorizedKeys} {
		if *p != "" && !filepath.IsAbs(*p) {
			*p = filepath.Join(dir, *p)
		}
	}
	return s, nil
}

func validateCC(s string) error       { return ccalgo.Registry.Validate(s) }
func validateRecovery(s string) error { _, err := transport.ParseRecoverySpec(s); return err }

// ParseSpec parses a campaign spec's YAML text; file names it in errors
// (an *scenario.Error: file, line, field and the allowed values).
func ParseSpec(file string, src []byte) (*Spec, error) {
	y, doc, err := scenario.ParseYAML(file, src)
	if err != nil {
		return nil, err
	}
	s := &Spec{Source: src, File: file, Schedule: Schedule{Rounds: DefaultRounds, Concurrency: DefaultConcurrency,
		HostConcurrency: DefaultHostConcurrency, Retries: DefaultRetries, RetryDelay: DefaultRetryDelay, Spacing: DefaultSpacing}}
	var pairsNode, variantsNode, relaysNode *yaml.Node
	hostIndex := map[string]int{}
	str := func(dst *string) scenario.FieldFunc {
		return func(n *yaml.Node, p string) (err error) { *dst, err = y.Str(n, p); return err }
	}
	err = y.Mapping(doc, "", map[string]scenario.FieldFunc{
		"name":        func(n *yaml.Node, p string) (err error) { s.Name, err = name(y, n, p); return err },
		"description": str(&s.Description),
		"hosts": func(n *yaml.Node, p string) error {
			items, err := y.List(n, p, "hosts")
			if err != nil {
				return err
			}
			if len(items) < 2 || len(items) > MaxHosts {
				return y.Errorf(n, p, "%d hosts: a campaign needs 2 to %d", len(items), MaxHosts)
			}
			for i, it := range items {
				h, err := host(y, it, fmt.Sprintf("%s[%d]", p, i))
				if err != nil {
					return err
				}
				if _, dup := hostIndex[h.Name]; dup {
					return y.Errorf(it, fmt.Sprintf("%s[%d].name", p, i), "host %q is given twice", h.Name)
				}
				hostIndex[h.Name] = i
				s.Hosts = append(s.Hosts, h)
			}
			return nil
		},
		"pairs":    func(n *yaml.Node, p string) error { pairsNode = n; return nil },
		"relays":   func(n *yaml.Node, p string) error { relaysNode = n; return nil },
		"variants": func(n *yaml.Node, p string) error { variantsNode = n; return nil },
		"transfer": func(n *yaml.Node, p string) error { return transfer(y, n, p, &s.Transfer) },
		"schedule": func(n *yaml.Node, p string) error { return schedule(y, n, p, &s.Schedule) },
		"probe":    func(n *yaml.Node, p string) (err error) { s.Probe, err = probe(y, n, p); return err },
		"credentials": func(n *yaml.Node, p string) error {
			return y.Mapping(n, p, map[string]scenario.FieldFunc{
				"psk":             str(&s.Credentials.PSK),
				"identity":        str(&s.Credentials.Identity),
				"authorized_keys": str(&s.Credentials.AuthorizedKeys),
			})
		},
		"db": str(&s.DB),
	}, "name", "hosts", "variants", "transfer")
	if err != nil {
		return nil, err
	}
	var via map[Pair]*yaml.Node
	if s.Pairs, via, err = pairs(y, pairsNode, hostIndex, s.Hosts); err != nil {
		return nil, err
	}
	relayNodes := []*yaml.Node(nil)
	if s.Relays, relayNodes, err = relays(y, relaysNode); err != nil {
		return nil, err
	}
	if err := checkVia(y, s, via, relayNodes); err != nil {
		return nil, err
	}
	if s.Variants, err = variants(y, variantsNode); err != nil {
		return nil, err
	}
	c := s.Credentials
	if c.PSK == "" && c.Identity == "" {
		return nil, y.Errorf(doc, "credentials", "missing: give psk (a key file) and/or identity with authorized_keys (docs/campaigns.md, \"Keys\")")
	}
	if (c.Identity == "") != (c.AuthorizedKeys == "") {
		return nil, y.Errorf(doc, "credentials", "identity and authorized_keys go together (the agents' public keys authenticate them)")
	}
	if n := s.Schedule.Rounds * len(s.Pairs) * len(s.Variants); n > MaxPlan {
		return nil, y.Errorf(doc, "schedule.rounds", "%d transfers (rounds × pairs × variants) is above the maximum %d", n, MaxPlan)
	}
	if s.Schedule.Timeout == 0 {
		s.Schedule.Timeout = DefaultSizedTimeout
		if s.Transfer.Seconds > 0 {
			s.Schedule.Timeout = time.Duration(s.Transfer.Seconds*float64(time.Second)) + DefaultTimeoutSlack
		}
	}
	return s, nil
}

// name decodes a name: letters, digits, '-', '_', '.', '+' (it appears in
// transfer IDs and file names).
func name(y *scenario.YAMLDecoder, n *yaml.Node, p string) (string, error) {
	v, err := y.Str(n, p)
	if err != nil {
		return "", err
	}
	if v == "" || len(v) > 64 || strings.IndexFunc(v, func(r rune) bool {
		return !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || strings.ContainsRune("-_.+", r))
	}) >= 0 {
		return "", y.Errorf(n, p, "%q is not a name (1 to 64 of letters, digits, '-', '_', '.', '+')", v)
	}
	return v, nil
}

// hostPort decodes a host:port address (what, e.g. "an agent address",
// and an example name it in the error).
func hostPort(y *scenario.YAMLDecoder, n *yaml.Node, p, what, example string) (string, error) {
	v, err := y.Str(n, p)
	if err != nil {
		return "", err
	}
	hp, port, err := net.SplitHostPort(v)
	if pn, perr := strconv.Atoi(port); err != nil || hp == "" || perr != nil || pn < 1 || pn > 65535 {
		return "", y.Errorf(n, p, "%q is not %s (host:port, e.g. %s)", v, what, example)
	}
	return v, nil
}

func host(y *scenario.YAMLDecoder, n *yaml.Node, p string) (Host, error) {
	var h Host
	err := y.Mapping(n, p, map[string]scenario.FieldFunc{
		"name": func(n *yaml.Node, p string) (err error) { h.Name, err = name(y, n, p); return err },
		"agent": func(n *yaml.Node, p string) (err error) {
			h.Agent, err = hostPort(y, n, p, "an agent address", "zurich.example.net:5310 or [2001:db8::1]:5310")
			return err
		},
		"data": func(n *yaml.Node, p string) (err error) {
			h.Data, err = y.Str(n, p)
			if err == nil && (h.Data == "" || strings.ContainsAny(h.Data, " /")) {
				err = y.Errorf(n, p, "%q is not a host name or IP address", h.Data)
			}
			return err
		},
		"group": func(n *yaml.Node, p string) (err error) { h.Group, err = name(y, n, p); return err },
		"key":   func(n *yaml.Node, p string) (err error) { h.Key, err = y.Str(n, p); return err },
	}, "name", "agent")
	if err == nil && h.Data == "" {
		h.Data, _, _ = net.SplitHostPort(h.Agent)
	}
	return h, err
}

// pairs decodes the pairs (all, or a list) and returns each listed pair's
// via node (pairs[].via: a relay's name, checked by checkVia).
func pairs(y *scenario.YAMLDecoder, n *yaml.Node, index map[string]int, hosts []Host) ([]Pair, map[Pair]*yaml.Node, error) {
	var out []Pair
	if n == nil || !scenario.IsList(n) {
		if n != nil {
			if _, err := y.Enum(n, "pairs", "all"); err != nil {
				return nil, nil, err
			}
		}
		for _, a := range hosts {
			for _, b := range hosts {
				if a.Name != b.Name {
					out = append(out, Pair{a.Name, b.Name})
				}
			}
		}
		return out, nil, nil
	}
	items, err := y.List(n, "pairs", "pairs")
	if err != nil {
		return nil, nil, err
	}
	if len(items) == 0 {
		return nil, nil, y.Errorf(n, "pairs", "empty list: give pairs ({from: A, to: B}) or all")
	}
	seen := map[Pair]bool{}
	via := map[Pair]*yaml.Node{}
	for i, it := range items {
		p := fmt.Sprintf("pairs[%d]", i)
		var pr Pair
		hostRef := func(dst *string) scenario.FieldFunc {
			return func(n *yaml.Node, p string) error {
				v, err := y.Str(n, p)
				if err != nil {
					return err
				}
				if _, ok := index[v]; !ok {
					return y.Errorf(n, p, "unknown host %q (allowed: %s)", v, hostNames(hosts))
				}
				*dst = v
				return nil
			}
		}
		var viaNode *yaml.Node
		if err := y.Mapping(it, p, map[string]scenario.FieldFunc{"from": hostRef(&pr.From), "to": hostRef(&pr.To),
			"via": func(n *yaml.Node, p string) error { viaNode = n; return nil }}, "from", "to"); err != nil {
			return nil, nil, err
		}
		if pr.From == pr.To {
			return nil, nil, y.Errorf(it, p, "a host cannot send to itself (%s)", pr)
		}
		if seen[pr] {
			return nil, nil, y.Errorf(it, p, "pair %s is given twice", pr)
		}
		seen[pr] = true
		if viaNode != nil {
			via[pr] = viaNode
		}
		out = append(out, pr)
	}
	return out, via, nil
}

func hostNames(hosts []Host) string {
	var ns []string
	for _, h := range hosts {
		ns = append(ns, h.Name)
	}
	return strings.Join(ns, ", ")
}

func variants(y *scenario.YAMLDecoder, n *yaml.Node) ([]Variant, error) {
	if !scenario.IsList(n) {
		if _, err := y.Enum(n, "variants", VariantsShorthand); err != nil {
			return nil, y.Errorf(n, "variants", "want a list of variants ({name, cc, recovery}) or the shorthand %s", VariantsShorthand)
		}
		return append([]Variant(nil), ETHSet...), nil
	}
	items, err := y.List(n, "variants", "variants")
	if err != nil {
		return nil, err
	}
	if len(items) == 0 || len(items) > MaxVariants {
		return nil, y.Errorf(n, "variants", "%d variants: give 1 to %d", len(items), MaxVariants)
	}
	var out []Variant
	seen := map[string]bool{}
	for i, it := range items {
		p := fmt.Sprintf("variants[%d]", i)
		var v Variant
		err := y.Mapping(it, p, map[string]scenario.FieldFunc{
			"name":     func(n *yaml.Node, p string) (err error) { v.Name, err = name(y, n, p); return err },
			"cc":       func(n *yaml.Node, p string) (err error) { v.CC, err = y.Spec(n, p, validateCC); return err },
			"recovery": func(n *yaml.Node, p string) (err error) { v.Recovery, err = y.Spec(n, p, validateRecovery); return err },
		}, "name", "cc")
		if err != nil {
			return nil, err
		}
		if v.Recovery == "" {
			v.Recovery = transport.DefaultRecovery
		}
		if seen[v.Name] {
			return nil, y.Errorf(it, p+".name", "variant %q is given twice", v.Name)
		}
		seen[v.Name] = true
		out = append(out, v)
	}
	return out, nil
}

func transfer(y *scenario.YAMLDecoder, n *yaml.Node, p string, t *TransferSettings) error {
	err := y.Mapping(n, p, map[string]scenario.FieldFunc{
		"bytes": func(n *yaml.Node, p string) (err error) {
			if t.Bytes, err = y.Bytes(n, p); err == nil && t.Bytes <= 0 {
				err = y.Errorf(n, p, "must be positive")
			}
			return err
		},
		"duration": func(n *yaml.Node, p string) error {
			d, err := y.Duration(n, p)
			if err == nil && (d < 100*time.Millisecond || d > 24*time.Hour) {
				err = y.Errorf(n, p, "%s is outside 100ms..24h", d)
			}
			t.Seconds = d.Seconds()
			return err
		},
		"max_datagram": func(n *yaml.Node, p string) (err error) {
			b, err := y.Bytes(n, p)
			if err == nil && (b < 1200 || b > 65527) {
				err = y.Errorf(n, p, "%dB is outside 1200B..65527B", b)
			}
			t.MaxDatagram = int(b)
			return err
		},
		"qlog": func(n *yaml.Node, p string) (err error) { t.Qlog, err = y.Boolean(n, p); return err },
	})
	if err != nil {
		return err
	}
	if (t.Bytes > 0) == (t.Seconds > 0) {
		return y.Errorf(n, p, "give exactly one of bytes (e.g. 10MB) and duration (e.g. 30s)")
	}
	return nil
}

func probe(y *scenario.YAMLDecoder, n *yaml.Node, p string) (*ProbeSettings, error) {
	ps := &ProbeSettings{Gain: DefaultProbeGain, Bytes: DefaultProbeBytes}
	err := y.Mapping(n, p, map[string]scenario.FieldFunc{
		"rate": func(n *yaml.Node, p string) (err error) {
			if ps.Rate, err = y.Rate(n, p); err == nil && !(ps.Rate > 0 && ps.Rate <= ccalgo.MaxProbeRate) {
				err = y.Errorf(n, p, "must be above 0 and at most 10Gbit")
			}
			return err
		},
		"gain": func(n *yaml.Node, p string) (err error) {
			v, err := y.Str(n, p)
			if err != nil {
				return err
			}
			if ps.Gain, err = strconv.ParseFloat(v, 64); err != nil || !(ps.Gain > 1 && ps.Gain <= ccalgo.MaxProbeGain) {
				return y.Errorf(n, p, "%q: must be a number above 1 and at most %d", v, ccalgo.MaxProbeGain)
			}
			return nil
		},
		"bytes": func(n *yaml.Node, p string) (err error) {
			if ps.Bytes, err = y.Bytes(n, p); err == nil && (ps.Bytes <= 0 || ps.Bytes > MaxProbeBytes) {
				err = y.Errorf(n, p, "must be positive and at most 1GiB")
			}
			return err
		},
	}, "rate")
	if err == nil {
		if verr := validateCC(ps.CC()); verr != nil {
			err = y.Errorf(n, p, "%v", verr)
		}
	}
	return ps, err
}

func schedule(y *scenario.YAMLDecoder, n *yaml.Node, p string, s *Schedule) error {
	dur := func(dst *time.Duration) scenario.FieldFunc {
		return func(n *yaml.Node, p string) (err error) { *dst, err = y.Duration(n, p); return err }
	}
	integer := func(dst *int, min, max int) scenario.FieldFunc {
		return func(n *yaml.Node, p string) (err error) { *dst, err = y.Integer(n, p, min, max); return err }
	}
	return y.Mapping(n, p, map[string]scenario.FieldFunc{
		"rounds":           integer(&s.Rounds, 1, MaxRounds),
		"seed":             func(n *yaml.Node, p string) (err error) { s.Seed, err = y.Uint64(n, p); return err },
		"spacing":          dur(&s.Spacing),
		"jitter":           dur(&s.Jitter),
		"max_length":       dur(&s.MaxLength),
		"concurrency":      integer(&s.Concurrency, 1, MaxHosts/2),
		"host_concurrency": integer(&s.HostConcurrency, 1, 64),
		"timeout": func(n *yaml.Node, p string) (err error) {
			if s.Timeout, err = y.Duration(n, p); err == nil && s.Timeout < time.Second {
				err = y.Errorf(n, p, "%s is below the minimum 1s", s.Timeout)
			}
			return err
		},
		"retries":     integer(&s.Retries, 0, MaxRetries),
		"retry_delay": dur(&s.RetryDelay),
	})
}

// Digest identifies what the spec measures: hosts, pairs, variants,
// transfer and the plan's rounds and seed (not the pacing, concurrency,
// retries, credentials or database, which may change between resumptions).
// Stored transfers of the same campaign name and digest are not repeated.
func (s *Spec) Digest() string {
	var via []string // pairs' relays, in pair order (absent without relays: older digests stay)
	for _, p := range s.Pairs {
		if r, ok := s.Via[p]; ok {
			via = append(via, p.String()+" via "+r)
		}
	}
	b, _ := json.Marshal(struct {
		Hosts    []Host
		Pairs    []Pair
		Variants []Variant
		Transfer TransferSettings
		Rounds   int
		Seed     uint64
		Relays   []Relay        `json:",omitempty"`
		Via      []string       `json:",omitempty"`
		Probe    *ProbeSettings `json:",omitempty"`
	}{s.Hosts, s.Pairs, s.Variants, s.Transfer, s.Schedule.Rounds, s.Schedule.Seed, s.Relays, via, s.Probe})
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:8])
}

// Host returns the named host.
func (s *Spec) Host(name string) Host {
	for _, h := range s.Hosts {
		if h.Name == name {
			return h
		}
	}
	return Host{}
}
