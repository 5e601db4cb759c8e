package scenario

import (
	"fmt"
	"math"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.yaml.in/yaml/v3"

	"cclab/internal/units"
	"cclab/qdisc"
	"cclab/traffic"
	"cclab/transport"
)

// The scenario format is described once, by the fields of Scenario and the
// types under it: a field's json tag names it (in YAML files and in the
// JSON a point's identity hashes alike), its scenario tag gives its kind
// (how its value is parsed, checked and written: the kinds table) and
// whether it is required, and its doc tag says what it means. Decoding
// (decoder.fields), emitting (Scenario.YAML) and the field reference of
// docs/scenarios.md (reference) all walk these tags.
//
//	scenario:"KIND[,required][,name=KEY]"  (KEY: the YAML key when the JSON name is "-")

// kind is how one kind of value is read from a scenario file and written
// back.
type kind struct {
	form   string                                                             // the value's form, for the field reference
	decode func(d *decoder, n *yaml.Node, path string, v reflect.Value) error // sets v (aliases and sweeps resolved by d)
	emit   func(v reflect.Value) string                                       // the value as YAML text; nil: a mapping or a list of mappings, written field by field
}

// scalar is a kind whose value parse reads from one scalar (d.value: a
// sweep picks one) and format writes.
func scalar[T any](form string, parse func(d *decoder, n *yaml.Node, path string) (T, error), format func(T) string) kind {
	return kind{form: form,
		decode: func(d *decoder, n *yaml.Node, path string, v reflect.Value) error {
			x, err := parse(d, n, path)
			v.Set(reflect.ValueOf(x))
			return err
		},
		emit: func(v reflect.Value) string { return format(v.Interface().(T)) },
	}
}

// positive is a duration kind that must be above 0 and at most max (0: no
// bound); msg explains the bound.
func positive(form string, max time.Duration, msg string) kind {
	return scalar(form, func(d *decoder, n *yaml.Node, p string) (time.Duration, error) {
		t, err := d.duration(n, p)
		if err == nil && (t <= 0 || max > 0 && t > max) {
			s, _ := d.scalar(n, p)
			err = d.errAt(s, p, "%v: %s", t, msg)
		}
		return t, err
	}, dur)
}

// spec is a component spec kind checked by validate.
func specKind(form string, validate func(string) error) kind {
	return scalar(form, func(d *decoder, n *yaml.Node, p string) (string, error) { return d.spec(n, p, validate) }, quote)
}

// enum is a kind with a fixed set of values.
func enum(allowed ...string) kind {
	return scalar("one of "+strings.Join(allowed, ", "), func(d *decoder, n *yaml.Node, p string) (string, error) {
		return d.enum(n, p, allowed...)
	}, func(s string) string { return s })
}

// integer is an integer kind in [min, max].
func integer(min, max int) kind {
	return scalar(fmt.Sprintf("an integer, %d..%d", min, max), func(d *decoder, n *yaml.Node, p string) (int, error) {
		return d.integerIn(n, p, min, max)
	}, strconv.Itoa)
}

// mapped is a kind whose value one decodes from a mapping or a list of
// mappings (structured: written field by field).
func mapped[T any](form string, one func(d *decoder, n *yaml.Node, path string) (T, error)) kind {
	return kind{form: form, decode: func(d *decoder, n *yaml.Node, path string, v reflect.Value) error {
		x, err := one(d, n, path)
		v.Set(reflect.ValueOf(x))
		return err
	}}
}

var kinds map[string]kind

func init() {
	formatFloat := func(x float64) string { return strconv.FormatFloat(x, 'g', -1, 64) }
	bytesKind := scalar("a size with a unit: 1500B, 64KiB", (*decoder).size, func(b int) string { return strconv.Itoa(b) + "B" })
	kinds = map[string]kind{
		"text": scalar("text", (*decoder).str, quote),
		"name": scalar("text, not empty", func(d *decoder, n *yaml.Node, p string) (string, error) {
			s, err := d.str(n, p)
			if err == nil && s == "" {
				err = d.errAt(n, p, "must not be empty")
			}
			return s, err
		}, quote),
		"duration": scalar("a duration: 7.5ms, 2s", (*decoder).duration, dur),
		"runlength": positive("a duration, above 0 and at most "+shortDur(MaxDuration), MaxDuration,
			fmt.Sprintf("must be positive (e.g. 15s) and at most %v", MaxDuration)),
		"interval": positive("a duration above 0", 0, "must be positive (e.g. 100ms)"),
		"rtt":      positive("a duration above 0", 0, "must be positive (the round-trip propagation delay, e.g. 80ms)"),
		"min_rto": positive("a duration, above 0 and at most "+shortDur(MaxMinRTO), MaxMinRTO,
			fmt.Sprintf("must be above 0 and at most %v (RFC 6298 §2.4: 1s; Linux: 200ms)", MaxMinRTO)),
		"rate": scalar("a rate in bits/s with a unit: 16Mbit, 1.5Gbit; 0: unlimited", (*decoder).rate, rate),
		"link_rate": scalar("a rate in bits/s with a unit, above 0: 16Mbit", func(d *decoder, n *yaml.Node, p string) (float64, error) {
			r, err := d.rate(n, p)
			if err == nil && r <= 0 {
				err = d.errAt(n, p, "a hop needs a positive rate (e.g. 16Mbit)")
			}
			return r, err
		}, rate),
		"rev_rate": scalar("a rate in bits/s with a unit, or unlimited", func(d *decoder, n *yaml.Node, p string) (float64, error) {
			v, s, err := d.value(n, p)
			if err != nil || v == "unlimited" {
				return -1, err
			}
			r, err := d.rate(n, p)
			if err == nil && r <= 0 {
				err = d.errAt(s, p, "want a positive rate or \"unlimited\"")
			}
			return r, err
		}, func(r float64) string {
			if r < 0 {
				return "unlimited"
			}
			return rate(r)
		}),
		"bytes":     bytesKind,
		"count":     integer(1, MaxFlows),
		"runs":      integer(1, MaxRuns),
		"flow":      integer(1, MaxFlows),
		"bool":      scalar("true or false", (*decoder).boolean, strconv.FormatBool),
		"fraction":  scalar("a number in (0, 1], or a percentage: 0.5, 50%", (*decoder).fraction, formatFloat),
		"share":     scalar("a number in [0, 1]", share, formatFloat),
		"number":    scalar("a finite number", number, formatFloat),
		"tolerance": scalar("a number strictly between 0 and 1", tolerance, formatFloat),
		"mode":      enum(ModeStream, ModeDatagram, ModeUDP),
		"stack": scalar("one of "+StackCclab+", "+StackKernel, func(d *decoder, n *yaml.Node, p string) (string, error) {
			s, err := d.enum(n, p, StackCclab, StackKernel)
			if s == StackCclab {
				s = "" // the default
			}
			return s, err
		}, func(s string) string { return s }),
		"kind":          enum(KindDumbbell, KindChain),
		"dir":           enum(DirFwd, DirRev),
		"study":         enum(StudyDCA, StudyDCCPTCP, StudyFairQueueing, StudyETH),
		"cc":            specKind("a controller spec (docs/controllers.md): reno, dca:x=6,w=20", validateCC),
		"recovery":      specKind("a recovery spec (docs/recovery.md), or auto", validateRecovery),
		"traffic":       specKind("a traffic generator spec (docs/traffic.md)", traffic.Registry.Validate),
		"cross_traffic": specKind("a datagram generator spec (docs/traffic.md): cbr, udponoff, layered", ValidateCrossTraffic),
		"queue":         specKind("a queue discipline spec (docs/qdisc.md): droptail:20p", qdisc.Registry.Validate),
		"loss":          specKind("a probability or a link loss spec (docs/link.md): 0.01, ge:p=..,r=..", validateLoss),
		"trace_file":    specKind("a Mahimahi trace file (docs/link.md)", validateTrace),
		"hops":          scalar(`a hop range, 0-based: "i" or "i-j"`, (*decoder).path, func(p []int) string { return fmt.Sprintf("%d-%d", p[0], p[1]) }),
		"ack_every":     scalar(fmt.Sprintf("an integer, 1..%d", transport.MaxAckEvery), ackEvery, strconv.Itoa),
		"delayed_ack": scalar(fmt.Sprintf("a duration below %v; 0: none", transport.MaxDelayedAck), delayedAck, func(t time.Duration) string {
			if t == transport.NoDelayedAck {
				return "0s"
			}
			return dur(t)
		}),
		"seeds": scalar("a list of non-negative integers", seeds, func(s []uint64) string {
			return flowList(s, func(x uint64) string { return strconv.FormatUint(x, 10) })
		}),
		"backends": scalar("a list of sim, live, ns3", backends, func(s []string) string { return flowList(s, func(x string) string { return x }) }),
		"range":    scalar("a list [low, high] of finite numbers", interval, func(s []float64) string { return flowList(s, formatFloat) }),
		"baseline": scalar("a mapping of swept field to value: {cc: reno}", baseline, func(ps []Param) string {
			return flowMap(ps)
		}),
		"topology": mapped("a mapping (Topology), or the name of one of topologies", (*decoder).namedTopology),
		"hop_list": mapped("a list of mappings (Hop)", func(d *decoder, n *yaml.Node, p string) ([]Hop, error) {
			return listOf(d, n, p, "hops (each with rate, delay, queue, loss)", d.hop)
		}),
		"access": mapped("a mapping (Access)", (*decoder).access),
		"cross": mapped("a list of datagram generator specs, or of mappings (Cross)", func(d *decoder, n *yaml.Node, p string) ([]Cross, error) {
			return listOf(d, n, p, "cross-traffic sources (a datagram generator spec, or {traffic, dir})", d.cross)
		}),
		"flows": mapped("a list of mappings (Flow)", func(d *decoder, n *yaml.Node, p string) ([]Flow, error) {
			fs, err := listOf(d, n, p, "flows", d.flow)
			if err == nil && len(fs) == 0 {
				err = d.errAt(n, p, "at least one flow is needed")
			}
			return fs, err
		}),
		"background": mapped("a list of mappings (Flow, without path)", func(d *decoder, n *yaml.Node, p string) ([]Flow, error) {
			return listOf(d, n, p, "background flow groups (each with the keys of a flow but path)", d.background)
		}),
		"trace": mapped("a mapping (TraceSpec)", (*decoder).traceSpec),
		"published": mapped("a list of mappings (Published)", func(d *decoder, n *yaml.Node, p string) ([]Published, error) {
			return listOf(d, n, p, "published", d.published)
		}),
	}
}

// field is one field of the format: a struct field with a scenario tag.
type field struct {
	name     string // YAML key (and JSON name)
	kind     kind
	kindName string
	required bool
	doc      string
	index    int
}

var schemas sync.Map // reflect.Type → []field

// schemaOf returns the fields of the format in struct t, in declaration
// order.
func schemaOf(t reflect.Type) []field {
	if fs, ok := schemas.Load(t); ok {
		return fs.([]field)
	}
	var fs []field
	for i := 0; i < t.NumField(); i++ {
		sf := t.Field(i)
		tag, ok := sf.Tag.Lookup("scenario")
		if !ok {
			continue
		}
		parts := strings.Split(tag, ",")
		f := field{name: strings.Split(sf.Tag.Get("json"), ",")[0], kindName: parts[0], doc: sf.Tag.Get("doc"), index: i}
		for _, o := range parts[1:] {
			switch {
			case o == "required":
				f.required = true
			case strings.HasPrefix(o, "name="):
				f.name = strings.TrimPrefix(o, "name=")
			default:
				panic(fmt.Sprintf("scenario: %s.%s: unknown tag option %q", t.Name(), sf.Name, o))
			}
		}
		k, ok := kinds[f.kindName]
		if !ok {
			panic(fmt.Sprintf("scenario: %s.%s: unknown kind %q", t.Name(), sf.Name, f.kindName))
		}
		f.kind = k
		fs = append(fs, f)
	}
	schemas.Store(t, fs)
	return fs
}

// fields decodes the mapping n into *ptr, a struct of the format, field by
// field; extra adds keys that are not fields (or replaces a field's
// decoding). It returns the value nodes of the keys given, for the checks
// that involve several fields.
func (d *decoder) fields(n *yaml.Node, path string, ptr any, extra map[string]fieldFn) (map[string]*yaml.Node, error) {
	v := reflect.ValueOf(ptr).Elem()
	given := map[string]*yaml.Node{}
	fns := map[string]fieldFn{}
	var required []string
	for _, f := range schemaOf(v.Type()) {
		fv := v.Field(f.index)
		fns[f.name] = func(n *yaml.Node, p string) error {
			if fv.Kind() == reflect.Pointer && f.kind.emit != nil { // an optional scalar: set when given
				fv.Set(reflect.New(fv.Type().Elem()))
				return f.kind.decode(d, n, p, fv.Elem())
			}
			return f.kind.decode(d, n, p, fv)
		}
		if f.required {
			required = append(required, f.name)
		}
	}
	for k, fn := range extra {
		fns[k] = fn
	}
	for k, fn := range fns {
		fns[k] = func(n *yaml.Node, p string) error { given[k] = n; return fn(n, p) }
	}
	return given, d.mapping(n, path, fns, required...)
}

// YAML writes the scenario as a scenario file (docs/scenarios.md) that
// ParseScenario reads back into an equal scenario (but for Case, which only
// a scenario with cases sets): every field that differs from its default,
// rates and durations exactly. `cclab sim -emit-scenario` uses it to show
// the scenario its flags describe.
func (s Scenario) YAML() []byte {
	var b strings.Builder
	writeFields(&b, "", reflect.ValueOf(s), defaultOf(reflect.TypeOf(s), 0))
	return []byte(b.String())
}

// writeFields writes the fields of struct v at indent: the required ones
// and those set (not zero) to other than their default (def's).
func writeFields(b *strings.Builder, indent string, v, def reflect.Value) {
	for _, f := range schemaOf(v.Type()) {
		fv := v.Field(f.index)
		if !f.required && (fv.IsZero() || reflect.DeepEqual(fv.Interface(), def.Field(f.index).Interface())) {
			continue
		}
		if t, ok := v.Interface().(Topology); ok && f.name == "hops" && t.Kind == KindDumbbell && len(t.Hops) == 1 {
			writeValue(b, indent, "bottleneck", f.kind, fv.Index(0))
			continue
		}
		writeValue(b, indent, f.name, f.kind, fv)
	}
}

// writeValue writes key: v at indent.
func writeValue(b *strings.Builder, indent, key string, k kind, v reflect.Value) {
	if v.Kind() == reflect.Pointer {
		if v.IsNil() {
			return
		}
		v = v.Elem()
	}
	switch {
	case k.emit != nil:
		fmt.Fprintf(b, "%s%s: %s\n", indent, key, k.emit(v))
	case v.Kind() == reflect.Struct:
		fmt.Fprintf(b, "%s%s:\n", indent, key)
		writeFields(b, indent+"  ", v, defaultOf(v.Type(), 0))
	case v.Kind() == reflect.Slice:
		fmt.Fprintf(b, "%s%s:\n", indent, key)
		for i := 0; i < v.Len(); i++ {
			var item strings.Builder
			writeFields(&item, indent+"    ", v.Index(i), defaultOf(v.Type().Elem(), i))
			if item.Len() == 0 {
				fmt.Fprintf(b, "%s  - {}\n", indent)
				continue
			}
			b.WriteString(indent + "  - " + strings.TrimPrefix(item.String(), indent+"    "))
		}
	}
}

// defaultOf returns the value the decoder starts item i of type t from.
func defaultOf(t reflect.Type, i int) reflect.Value {
	switch t {
	case reflect.TypeOf(Scenario{}):
		return reflect.ValueOf(newScenario())
	case reflect.TypeOf(Hop{}):
		return reflect.ValueOf(newHop())
	case reflect.TypeOf(Flow{}):
		return reflect.ValueOf(newFlow(i))
	case reflect.TypeOf(Cross{}):
		return reflect.ValueOf(newCross())
	}
	return reflect.Zero(t)
}

// reference returns the field reference of docs/scenarios.md: a table per
// mapping of the format with each field's key, value form, default and
// meaning.
func reference() string {
	var b strings.Builder
	for _, t := range []struct {
		title string
		v     any
	}{{"the scenario", Scenario{}}, {"topology", Topology{}}, {"a hop (bottleneck, hops[i])", Hop{}},
		{"topology.access", Access{}}, {"a cross-traffic source (cross[i])", Cross{}}, {"a flow group (flows[i], background[i])", Flow{}},
		{"trace", TraceSpec{}}, {"a published number (published[i])", Published{}}} {
		typ := reflect.TypeOf(t.v)
		def, def1 := defaultOf(typ, 0), defaultOf(typ, 1)
		fmt.Fprintf(&b, "Fields of %s (`%s`):\n\n| field | value | default | meaning |\n| --- | --- | --- | --- |\n", t.title, typ.Name())
		for _, f := range schemaOf(typ) {
			dflt := ""
			switch dv := def.Field(f.index); {
			case f.required:
				dflt = "required"
			case f.kind.emit != nil && !dv.IsZero() && reflect.DeepEqual(dv.Interface(), def1.Field(f.index).Interface()): // not one that depends on the item's position
				dflt = f.kind.emit(dv)
				if u, err := strconv.Unquote(dflt); err == nil {
					dflt = u
				}
				dflt = "`" + dflt + "`"
			}
			fmt.Fprintf(&b, "| `%s` | %s | %s | %s |\n", f.name, f.kind.form, dflt, f.doc)
		}
		b.WriteString("\n")
	}
	return b.String()
}

func share(d *decoder, n *yaml.Node, p string) (float64, error) {
	v, s, err := d.value(n, p)
	if err != nil {
		return 0, err
	}
	x, perr := strconv.ParseFloat(v, 64)
	if perr != nil || x < 0 || x > 1 {
		return 0, d.errAt(s, p, "%q is not a share in [0, 1]", v)
	}
	return x, nil
}

func number(d *decoder, n *yaml.Node, p string) (float64, error) {
	v, at, err := d.value(n, p)
	if err != nil {
		return 0, err
	}
	f, err := strconv.ParseFloat(v, 64)
	if err != nil || math.IsNaN(f) || math.IsInf(f, 0) {
		return 0, d.errAt(at, p, "%q is not a finite number", v)
	}
	return f, nil
}

func tolerance(d *decoder, n *yaml.Node, p string) (float64, error) {
	x, err := number(d, n, p)
	if err == nil && !(x > 0 && x < 1) {
		err = d.errAt(n, p, "%v: must be a fraction strictly between 0 and 1", x)
	}
	return x, err
}

func ackEvery(d *decoder, n *yaml.Node, p string) (int, error) {
	return checked(d, n, p, func(v string) (int, error) {
		i, err := strconv.Atoi(v)
		if err != nil {
			return 0, fmt.Errorf("%q is not an integer", v)
		}
		return i, transport.CheckAckEvery(i)
	})
}

func delayedAck(d *decoder, n *yaml.Node, p string) (time.Duration, error) {
	return checked(d, n, p, func(v string) (time.Duration, error) {
		t, err := units.ParseDuration(v)
		if err == nil {
			err = transport.CheckDelayedAck(t)
		}
		return transport.UserDelayedAck(t), err
	})
}

func seeds(d *decoder, n *yaml.Node, p string) ([]uint64, error) {
	items, err := d.list(n, p, "seeds (non-negative integers)")
	var out []uint64
	for _, it := range items {
		v, err := strconv.ParseUint(it.Value, 10, 64)
		if err != nil || it.Kind != yaml.ScalarNode {
			return nil, d.errAt(it, p, "%q is not a seed (a non-negative integer)", it.Value)
		}
		out = append(out, v)
	}
	return out, err
}

func backends(d *decoder, n *yaml.Node, p string) ([]string, error) {
	items, err := d.list(n, p, "backends (sim, live, ns3)")
	var out []string
	for _, it := range items {
		if it.Value != BackendSim && it.Value != BackendLive && it.Value != BackendNS3 {
			return nil, d.errAt(it, p, "unknown backend %q (allowed: sim, live, ns3)", it.Value)
		}
		out = append(out, it.Value)
	}
	return out, err
}

func interval(d *decoder, n *yaml.Node, p string) ([]float64, error) {
	items, err := d.list(n, p, "interval")
	if err != nil {
		return nil, err
	}
	if len(items) != 2 {
		return nil, d.errAt(n, p, "an interval is [low, high]: got %d numbers", len(items))
	}
	var out []float64
	for i, it := range items {
		v, err := number(d, it, p+"["+strconv.Itoa(i)+"]")
		if err != nil {
			return nil, err
		}
		out = append(out, v)
	}
	if out[0] > out[1] {
		return nil, d.errAt(n, p, "low %v above high %v", out[0], out[1])
	}
	return out, nil
}

func baseline(d *decoder, n *yaml.Node, p string) ([]Param, error) {
	bn := resolve(n)
	if bn.Kind != yaml.MappingNode {
		return nil, d.errAt(bn, p, "want a mapping of swept field to value (e.g. cc: reno), got %s", kindName(bn))
	}
	var out []Param
	for i := 0; i+1 < len(bn.Content); i += 2 {
		out = append(out, Param{Axis: bn.Content[i].Value, Value: resolve(bn.Content[i+1]).Value})
	}
	return out, nil
}

// flowList writes a YAML flow list.
func flowList[T any](xs []T, format func(T) string) string {
	var parts []string
	for _, x := range xs {
		parts = append(parts, format(x))
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

// flowMap writes parameters as a YAML flow mapping.
func flowMap(ps []Param) string {
	var parts []string
	for _, p := range ps {
		parts = append(parts, quote(p.Axis)+": "+quote(p.Value))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

// quote returns s as a YAML double-quoted scalar.
func quote(s string) string { return strconv.Quote(s) }

// dur formats a duration so that units.ParseDuration reads it back exactly.
func dur(d time.Duration) string {
	if d == 0 {
		return "0s"
	}
	return d.String()
}

// shortDur formats a whole number of hours or minutes without the zero
// smaller units: 24h, 1m.
func shortDur(d time.Duration) string {
	return strings.TrimSuffix(strings.TrimSuffix(d.String(), "0s"), "0m")
}

// rate formats a rate so that units.ParseRate reads it back exactly.
func rate(r float64) string {
	if s := units.FormatRate(r); mustRate(s) == r {
		return s
	}
	return strconv.FormatFloat(r, 'g', -1, 64) + "bit"
}

func mustRate(s string) float64 {
	v, err := units.ParseRate(s)
	if err != nil {
		return -1
	}
	return v
}
