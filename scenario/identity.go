package scenario

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"strconv"
	"strings"

	"cclab/internal/buildinfo"
)

// Scenario identity (docs/store.md): every run is keyed by the hash of its
// resolved point, so runs of an edited scenario that keeps its name, or of
// another build of cclab, are new points and are never averaged with older
// runs; the older ones stay in the store under their own experiment version.

// pointHashFormat names the canonical form hashed by Point.Hash; a change of
// the form changes it.
const pointHashFormat = "cclab-point/2"

// buildIdentity returns the running build's identity (buildinfo: the VCS
// commit of a clean build, else the executable's SHA-256); a variable so
// tests can stand for another build.
var BuildIdentity = func() string { return buildinfo.Read().Build }

// canonical returns the canonical JSON of the point's resolved configuration:
// its scenario after defaults and sweep expansion, without what does not
// change a run's outcome or identity (seeds and backends, which RunKey adds
// per run; live_runs; the description).
func (p Point) canonical() []byte {
	s := p.Scenario
	s.Seeds, s.Backends, s.Description, s.LiveRuns = nil, nil, "", 0
	b, _ := json.Marshal(s) // struct fields in declaration order: canonical
	return b
}

// Hash identifies the resolved point: hex SHA-256 of pointHashFormat, the
// build identity of the running cclab and the point's canonical JSON.
func (p Point) Hash() string {
	h := sha256.New()
	h.Write([]byte(pointHashFormat + "\n" + BuildIdentity() + "\n"))
	h.Write(p.canonical())
	return hex.EncodeToString(h.Sum(nil))
}

// legacyHash is the point hash of schema 1 (no build identity), used only to
// recognise old runs of the stored scenario when migrating a database.
func (p Point) LegacyHash() string {
	h := sha256.Sum256(p.canonical())
	return hex.EncodeToString(h[:])
}

// Settings returns the resolved settings a run records (RunRecord.Settings):
// the point's scenario after defaults and sweep expansion, with the run's
// backend and seed.
func (p Point) Settings(backend string, seed uint64) json.RawMessage {
	s := p.Scenario
	s.Seeds, s.Backends, s.LiveRuns = []uint64{seed}, []string{backend}, 0
	b, _ := json.Marshal(struct {
		Backend  string   `json:"backend"`
		Seed     uint64   `json:"seed"`
		Params   []Param  `json:"params"`
		Scenario Scenario `json:"scenario"`
	}{backend, seed, p.Params, s})
	return b
}

// VersionHash identifies the experiment's version: SHA-256 of its points'
// parameters and hashes in grid order. Two runs of a scenario file share a
// version exactly when every point is the same; more seeds or other backends
// keep the version.
func (e *Experiment) VersionHash() string {
	var b strings.Builder
	for _, p := range e.Points {
		b.WriteString(strconv.Itoa(p.Index) + " " + ParamsString(p.Params) + " " + p.Hash() + "\n")
	}
	h := sha256.Sum256([]byte(b.String()))
	return hex.EncodeToString(h[:])
}
