package campaign

import (
	"strings"
	"testing"
	"time"
)

const goodSpec = `name: wan
hosts:
  - {name: zurich, agent: "10.0.0.1:5310", data: 10.0.0.1, group: europe}
  - {name: paris, agent: "10.0.0.2:5310", group: europe}
  - {name: boston, agent: "[2001:db8::3]:5310", data: "2001:db8::3", group: america}
pairs: all
variants: eth
transfer: {bytes: 10MB}
schedule: {rounds: 3, seed: 7, spacing: 2s, jitter: 1s, concurrency: 2, retries: 1, retry_delay: 5s, max_length: 24h}
credentials: {psk: campaign.psk}
`

func TestParseSpecGood(t *testing.T) {
	s, err := ParseSpec("c.yaml", []byte(goodSpec))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(s.Pairs), 6; got != want {
		t.Errorf("pairs: got %d, want %d (all ordered pairs of 3 hosts)", got, want)
	}
	if got, want := len(s.Variants), len(ETHSet); got != want {
		t.Errorf("variants: got %d, want %d", got, want)
	}
	if got, want := s.Host("paris").Data, "10.0.0.2"; got != want {
		t.Errorf("paris data address: got %q, want %q (the agent's host)", got, want)
	}
	if got, want := s.Transfer.Bytes, int64(10e6); got != want {
		t.Errorf("bytes: got %d, want %d", got, want)
	}
	sc := s.Schedule
	if sc.Rounds != 3 || sc.Seed != 7 || sc.Spacing != 2*time.Second || sc.Jitter != time.Second || sc.Concurrency != 2 ||
		sc.HostConcurrency != 1 || sc.Retries != 1 || sc.RetryDelay != 5*time.Second || sc.MaxLength != 24*time.Hour || sc.Timeout != DefaultSizedTimeout {
		t.Errorf("schedule: got %+v", sc)
	}
	// Every ETH variant's specs parse (the spec's own validation).
	for _, v := range ETHSet {
		if err := validateCC(v.CC); err != nil {
			t.Errorf("ETH variant %s: cc: %v", v.Name, err)
		}
		if err := validateRecovery(v.Recovery); err != nil {
			t.Errorf("ETH variant %s: recovery: %v", v.Name, err)
		}
	}
}

func TestParseSpecListed(t *testing.T) {
	src := strings.NewReplacer("pairs: all", "pairs: [{from: zurich, to: boston}, {from: boston, to: paris}]",
		"variants: eth", "variants: [{name: a, cc: cubic}, {name: b, cc: reno, recovery: sack}]",
		"transfer: {bytes: 10MB}", "transfer: {duration: 20s, max_datagram: 1400B, qlog: true}").Replace(goodSpec)
	s, err := ParseSpec("c.yaml", []byte(src))
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(s.Pairs), 2; got != want || s.Pairs[1] != (Pair{"boston", "paris"}) {
		t.Errorf("pairs: got %v, want %d with boston->paris second", s.Pairs, want)
	}
	if got, want := s.Variants[0].Recovery, "rack"; got != want {
		t.Errorf("default recovery: got %q, want %q", got, want)
	}
	if got, want := s.Schedule.Timeout, 20*time.Second+DefaultTimeoutSlack; got != want {
		t.Errorf("timeout: got %s, want %s", got, want)
	}
	if !s.Transfer.Qlog || s.Transfer.MaxDatagram != 1400 || s.Transfer.Seconds != 20 {
		t.Errorf("transfer: got %+v", s.Transfer)
	}
}

func TestParseSpecErrors(t *testing.T) {
	tests := []specErrorCase{
		{"unknown key", "pairs: all", "pairz: all", []string{"c.yaml:", "field pairz", `unknown field "pairz"`, "allowed: credentials, db, description, hosts, name, pairs, probe, relays, schedule, transfer, variants"}},
		{"probe without rate", "pairs: all", "pairs: all\nprobe: {bytes: 1MB}", []string{"probe", "rate"}},
		{"probe rate", "pairs: all", "pairs: all\nprobe: {rate: 20Gbit}", []string{"probe.rate", "at most 10Gbit"}},
		{"probe gain", "pairs: all", "pairs: all\nprobe: {rate: 10Mbit, gain: 0.5}", []string{"probe.gain", "above 1"}},
		{"probe bytes", "pairs: all", "pairs: all\nprobe: {rate: 10Mbit, bytes: 2GiB}", []string{"probe.bytes", "at most 1GiB"}},
		{"unknown host key", "group: america}", "continent: america}", []string{"hosts[2].continent", "allowed: agent, data, group, key, name"}},
		{"bad pairs", "pairs: all", "pairs: some", []string{"field pairs", `"some" is not allowed (allowed: all)`}},
		{"pair unknown host", "pairs: all", "pairs: [{from: zurich, to: tokyo}]", []string{"pairs[0].to", `unknown host "tokyo" (allowed: zurich, paris, boston)`}},
		{"pair self", "pairs: all", "pairs: [{from: zurich, to: zurich}]", []string{"pairs[0]", "itself"}},
		{"pair twice", "pairs: all", "pairs: [{from: zurich, to: paris}, {from: zurich, to: paris}]", []string{"pairs[1]", "given twice"}},
		{"bad variants", "variants: eth", "variants: ietf", []string{"field variants", "shorthand eth"}},
		{"bad cc", "variants: eth", "variants: [{name: x, cc: tahoe}]", []string{"variants[0].cc", "tahoe", "cubic"}},
		{"cc out of range", "variants: eth", "variants: [{name: x, cc: \"cubic:beta=2\"}]", []string{"variants[0].cc", "beta"}},
		{"bad recovery", "variants: eth", "variants: [{name: x, cc: reno, recovery: fastest}]", []string{"variants[0].recovery", "fastest", "sack"}},
		{"variant twice", "variants: eth", "variants: [{name: x, cc: reno}, {name: x, cc: vegas}]", []string{"variants[1].name", "given twice"}},
		{"variant no cc", "variants: eth", "variants: [{name: x}]", []string{"variants[0].cc", "missing required"}},
		{"bytes and duration", "transfer: {bytes: 10MB}", "transfer: {bytes: 10MB, duration: 1s}", []string{"field transfer", "exactly one of bytes"}},
		{"neither", "transfer: {bytes: 10MB}", "transfer: {qlog: true}", []string{"exactly one of bytes"}},
		{"bytes without unit", "bytes: 10MB", "bytes: 10", []string{"transfer.bytes", "without a unit"}},
		{"bad agent", `"10.0.0.2:5310"`, "paris", []string{"hosts[1].agent", "host:port"}},
		{"bad port", `"10.0.0.2:5310"`, `"10.0.0.2:99999"`, []string{"hosts[1].agent"}},
		{"host twice", "name: paris", "name: zurich", []string{"hosts[1].name", "given twice"}},
		{"bad host name", "name: paris", "name: \"par is\"", []string{"hosts[1].name", "not a name"}},
		{"one host", "  - {name: paris, agent: \"10.0.0.2:5310\", group: europe}\n  - {name: boston, agent: \"[2001:db8::3]:5310\", data: \"2001:db8::3\", group: america}\n", "", []string{"field hosts", "1 hosts"}},
		{"rounds zero", "rounds: 3", "rounds: 0", []string{"schedule.rounds", "below the minimum 1"}},
		{"rounds list", "rounds: 3", "rounds: [1, 2]", []string{"schedule.rounds", "want a value, got a list"}},
		{"bad duration", "spacing: 2s", "spacing: 2", []string{"schedule.spacing", "not a duration"}},
		{"negative jitter", "jitter: 1s", "jitter: -1s", []string{"schedule.jitter", "negative"}},
		{"bad seed", "seed: 7", "seed: -7", []string{"schedule.seed", "non-negative integer"}},
		{"short timeout", "max_length: 24h", "timeout: 10ms", []string{"schedule.timeout", "minimum 1s"}},
		{"unknown schedule key", "max_length: 24h", "length: 24h", []string{"schedule.length", "allowed: concurrency, host_concurrency, jitter, max_length, retries, retry_delay, rounds, seed, spacing, timeout"}},
		{"no credentials", "credentials: {psk: campaign.psk}\n", "", []string{"field credentials", "psk"}},
		{"identity alone", "psk: campaign.psk", "identity: id.key", []string{"field credentials", "authorized_keys"}},
		{"unknown credential", "psk: campaign.psk", "password: x", []string{"credentials.password", "allowed: authorized_keys, identity, psk"}},
		{"missing name", "name: wan\n", "", []string{`missing required field "name"`}},
		{"bad yaml", "pairs: all", "pairs: [all", []string{"c.yaml"}},
	}
	checkSpecErrors(t, goodSpec, tests)
}

// specErrorCase is a spec with old replaced by new, and substrings of the
// error it must give.
type specErrorCase struct {
	name, old, new string
	want           []string
}

// checkSpecErrors parses base with each case's change and checks its error.
func checkSpecErrors(t *testing.T, base string, tests []specErrorCase) {
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			src := strings.Replace(base, tc.old, tc.new, 1)
			if src == base {
				t.Fatalf("test case does not change the spec (%q not found)", tc.old)
			}
			_, err := ParseSpec("c.yaml", []byte(src))
			if err == nil {
				t.Fatalf("got no error, want one containing %q", tc.want)
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("got error %q, want it to contain %q", err, w)
				}
			}
		})
	}
}

// TestDigest: the digest changes with what is measured and not with pacing.
func TestDigest(t *testing.T) {
	parse := func(src string) string {
		s, err := ParseSpec("c.yaml", []byte(src))
		if err != nil {
			t.Fatal(err)
		}
		return s.Digest()
	}
	base := parse(goodSpec)
	for _, tc := range []struct {
		old, new string
		same     bool
	}{
		{"concurrency: 2", "concurrency: 1", true},
		{"spacing: 2s", "spacing: 1s", true},
		{"psk: campaign.psk", "psk: other.psk", true},
		{"rounds: 3", "rounds: 4", false},
		{"seed: 7", "seed: 8", false},
		{"bytes: 10MB", "bytes: 20MB", false},
		{"variants: eth", "variants: [{name: reno, cc: reno, recovery: reno}]", false},
	} {
		got := parse(strings.Replace(goodSpec, tc.old, tc.new, 1)) == base
		if got != tc.same {
			t.Errorf("%s -> %s: same digest %v, want %v", tc.old, tc.new, got, tc.same)
		}
	}
}

// FuzzParseSpec: any input gives a spec or an error naming the file, never
// a panic; a parsed spec has a plan of rounds × pairs × variants.
func FuzzParseSpec(f *testing.F) {
	f.Add([]byte(goodSpec))
	f.Add([]byte("name: x\nhosts: [{name: a, agent: \"a:1\"}, {name: b, agent: \"b:2\"}]\nvariants: [{name: v, cc: reno}]\ntransfer: {duration: 1s}\ncredentials: {psk: k}\n"))
	f.Add([]byte("a: &a [*a]\n"))
	f.Add([]byte("- - -\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		if len(b) > 4096 {
			return
		}
		s, err := ParseSpec("fuzz.yaml", b)
		if err != nil {
			if !strings.HasPrefix(err.Error(), "fuzz.yaml") {
				t.Errorf("error does not name the file: %v", err)
			}
			return
		}
		if n := s.Schedule.Rounds * len(s.Pairs) * len(s.Variants); n <= MaxPlan && n <= 100000 {
			if got := len(s.Plan()); got != n {
				t.Errorf("plan: got %d transfers, want %d", got, n)
			}
		}
	})
}
