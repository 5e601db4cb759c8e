package campaign

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"cclab/store"
)

// Transfer statuses (eval's run statuses).
const (
	StatusDone   = store.StatusDone
	StatusFailed = store.StatusFailed
)

// Row is one attempt of one transfer as stored: the campaign tables' row
// (docs/campaigns.md, "Running"). Failed attempts are rows too (Status
// failed, Cause and Error set, measurements zero).
type Row struct {
	Campaign string
	Digest   string // Spec.Digest
	Seq      int    // Item.Seq
	Attempt  int    // 1, 2, ...
	Round    int
	ID       string // Item.ID
	From, To string
	// FromGroup and ToGroup are the hosts' groups.
	FromGroup, ToGroup string
	Variant, CC        string
	Recovery           string
	Status             string // StatusDone or StatusFailed
	Cause              string // failure cause (Cause* constants)
	Error              string
	Start              time.Time // UTC
	Seconds            float64   // transfer time, s
	Bytes              int64     // bytes delivered
	GoodputBps         float64   // bits/s
	Retransmits        int64     // retransmitted data packets
	Unnecessary        int64     // retransmissions found unnecessary (spurious); -1 when the sender did not report it
	RTOs               int64
	RTOCauses          map[string]int64
	PacketsSent        int64   // data packets including retransmissions; -1 when the sender did not report it
	MinRTTms           float64 // ms
	MeanSRTTms         float64 // ms
	ClockOffsetMs      float64 // receiving host's clock minus the sending host's, ms
	OffsetRTTms        float64 // RTT of the offset's samples, ms (the offset's error bound is half of it)
	SenderJSON         string
	ReceiverJSON       string
	SenderQlog         string
	ReceiverQlog       string
	// RelayLimits are the reasons the relays on the transfer's route were
	// host-limited while it ran ("relay late"; MarkRelayLimits): not a
	// column, set from the stored relay intervals (Store.Transfers).
	RelayLimits []string
}

// schema is the campaign tables' schema versions (store.SQLStore.MigrateTables).
var schema = [][]string{{
	`CREATE TABLE campaign_specs (
		name TEXT NOT NULL,
		digest TEXT NOT NULL,
		spec TEXT NOT NULL,
		created TEXT NOT NULL,
		PRIMARY KEY (name, digest))`,
	`CREATE TABLE campaign_transfers (
		id INTEGER PRIMARY KEY,
		campaign TEXT NOT NULL,
		digest TEXT NOT NULL,
		seq BIGINT NOT NULL,
		attempt BIGINT NOT NULL,
		round BIGINT NOT NULL,
		transfer_id TEXT NOT NULL,
		src TEXT NOT NULL,
		dst TEXT NOT NULL,
		src_group TEXT NOT NULL,
		dst_group TEXT NOT NULL,
		variant TEXT NOT NULL,
		cc TEXT NOT NULL,
		recovery TEXT NOT NULL,
		status TEXT NOT NULL,
		cause TEXT NOT NULL,
		error TEXT NOT NULL,
		started TEXT NOT NULL,
		seconds DOUBLE PRECISION NOT NULL,
		bytes BIGINT NOT NULL,
		goodput_bps DOUBLE PRECISION NOT NULL,
		retransmits BIGINT NOT NULL,
		unnecessary BIGINT NOT NULL,
		rtos BIGINT NOT NULL,
		rto_causes TEXT NOT NULL,
		packets_sent BIGINT NOT NULL,
		min_rtt_ms DOUBLE PRECISION NOT NULL,
		mean_srtt_ms DOUBLE PRECISION NOT NULL,
		clock_offset_ms DOUBLE PRECISION NOT NULL,
		offset_rtt_ms DOUBLE PRECISION NOT NULL,
		sender_json TEXT NOT NULL,
		receiver_json TEXT NOT NULL,
		sender_qlog TEXT NOT NULL,
		receiver_qlog TEXT NOT NULL,
		UNIQUE (campaign, digest, seq, attempt))`,
	`CREATE INDEX campaign_transfers_path ON campaign_transfers (campaign, src, dst)`,
}, {
	// Version 2: one scheduler run per campaign (Lease).
	`CREATE TABLE campaign_leases (
		campaign TEXT NOT NULL PRIMARY KEY,
		owner_host TEXT NOT NULL,
		owner_pid BIGINT NOT NULL,
		owner_token TEXT NOT NULL,
		since_ns BIGINT NOT NULL,
		until_ns BIGINT NOT NULL)`,
}, {
	// Version 3: a lease names its holder's PID space (Owner.PIDSpace).
	`ALTER TABLE campaign_leases ADD COLUMN owner_pid_space TEXT NOT NULL DEFAULT ''`,
}, {
	// Version 4: the relays' host-limit intervals (RelayInterval).
	`CREATE TABLE campaign_relay_intervals (
		campaign TEXT NOT NULL,
		link TEXT NOT NULL,
		dir TEXT NOT NULL,
		start_ns BIGINT NOT NULL,
		end_ns BIGINT NOT NULL,
		writes BIGINT NOT NULL,
		late BIGINT NOT NULL,
		rx_queue_drops BIGINT NOT NULL,
		PRIMARY KEY (campaign, link, dir, end_ns))`,
}}

// columns are campaign_transfers' columns after id, in Row's order.
var columns = []string{"campaign", "digest", "seq", "attempt", "round", "transfer_id", "src", "dst", "src_group", "dst_group",
	"variant", "cc", "recovery", "status", "cause", "error", "started", "seconds", "bytes", "goodput_bps", "retransmits",
	"unnecessary", "rtos", "rto_causes", "packets_sent", "min_rtt_ms", "mean_srtt_ms", "clock_offset_ms", "offset_rtt_ms",
	"sender_json", "receiver_json", "sender_qlog", "receiver_qlog"}

// Store is the campaign tables in a results database.
type Store struct {
	SQL *store.SQLStore
	own bool
}

// OpenStore opens the results database db (an SQLite file or a
// postgres:// URL, store.Open) and creates or migrates the campaign tables.
func OpenStore(db string) (*Store, error) {
	st, err := store.Open(db)
	if err != nil {
		return nil, err
	}
	s, err := NewStore(st)
	if err != nil {
		st.Close()
		return nil, fmt.Errorf("store %s: %w", store.DBName(db), err)
	}
	s.own = true
	return s, nil
}

// NewStore adds the campaign tables to an open results database.
func NewStore(st *store.SQLStore) (*Store, error) {
	if err := st.MigrateTables(context.Background(), "campaign", schema); err != nil {
		return nil, err
	}
	return &Store{SQL: st}, nil
}

// Close closes the database if OpenStore opened it.
func (s *Store) Close() error {
	if s.own {
		return s.SQL.Close()
	}
	return nil
}

// Register records the spec's source under its name and digest (once).
func (s *Store) Register(ctx context.Context, sp *Spec) error {
	_, err := s.addSpec(ctx, specRow{sp.Name, sp.Digest(), string(sp.Source), time.Now().UTC().Format(time.RFC3339)})
	return err
}

// SpecSource returns the stored spec of a campaign name and digest ("":
// the most recently registered digest of the name) and its digest.
func (s *Store) SpecSource(ctx context.Context, name, digest string) (src, dig string, err error) {
	q := `SELECT spec, digest FROM campaign_specs WHERE name = ? ORDER BY created DESC LIMIT 1`
	args := []any{name}
	if digest != "" {
		q = `SELECT spec, digest FROM campaign_specs WHERE name = ? AND digest = ?`
		args = append(args, digest)
	}
	err = s.SQL.SQL().QueryRow(ctx, q, args...).Scan(&src, &dig)
	return src, dig, err
}

// Save writes one attempt in one transaction. Saving an attempt that is
// stored already (the same campaign, digest, seq and attempt) changes
// nothing.
func (s *Store) Save(ctx context.Context, r *Row) error {
	_, err := s.save(ctx, r)
	return err
}

// save is Save, reporting whether the row was new.
func (s *Store) save(ctx context.Context, r *Row) (added bool, err error) {
	causes, _ := json.Marshal(r.RTOCauses)
	if r.RTOCauses == nil {
		causes = []byte("{}")
	}
	vals := []any{r.Campaign, r.Digest, r.Seq, r.Attempt, r.Round, r.ID, r.From, r.To, r.FromGroup, r.ToGroup,
		r.Variant, r.CC, r.Recovery, r.Status, r.Cause, r.Error, r.Start.UTC().Format(time.RFC3339Nano), r.Seconds, r.Bytes, r.GoodputBps, r.Retransmits,
		r.Unnecessary, r.RTOs, string(causes), r.PacketsSent, r.MinRTTms, r.MeanSRTTms, r.ClockOffsetMs, r.OffsetRTTms,
		r.SenderJSON, r.ReceiverJSON, r.SenderQlog, r.ReceiverQlog}
	q := `INSERT INTO campaign_transfers (` + strings.Join(columns, ", ") + `) VALUES (` +
		strings.TrimSuffix(strings.Repeat("?, ", len(columns)), ", ") + `) ON CONFLICT (campaign, digest, seq, attempt) DO NOTHING`
	err = s.SQL.InTx(ctx, false, func(tx store.SQLTx) error {
		res, err := tx.Exec(ctx, q, vals...)
		if err != nil {
			return err
		}
		n, err := res.RowsAffected()
		added = n > 0
		return err
	})
	return added, err
}

// Rows returns a campaign's stored attempts in plan order (seq, attempt):
// those of one spec digest, or of every digest for "".
func (s *Store) Rows(ctx context.Context, campaign, digest string) ([]Row, error) {
	q := `SELECT ` + strings.Join(columns, ", ") + ` FROM campaign_transfers WHERE campaign = ?`
	args := []any{campaign}
	if digest != "" {
		q += ` AND digest = ?`
		args = append(args, digest)
	}
	rows, err := s.SQL.SQL().Query(ctx, q+` ORDER BY digest, seq, attempt`, args...)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []Row
	for rows.Next() {
		var r Row
		var started, causes string
		if err := rows.Scan(&r.Campaign, &r.Digest, &r.Seq, &r.Attempt, &r.Round, &r.ID, &r.From, &r.To, &r.FromGroup, &r.ToGroup,
			&r.Variant, &r.CC, &r.Recovery, &r.Status, &r.Cause, &r.Error, &started, &r.Seconds, &r.Bytes, &r.GoodputBps, &r.Retransmits,
			&r.Unnecessary, &r.RTOs, &causes, &r.PacketsSent, &r.MinRTTms, &r.MeanSRTTms, &r.ClockOffsetMs, &r.OffsetRTTms,
			&r.SenderJSON, &r.ReceiverJSON, &r.SenderQlog, &r.ReceiverQlog); err != nil {
			return nil, err
		}
		r.Start, _ = time.Parse(time.RFC3339Nano, started)
		if err := json.Unmarshal([]byte(causes), &r.RTOCauses); err != nil {
			return nil, fmt.Errorf("campaign %s transfer %s: rto_causes: %w", campaign, r.ID, err)
		}
		out = append(out, r)
	}
	return out, rows.Err()
}

// Campaigns lists the stored campaigns' names.
func (s *Store) Campaigns(ctx context.Context) ([]string, error) {
	rows, err := s.SQL.SQL().Query(ctx, `SELECT DISTINCT name FROM campaign_specs ORDER BY name`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []string
	for rows.Next() {
		var n string
		if err := rows.Scan(&n); err != nil {
			return nil, err
		}
		out = append(out, n)
	}
	return out, rows.Err()
}
