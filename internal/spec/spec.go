// Package spec parses component specifications of the form
//
//	name[:key=value,key=value,flag,...]
//
// (for example "dca:x=2,w=20,reduction=0.5" or "red:min=5,max=15,maxp=0.1,ecn")
// into a configuration struct whose fields carry `param:"key"` tags, and keeps
// name registries of components built from such specifications. Errors name
// the component, the parameter and the allowed values.
package spec

import (
	"encoding"
	"fmt"
	"math"
	"reflect"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"
)

// KV is one parsed parameter. A bare token (no '=') has Bare set and Value
// empty: it sets a bool field to true, or fills the field tagged positional.
type KV struct {
	Key   string
	Value string
	Bare  bool
}

// Split splits "name:k=v,flag" into the name and its parameters.
func Split(s string) (name string, params []KV, err error) {
	s = strings.TrimSpace(s)
	name, rest, has := strings.Cut(s, ":")
	name = strings.ToLower(strings.TrimSpace(name))
	if name == "" {
		return "", nil, fmt.Errorf("empty name in %q", s)
	}
	if !has || strings.TrimSpace(rest) == "" {
		return name, nil, nil
	}
	for _, tok := range strings.Split(rest, ",") {
		tok = strings.TrimSpace(tok)
		if tok == "" {
			return "", nil, fmt.Errorf("%s: empty parameter in %q", name, s)
		}
		k, v, eq := strings.Cut(tok, "=")
		k = strings.ToLower(strings.TrimSpace(k))
		if eq {
			if k == "" {
				return "", nil, fmt.Errorf("%s: parameter %q has no name", name, tok)
			}
			params = append(params, KV{Key: k, Value: strings.TrimSpace(v)})
		} else {
			params = append(params, KV{Key: k, Bare: true})
		}
	}
	return name, params, nil
}

// Param describes one settable parameter of a config struct.
type Param struct {
	Key     string // name used in specs
	Type    string // int, float, bool, duration, string or a custom type's name
	Default string // default value, formatted
	Help    string // from the `help` tag: meaning and unit
}

type field struct {
	key        string
	positional bool
	index      []int
	help       string
}

// fields lists the tagged fields of struct type t, descending into embedded
// structs (so a controller config can embed a shared base config).
func fields(t reflect.Type) []field {
	var out []field
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		if f.Anonymous && f.Type.Kind() == reflect.Struct {
			if _, tagged := f.Tag.Lookup("param"); !tagged {
				for _, sub := range fields(f.Type) {
					sub.index = append([]int{i}, sub.index...)
					out = append(out, sub)
				}
				continue
			}
		}
		tag, ok := f.Tag.Lookup("param")
		if !ok || tag == "-" {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		out = append(out, field{key: name, positional: opts == "positional", index: f.Index, help: f.Tag.Get("help")})
	}
	return out
}

// Params lists the parameters of the config struct cfg points to, with the
// current values of cfg as defaults.
func Params(cfg any) []Param {
	v := reflect.ValueOf(cfg).Elem()
	var out []Param
	for _, f := range fields(v.Type()) {
		fv := v.FieldByIndex(f.index)
		out = append(out, Param{Key: f.key, Type: typeName(fv), Default: format(fv), Help: f.help})
	}
	return out
}

func keys(fs []field) string {
	var ks []string
	for _, f := range fs {
		ks = append(ks, f.key)
	}
	sort.Strings(ks)
	return strings.Join(ks, ", ")
}

// Apply sets the fields of the struct cfg points to from params. component
// names the thing being configured, for error messages.
func Apply(component string, cfg any, params []KV) error {
	return apply(component, cfg, params, nil)
}

// apply is Apply with the config type's fields, if known (a Registry lists
// them once, when a component is registered: reflecting on the struct tags
// at every connection's controller spec was ~5 % of a large simulation).
func apply(component string, cfg any, params []KV, fs []field) error {
	v := reflect.ValueOf(cfg)
	if v.Kind() != reflect.Pointer || v.Elem().Kind() != reflect.Struct {
		return fmt.Errorf("%s: config must be a pointer to a struct", component)
	}
	if len(params) == 0 {
		return nil
	}
	v = v.Elem()
	if fs == nil {
		fs = fields(v.Type())
	}
	for _, p := range params {
		var target *field
		for i := range fs {
			if fs[i].key == p.Key {
				target = &fs[i]
				break
			}
		}
		value := p.Value
		if target == nil && p.Bare {
			for i := range fs {
				if fs[i].positional {
					target = &fs[i]
					value = p.Key
					break
				}
			}
		}
		if target == nil {
			if len(fs) == 0 {
				return fmt.Errorf("%s: unknown parameter %q (it takes no parameters)", component, p.Key)
			}
			return fmt.Errorf("%s: unknown parameter %q (allowed: %s)", component, p.Key, keys(fs))
		}
		fv := v.FieldByIndex(target.index)
		if p.Bare && !target.positional && fv.Kind() == reflect.Bool {
			fv.SetBool(true)
			continue
		}
		if p.Bare && !target.positional {
			return fmt.Errorf("%s: parameter %q needs a value (%s=<%s>)", component, p.Key, p.Key, typeName(fv))
		}
		if err := set(fv, value); err != nil {
			return fmt.Errorf("%s: parameter %s=%q: %v", component, target.key, value, err)
		}
	}
	return nil
}

// ParseEnum parses text as one of an enumerated parameter's values, for
// the UnmarshalText of a parameter type: it returns the index in names of
// the value text spells (case and surrounding space ignored). A name may
// list aliases after its canonical spelling, separated by '|' ("mean|avg");
// the error names what and lists the canonical spellings.
func ParseEnum(text []byte, what string, names ...string) (int, error) {
	t := strings.ToLower(strings.TrimSpace(string(text)))
	allowed := make([]string, len(names))
	for i, n := range names {
		spellings := strings.Split(n, "|")
		if slices.Contains(spellings, t) {
			return i, nil
		}
		allowed[i] = spellings[0]
	}
	return 0, fmt.Errorf("not a %s (allowed: %s)", what, strings.Join(allowed, ", "))
}

var textUnmarshaler = reflect.TypeFor[encoding.TextUnmarshaler]()

func set(fv reflect.Value, s string) error {
	if fv.CanAddr() && fv.Addr().Type().Implements(textUnmarshaler) {
		return fv.Addr().Interface().(encoding.TextUnmarshaler).UnmarshalText([]byte(s))
	}
	if fv.Type() == reflect.TypeFor[time.Duration]() {
		d, err := time.ParseDuration(s)
		if err != nil {
			return fmt.Errorf("not a duration (examples: 100ms, 1.5s)")
		}
		fv.SetInt(int64(d))
		return nil
	}
	switch fv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		n, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not an integer")
		}
		fv.SetInt(n)
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		n, err := strconv.ParseUint(s, 10, 64)
		if err != nil {
			return fmt.Errorf("not a non-negative integer")
		}
		fv.SetUint(n)
	case reflect.Float32, reflect.Float64:
		f, err := strconv.ParseFloat(s, 64)
		if err != nil {
			return fmt.Errorf("not a number")
		}
		if math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("not a finite number")
		}
		fv.SetFloat(f)
	case reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return fmt.Errorf("not a boolean (true or false)")
		}
		fv.SetBool(b)
	case reflect.String:
		fv.SetString(s)
	default:
		return fmt.Errorf("unsupported parameter type %s", fv.Type())
	}
	return nil
}

func typeName(fv reflect.Value) string {
	if fv.Type() == reflect.TypeFor[time.Duration]() {
		return "duration"
	}
	if fv.CanAddr() && fv.Addr().Type().Implements(textUnmarshaler) {
		return fv.Type().Name()
	}
	switch fv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "int"
	case reflect.Float32, reflect.Float64:
		return "float"
	}
	return fv.Kind().String()
}

func format(fv reflect.Value) string {
	if s, ok := fv.Interface().(fmt.Stringer); ok {
		return s.String()
	}
	return fmt.Sprint(fv.Interface())
}

// Entry is one registered component: a name, a one-line description, a
// function returning a pointer to a config struct holding the defaults, and a
// constructor taking that config and an environment of type E. Build must
// neither modify cfg nor keep it: one parsed config builds any number of
// components (Parsed.Build).
type Entry[T, E any] struct {
	Name     string
	Doc      string
	Defaults func() any
	Build    func(cfg any, env E) (T, error)
}

// Registry maps names to components of type T built with environment E.
type Registry[T, E any] struct {
	kind    string
	entries map[string]Entry[T, E]
	fields  map[string][]field // each entry's config fields, listed when it is registered
	probe   func() E           // environment Validate builds with; nil: Validate only parses

	mu     sync.Mutex
	parsed map[string]Parsed[T, E] // specs that passed Validate, parsed (at most maxValidMemo)
}

// maxValidMemo bounds how many specs a Registry remembers parsed: a program
// checks a flag's spec where it is read and parses it again where the
// component is built (sender -cc: perf's check, then the endpoint), and a
// simulation of 65,000 transfers builds each spec twice per connection; a
// fuzzer or a long list of distinct specs must not grow it without bound.
const maxValidMemo = 64

// SetProbe makes Validate build the component with the environment probe
// returns and discard it, so that a spec is range-checked where it is parsed
// (a flag, a scenario file) rather than when the component is first needed
// (after a connection is set up). probe's environment must be the most
// demanding one the component can meet (e.g. the largest segment size), so
// a spec that passes builds in every real environment.
func (r *Registry[T, E]) SetProbe(probe func() E) {
	r.probe = probe
	r.forget()
}

// forget drops the memo of parsed specs (the rules changed).
func (r *Registry[T, E]) forget() {
	r.mu.Lock()
	clear(r.parsed)
	r.mu.Unlock()
}

// NewRegistry returns an empty registry; kind names the category in errors
// ("congestion controller", "queue discipline").
func NewRegistry[T, E any](kind string) *Registry[T, E] {
	return &Registry[T, E]{kind: kind, entries: map[string]Entry[T, E]{}, fields: map[string][]field{}, parsed: map[string]Parsed[T, E]{}}
}

// Register adds e; registering a name twice panics (a programming error).
func (r *Registry[T, E]) Register(e Entry[T, E]) {
	r.forget()
	if _, dup := r.entries[e.Name]; dup {
		panic("spec: duplicate " + r.kind + " " + e.Name)
	}
	r.entries[e.Name] = e
	if t := reflect.TypeOf(e.Defaults()); t != nil && t.Kind() == reflect.Pointer && t.Elem().Kind() == reflect.Struct {
		r.fields[e.Name] = fields(t.Elem())
	}
}

// Add registers the component name of r whose config struct is C: defaults
// returns the config a spec's parameters are applied to, and build makes the
// component from the resulting config. It is Register without the
// pointer-to-config plumbing of Entry.
func Add[T, E, C any](r *Registry[T, E], name, doc string, defaults func() C, build func(cfg C, env E) (T, error)) {
	r.Register(Entry[T, E]{
		Name: name,
		Doc:  doc,
		Defaults: func() any {
			c := defaults()
			return &c
		},
		Build: func(cfg any, env E) (T, error) { return build(*cfg.(*C), env) },
	})
}

// Names returns the registered names, sorted.
func (r *Registry[T, E]) Names() []string {
	var ns []string
	for n := range r.entries {
		ns = append(ns, n)
	}
	sort.Strings(ns)
	return ns
}

// Lookup returns the entry registered under name.
func (r *Registry[T, E]) Lookup(name string) (Entry[T, E], bool) {
	e, ok := r.entries[name]
	return e, ok
}

// SplitList splits a comma-separated list of specifications, such as a
// flag's "newreno,rack:echo=cum,rtorearm,prr:lostretx", into its
// specifications. A comma also separates a specification's parameters, so a
// token starts a new specification only if the name before its ':' (or the
// whole token) is registered; any other token is a parameter of the
// specification before it. A first token that names nothing registered is
// kept as it is, for the parser to reject with its own message.
func (r *Registry[T, E]) SplitList(s string) []string {
	var out []string
	for _, tok := range strings.Split(s, ",") {
		name, _, _ := strings.Cut(tok, ":")
		if _, ok := r.Lookup(strings.ToLower(strings.TrimSpace(name))); ok || len(out) == 0 {
			out = append(out, strings.TrimSpace(tok))
			continue
		}
		out[len(out)-1] += "," + strings.TrimSpace(tok)
	}
	return out
}

// Config parses s and returns the entry and its config with the parameters
// applied to the defaults, without building the component.
func (r *Registry[T, E]) Config(s string) (Entry[T, E], any, error) {
	name, params, err := Split(s)
	if err != nil {
		return Entry[T, E]{}, nil, fmt.Errorf("%s spec: %v", r.kind, err)
	}
	e, ok := r.entries[name]
	if !ok {
		return Entry[T, E]{}, nil, fmt.Errorf("unknown %s %q (allowed: %s)", r.kind, name, strings.Join(r.Names(), ", "))
	}
	cfg := e.Defaults()
	if err := apply(name, cfg, params, r.fields[name]); err != nil {
		return Entry[T, E]{}, nil, err
	}
	return e, cfg, nil
}

// New parses s ("name:k=v,...") and builds the component with env.
func (r *Registry[T, E]) New(s string, env E) (T, error) {
	e, cfg, err := r.Config(s)
	if err != nil {
		var zero T
		return zero, err
	}
	return e.Build(cfg, env)
}

// Parsed is a specification parsed and checked once (Registry.Parse), to
// build components from any number of times without parsing it again: a
// simulation of short transfers builds a controller and a recovery strategy
// per connection, tens of thousands from one flow's spec. The zero Parsed
// builds nothing (Build returns an error).
type Parsed[T, E any] struct {
	e   *Entry[T, E]
	cfg any // the spec's parameters applied to the entry's defaults
}

// Parse parses and checks s as Validate does and returns it parsed. A spec
// is parsed once: a spec that passed is remembered parsed, so Validate and
// Parse of it again cost a map look-up.
func (r *Registry[T, E]) Parse(s string) (Parsed[T, E], error) {
	r.mu.Lock()
	p, ok := r.parsed[s]
	r.mu.Unlock()
	if ok {
		return p, nil
	}
	e, cfg, err := r.Config(s)
	if err != nil {
		return Parsed[T, E]{}, err
	}
	if r.probe != nil {
		if _, err = e.Build(cfg, r.probe()); err != nil {
			return Parsed[T, E]{}, err
		}
	}
	p = Parsed[T, E]{&e, cfg}
	r.mu.Lock()
	if len(r.parsed) < maxValidMemo {
		r.parsed[s] = p
	}
	r.mu.Unlock()
	return p, nil
}

// Build builds the component with env, as Registry.New does with the spec.
func (p Parsed[T, E]) Build(env E) (T, error) {
	if p.e == nil {
		var zero T
		return zero, fmt.Errorf("spec: Build of an unparsed spec")
	}
	return p.e.Build(p.cfg, env)
}

// Name returns the component's registered name ("" for the zero Parsed).
func (p Parsed[T, E]) Name() string {
	if p.e == nil {
		return ""
	}
	return p.e.Name
}

// Validate parses s and checks its parameters: their names and types, and,
// when the registry has a probe environment (SetProbe), their ranges, by
// building the component once with it (Parse, which remembers it).
func (r *Registry[T, E]) Validate(s string) error {
	_, err := r.Parse(s)
	return err
}
