package transport

import (
	"cclab/ccalgo"
	"cclab/internal/spec"
)

// connSpec is what a connection's controller and recovery specs
// (Config.CC, Config.Recovery) resolve to, parsed and checked once per
// endpoint (Endpoint.connSpec) rather than at every connection: a
// simulation of short transfers opens tens of thousands of connections
// from a flow's one pair of specs. It is not modified once made.
type connSpec struct {
	cc, rec string // the specs as written (the endpoint's cache key)
	ccP     spec.Parsed[ccalgo.Controller, ccalgo.Env]
	recP    spec.Parsed[Recovery, RecoveryEnv]
	dsack   bool // the strategy uses D-SACK: a client asks for D-SACK blocks (wantsDSACK)
}

// maxConnSpecs bounds an endpoint's cache of parsed specs (a server's
// Configure may choose specs by the client's request: a client must not
// grow it).
const maxConnSpecs = 8

// connSpec returns the parsed specs of cfg (checked as Config.Validate
// checks them, with its errors), from the endpoint's cache if it holds
// them; the cache keeps the maxConnSpecs pairs seen last.
func (e *Endpoint) connSpec(cfg *Config) (*connSpec, error) {
	for _, s := range e.specs {
		if s != nil && s.cc == cfg.CC && s.rec == cfg.Recovery {
			return s, nil
		}
	}
	ccP, err := ccalgo.Registry.Parse(cfg.CC)
	if err != nil {
		return nil, err
	}
	recP, err := Recoveries.Parse(cfg.Recovery)
	if err != nil {
		return nil, err
	}
	s := &connSpec{cc: cfg.CC, rec: cfg.Recovery, ccP: ccP, recP: recP, dsack: wantsDSACK(recP)}
	e.specs[e.specNext] = s
	e.specNext = (e.specNext + 1) % maxConnSpecs
	return s, nil
}
