package store

import (
	"cclab/internal/buildinfo"
	"cclab/scenario"
)

// NewVersionRecord returns the store record of the experiment's version (the
// store assigns ID and Seq).
func NewVersionRecord(e *scenario.Experiment) *VersionRecord {
	v := &VersionRecord{Hash: e.VersionHash(), Scenario: string(e.Source), Build: scenario.BuildIdentity(), CclabVersion: buildinfo.Short()}
	for _, p := range e.Points {
		v.Points = append(v.Points, VersionPoint{Index: p.Index, Params: p.Params, Hash: p.Hash()})
	}
	return v
}
