package spec

import (
	"fmt"
	"reflect"
	"strings"
	"testing"
)

type addTestConfig struct {
	Rate  float64 `param:"rate" help:"a rate"`
	Count int     `param:"count" help:"a count"`
}

// TestAdd checks that a component registered with Add starts from its
// defaults, gets the spec's parameters applied, and is built from that config
// with the environment.
func TestAdd(t *testing.T) {
	r := NewRegistry[addTestConfig, int]("test component")
	Add(r, "thing", "a test component",
		func() addTestConfig { return addTestConfig{Rate: 1, Count: 2} },
		func(c addTestConfig, env int) (addTestConfig, error) {
			c.Count += env
			return c, nil
		})
	for _, tc := range []struct {
		spec string
		want addTestConfig
	}{
		{"thing", addTestConfig{Rate: 1, Count: 12}},
		{"thing:rate=5", addTestConfig{Rate: 5, Count: 12}},
		{"thing:count=7,rate=0.5", addTestConfig{Rate: 0.5, Count: 17}},
	} {
		got, err := r.New(tc.spec, 10)
		if err != nil {
			t.Errorf("New(%q): %v", tc.spec, err)
			continue
		}
		if got != tc.want {
			t.Errorf("New(%q): got %+v, want %+v", tc.spec, got, tc.want)
		}
	}
	// Config exposes a pointer to the config struct, as with Register.
	_, cfg, err := r.Config("thing:count=3")
	if err != nil {
		t.Fatal(err)
	}
	if c, ok := cfg.(*addTestConfig); !ok || c.Count != 3 {
		t.Errorf("Config: got %#v, want *addTestConfig with Count 3", cfg)
	}
	if _, err := r.New("thing:bogus=1", 0); err == nil {
		t.Errorf("New with an unknown parameter: got nil error")
	}
}

// BenchmarkRegistryNew builds a component from a spec as a connection does
// for its controller: through the registry (fields listed once, at
// registration) and, side by side, through Apply (fields listed by
// reflection at every call, as the registry did before).
func BenchmarkRegistryNew(b *testing.B) {
	r := NewRegistry[addTestConfig, int]("test component")
	Add(r, "thing", "a test component",
		func() addTestConfig { return addTestConfig{Rate: 1, Count: 2} },
		func(c addTestConfig, env int) (addTestConfig, error) { return c, nil })
	for _, spec := range []string{"thing", "thing:count=7,rate=0.5"} {
		b.Run("registry/"+spec, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				if _, err := r.New(spec, 0); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run("apply/"+spec, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				name, params, _ := Split(spec)
				c := addTestConfig{Rate: 1, Count: 2}
				if err := apply(name, &c, params, fields(reflect.TypeFor[addTestConfig]())); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// TestValidateProbe: without a probe Validate only parses; with one it
// builds the component, so the constructor's range checks run at parse time.
func TestValidateProbe(t *testing.T) {
	r := NewRegistry[addTestConfig, int]("test component")
	Add(r, "thing", "a test component",
		func() addTestConfig { return addTestConfig{Count: 1} },
		func(c addTestConfig, limit int) (addTestConfig, error) {
			if c.Count > limit {
				return c, fmt.Errorf("thing: parameter count=%d: must be at most %d", c.Count, limit)
			}
			return c, nil
		})
	if err := r.Validate("thing:count=100"); err != nil {
		t.Errorf("no probe: Validate(count=100) = %v, want nil (parse only)", err)
	}
	r.SetProbe(func() int { return 10 })
	if err := r.Validate("thing:count=100"); err == nil || !strings.Contains(err.Error(), "count=100") {
		t.Errorf("probe: Validate(count=100) = %v, want the range error", err)
	}
	if err := r.Validate("thing:count=10"); err != nil {
		t.Errorf("probe: Validate(count=10) = %v, want nil", err)
	}
}

// TestValidateMemo: a spec that passed is not parsed or built again, by
// Validate or Parse (sender -cc: checked by perf, parsed by the endpoint);
// one that failed is checked (and fails) every time; the memo is bounded.
func TestValidateMemo(t *testing.T) {
	r := NewRegistry[addTestConfig, int]("test component")
	builds := 0
	Add(r, "thing", "a test component",
		func() addTestConfig { return addTestConfig{Count: 1} },
		func(c addTestConfig, limit int) (addTestConfig, error) {
			builds++
			if c.Count > limit {
				return c, fmt.Errorf("thing: parameter count=%d: must be at most %d", c.Count, limit)
			}
			return c, nil
		})
	r.SetProbe(func() int { return 10 })
	for _, tc := range []struct {
		spec       string
		ok         bool
		wantBuilds int // after validating it three times and parsing it once
	}{{"thing:count=5", true, 1}, {"thing:count=50", false, 4}, {"nothing", false, 0}} {
		builds = 0
		for range 3 {
			if err := r.Validate(tc.spec); (err == nil) != tc.ok {
				t.Errorf("Validate(%q) = %v, want ok %v", tc.spec, err, tc.ok)
			}
		}
		if _, err := r.Parse(tc.spec); (err == nil) != tc.ok {
			t.Errorf("Parse(%q) = %v, want ok %v", tc.spec, err, tc.ok)
		}
		if builds != tc.wantBuilds {
			t.Errorf("Validate(%q) three times and Parse: %d builds, want %d", tc.spec, builds, tc.wantBuilds)
		}
	}
	for i := range 2 * maxValidMemo {
		if err := r.Validate(fmt.Sprintf("thing:count=%d", i%10) + strings.Repeat(" ", i/10)); err != nil {
			t.Fatal(err)
		}
	}
	if n := len(r.parsed); n > maxValidMemo {
		t.Errorf("memo holds %d specs, want at most %d", n, maxValidMemo)
	}
}

// TestParsed: a parsed spec builds the same component as New, any number
// of times and independently (a build does not see what an earlier one's
// constructor did with its copy of the config); Parse refuses what
// Validate refuses, with the same error; the zero Parsed builds nothing.
func TestParsed(t *testing.T) {
	r := NewRegistry[addTestConfig, int]("test component")
	Add(r, "thing", "a test component",
		func() addTestConfig { return addTestConfig{Rate: 1, Count: 2} },
		func(c addTestConfig, env int) (addTestConfig, error) {
			if c.Count > 100 {
				return c, fmt.Errorf("thing: parameter count=%d: must be at most 100", c.Count)
			}
			c.Count += env // changes the constructor's copy only
			return c, nil
		})
	r.SetProbe(func() int { return 0 })
	p, err := r.Parse("thing:rate=5")
	if err != nil {
		t.Fatal(err)
	}
	for _, env := range []int{10, 20, 10} {
		want, _ := r.New("thing:rate=5", env)
		got, err := p.Build(env)
		if err != nil || got != want {
			t.Errorf("Build(%d) = %+v, %v; want %+v (as New)", env, got, err, want)
		}
	}
	if got := p.Name(); got != "thing" {
		t.Errorf("Name() = %q, want thing", got)
	}
	for _, bad := range []string{"thing:count=101", "thing:bogus=1", "nothing"} {
		_, err := r.Parse(bad)
		if verr := r.Validate(bad); err == nil || verr == nil || err.Error() != verr.Error() {
			t.Errorf("Parse(%q) error %v, want Validate's %v", bad, err, verr)
		}
	}
	var zero Parsed[addTestConfig, int]
	if _, err := zero.Build(0); err == nil || zero.Name() != "" {
		t.Errorf("zero Parsed: Build error %v, Name %q; want an error and \"\"", err, zero.Name())
	}
}

// TestSplitList checks that a comma-separated list of specifications splits
// at the commas that begin a registered name, and keeps the commas between a
// specification's own parameters.
func TestSplitList(t *testing.T) {
	r := NewRegistry[addTestConfig, int]("test component")
	for _, n := range []string{"thing", "other"} {
		Add(r, n, "a test component",
			func() addTestConfig { return addTestConfig{} },
			func(c addTestConfig, _ int) (addTestConfig, error) { return c, nil })
	}
	for _, tc := range []struct {
		in   string
		want []string
	}{
		{"thing", []string{"thing"}},
		{"thing,other", []string{"thing", "other"}},
		{"thing:rate=1,count=2,other", []string{"thing:rate=1,count=2", "other"}},
		{"thing, Other:count=3,rate=2 ,thing", []string{"thing", "Other:count=3,rate=2", "thing"}},
		{"nothing,rate=1,thing", []string{"nothing,rate=1", "thing"}},
		{"thing:flag,other:flag", []string{"thing:flag", "other:flag"}},
	} {
		if got := r.SplitList(tc.in); !reflect.DeepEqual(got, tc.want) {
			t.Errorf("SplitList(%q): got %q, want %q", tc.in, got, tc.want)
		}
	}
}
