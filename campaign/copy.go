package campaign

import (
	"context"
	"fmt"

	"cclab/store"
)

// CopyStats counts what CopyCampaigns copied.
type CopyStats struct {
	Campaigns int // campaigns copied (new to the destination or already there)
	Specs     int // stored specs (name and digest) new to the destination
	Attempts  int // transfer attempts written
	Skipped   int // attempts the destination held already
}

// CopyCampaigns copies campaigns (all, or the named one) — their stored
// specs and every stored attempt — from the results database src to dst:
// between SQLite and PostgreSQL in either direction, or between two of one
// kind. The destination's campaign tables are created or migrated first.
// Each attempt is written in its own transaction (as Save does) and
// attempts the destination holds already (the same campaign, digest, seq
// and attempt) are kept, so an interrupted copy is completed by copying
// again. Leases (Lease) are not copied: they belong to the source's runs.
// A source without campaign tables has nothing to copy: no error unless a
// campaign was named.
func CopyCampaigns(ctx context.Context, dst, src *store.SQLStore, name string) (CopyStats, error) {
	var st CopyStats
	v, err := src.TablesVersion(ctx, "campaign")
	if err != nil {
		return st, err
	}
	if v == 0 {
		if name != "" {
			return st, fmt.Errorf("no campaign %q in the source database (it has no campaign tables)", name)
		}
		return st, nil
	}
	if v > len(schema) {
		return st, fmt.Errorf("source: the database's campaign tables have schema version %d; this cclab knows versions up to %d: use a newer cclab", v, len(schema))
	}
	from := &Store{SQL: src} // read as it is: the source is not migrated
	names, err := from.Campaigns(ctx)
	if err != nil {
		return st, err
	}
	to, err := NewStore(dst)
	if err != nil {
		return st, fmt.Errorf("destination: %w", err)
	}
	found := name == ""
	for _, n := range names {
		if name != "" && n != name {
			continue
		}
		found = true
		specs, err := from.specs(ctx, n)
		if err != nil {
			return st, fmt.Errorf("campaign %s: %w", n, err)
		}
		for _, sp := range specs {
			added, err := to.addSpec(ctx, sp)
			if err != nil {
				return st, fmt.Errorf("campaign %s, spec %s: %w", n, sp.digest, err)
			}
			if added {
				st.Specs++
			}
		}
		rows, err := from.Rows(ctx, n, "")
		if err != nil {
			return st, fmt.Errorf("campaign %s: %w", n, err)
		}
		for i := range rows {
			added, err := to.save(ctx, &rows[i])
			if err != nil {
				return st, fmt.Errorf("campaign %s, transfer %s attempt %d: %w", n, rows[i].ID, rows[i].Attempt, err)
			}
			if added {
				st.Attempts++
			} else {
				st.Skipped++
			}
		}
		st.Campaigns++
	}
	if !found {
		return st, fmt.Errorf("no campaign %q in the source database", name)
	}
	return st, nil
}

// specRow is one row of campaign_specs.
type specRow struct {
	name, digest, spec, created string
}

// specs returns every stored spec of a campaign name.
func (s *Store) specs(ctx context.Context, name string) ([]specRow, error) {
	rows, err := s.SQL.SQL().Query(ctx, `SELECT name, digest, spec, created FROM campaign_specs WHERE name = ? ORDER BY created, digest`, name)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []specRow
	for rows.Next() {
		var r specRow
		if err := rows.Scan(&r.name, &r.digest, &r.spec, &r.created); err != nil {
			return nil, err
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// addSpec stores a spec row as it is (its creation time kept) unless its
// name and digest are stored already, and reports whether it was new.
func (s *Store) addSpec(ctx context.Context, r specRow) (bool, error) {
	res, err := s.SQL.SQL().Exec(ctx, `INSERT INTO campaign_specs (name, digest, spec, created) VALUES (?, ?, ?, ?)
		ON CONFLICT (name, digest) DO NOTHING`, r.name, r.digest, r.spec, r.created)
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n > 0, err
}
