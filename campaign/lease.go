package campaign

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"time"

	"cclab/store"
)

// DefaultLeaseTTL is how long a scheduler's claim on a campaign lasts
// without renewal (Scheduler.LeaseTTL); a running scheduler renews it every
// third of that.
const DefaultLeaseTTL = 30 * time.Second

// Owner identifies one scheduler run: the host and process that run it
// and a random token (two schedulers of one process differ).
type Owner struct {
	Host  string
	PID   int
	Token string // 16 hex digits
	// PIDSpace names the space PID is a process id of: on Linux the
	// kernel's boot id and the process's PID namespace, "" where unknown.
	// A host name alone does not: containers of one machine, or machines,
	// may share a name, each with its own process ids.
	PIDSpace string
}

// NewOwner returns the identity of a new scheduler run of this process.
func NewOwner() Owner {
	host, err := os.Hostname()
	if err != nil || host == "" {
		host = "unknown-host"
	}
	var b [8]byte
	rand.Read(b[:])
	return Owner{Host: host, PID: os.Getpid(), Token: hex.EncodeToString(b[:]), PIDSpace: pidSpace()}
}

// pidSpace returns the space of this process's id (Owner.PIDSpace): the
// kernel's boot id and the process's PID namespace on Linux, "" elsewhere.
func pidSpace() string {
	boot, err := os.ReadFile("/proc/sys/kernel/random/boot_id")
	if err != nil {
		return ""
	}
	ns, err := os.Readlink("/proc/self/ns/pid")
	if err != nil {
		return ""
	}
	return strings.TrimSpace(string(boot)) + " " + ns
}

// sameProcessSpace reports whether o's process ids are those of this
// process (the same host name and PID space): only then can a check of
// this host's processes tell whether o's process runs.
func (o Owner) sameProcessSpace(me Owner) bool {
	return o.Host == me.Host && o.PIDSpace == me.PIDSpace
}

func (o Owner) String() string { return fmt.Sprintf("host %s pid %d (run %s)", o.Host, o.PID, o.Token) }

// LeasedError says that another scheduler run holds the campaign's lease.
type LeasedError struct {
	Campaign string
	Holder   Owner
	Since    time.Time // when the holder took the lease
	Until    time.Time // when it expires unless renewed
}

func (e *LeasedError) Error() string {
	return fmt.Sprintf("campaign %q is being run by %s since %s (lease until %s): run one scheduler per campaign; "+
		"a run that was killed gives up its lease when it expires, or at once on its own host",
		e.Campaign, e.Holder, e.Since.UTC().Format(time.RFC3339), e.Until.UTC().Format(time.RFC3339))
}

// ErrLeaseLost is returned when a running scheduler found its lease taken
// by another run (it could not renew it in time): it stops at once so that
// two runs never run one campaign's transfers together.
var ErrLeaseLost = errors.New("campaign: the scheduler lost its lease on the campaign to another run")

// Lease is a scheduler run's claim on a campaign, a row of campaign_leases
// (docs/campaigns.md, "Running").
type Lease struct {
	store    *Store
	campaign string
	owner    Owner
	ttl      time.Duration
	now      func() time.Time
	// until is when the lease expires as the database holds it (the
	// until_ns this run last wrote): Acquire's or the latest Renew's.
	until time.Time
}

// Acquire claims the campaign for owner for ttl, in one transaction that
// holds the store lock: it succeeds if no run holds the campaign, the
// holder's lease has expired, the holder is owner itself, or the holder is
// a process of this host and PID space (Owner.PIDSpace) that no longer
// exists (a killed run resumed on its host at once). Otherwise it returns a
// *LeasedError naming the other run.
func (s *Store) Acquire(ctx context.Context, campaign string, owner Owner, ttl time.Duration, now func() time.Time) (*Lease, error) {
	if now == nil {
		now = time.Now
	}
	l := &Lease{store: s, campaign: campaign, owner: owner, ttl: ttl, now: now}
	err := s.SQL.InTx(ctx, true, func(tx store.SQLTx) error {
		var h Owner
		var since, until int64
		err := tx.QueryRow(ctx, `SELECT owner_host, owner_pid, owner_token, owner_pid_space, since_ns, until_ns FROM campaign_leases WHERE campaign = ?`, campaign).
			Scan(&h.Host, &h.PID, &h.Token, &h.PIDSpace, &since, &until)
		t := now()
		switch {
		case errors.Is(err, sql.ErrNoRows):
		case err != nil:
			return err
		case h != owner && until > t.UnixNano() && !(h.sameProcessSpace(owner) && !processAlive(h.PID)):
			return &LeasedError{Campaign: campaign, Holder: h, Since: time.Unix(0, since), Until: time.Unix(0, until)}
		}
		_, err = tx.Exec(ctx, `INSERT INTO campaign_leases (campaign, owner_host, owner_pid, owner_token, owner_pid_space, since_ns, until_ns) VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (campaign) DO UPDATE SET owner_host = excluded.owner_host, owner_pid = excluded.owner_pid,
			owner_token = excluded.owner_token, owner_pid_space = excluded.owner_pid_space, since_ns = excluded.since_ns, until_ns = excluded.until_ns`,
			campaign, owner.Host, owner.PID, owner.Token, owner.PIDSpace, t.UnixNano(), t.Add(ttl).UnixNano())
		l.until = t.Add(ttl)
		return err
	})
	if err != nil {
		return nil, err
	}
	return l, nil
}

// Renew extends the lease by its ttl from now; ErrLeaseLost if another run
// holds the campaign now. It is not safe for concurrent use.
func (l *Lease) Renew(ctx context.Context) error {
	until := l.now().Add(l.ttl)
	res, err := l.store.SQL.SQL().Exec(ctx, `UPDATE campaign_leases SET until_ns = ? WHERE campaign = ? AND owner_host = ? AND owner_pid = ? AND owner_token = ?`,
		until.UnixNano(), l.campaign, l.owner.Host, l.owner.PID, l.owner.Token)
	if err != nil {
		return err
	}
	if n, err := res.RowsAffected(); err != nil || n == 0 {
		return errors.Join(ErrLeaseLost, err)
	}
	l.until = until
	return nil
}

// Release gives the lease up (if this run still holds it).
func (l *Lease) Release(ctx context.Context) error {
	_, err := l.store.SQL.SQL().Exec(ctx, `DELETE FROM campaign_leases WHERE campaign = ? AND owner_host = ? AND owner_pid = ? AND owner_token = ?`,
		l.campaign, l.owner.Host, l.owner.PID, l.owner.Token)
	return err
}

// Keep renews the lease every third of its ttl until stop is called, and
// returns a context derived from ctx that is cancelled with cause
// ErrLeaseLost if a renewal finds the lease taken, or if renewals fail
// until the lease expires (another run may take it then). A renewal that
// hangs (an unreachable database) is given up at the expiry, so the run
// stops by the time another may start. stop ends the renewals and releases
// the lease.
func (l *Lease) Keep(ctx context.Context) (kept context.Context, stop func()) {
	kctx, cancel := context.WithCancelCause(ctx)
	// The expiry cancels the run unless a renewal moved it, whether or not
	// the renewal under way has returned.
	expiry := time.AfterFunc(l.until.Sub(l.now()), func() {
		cancel(fmt.Errorf("%w: the lease expired before a renewal succeeded", ErrLeaseLost))
	})
	quit := make(chan struct{})
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		tk := time.NewTicker(l.ttl / 3)
		defer tk.Stop()
		for {
			select {
			case <-quit:
				return
			case <-kctx.Done():
				return
			case <-tk.C:
			}
			rctx, rcancel := context.WithTimeout(kctx, l.until.Sub(l.now()))
			err := l.Renew(rctx)
			rcancel()
			switch {
			case errors.Is(err, ErrLeaseLost):
				cancel(err)
				return
			case err == nil && expiry.Stop():
				expiry.Reset(l.until.Sub(l.now()))
			}
		}
	}()
	return kctx, func() {
		close(quit)
		expiry.Stop()
		cancel(nil)
		wg.Wait()
		_ = l.Release(context.WithoutCancel(ctx))
	}
}
