package campaign

import (
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"cclab/store"
)

// testLease: while one scheduler runs a campaign a second one (another
// store handle, as another process would have) is refused with an error
// naming the campaign and the running one, and runs nothing; once the
// first ends, the second runs. A live lease of another host refuses too;
// an expired one, and one of a process of this host that no longer exists,
// are taken over. A run whose lease is taken stops with ErrLeaseLost.
func testLease(t *testing.T, newDB func(t *testing.T) string) {
	ctx := context.Background()
	s := testSpec(t, 3, 2, 1, "")
	db := newDB(t)
	st := openTestStore(t, db)
	f := newFake(t, 1)
	f.block = make(chan struct{})
	f.started = make(chan string)
	var first error
	finished := make(chan struct{})
	go func() {
		_, first = (&Scheduler{Spec: s, Store: st, Runner: f}).Run(ctx)
		close(finished)
	}()
	<-f.started // the first run holds the lease
	go func() {
		for range f.started {
		}
	}()
	second := newFake(t, 1)
	_, err := (&Scheduler{Spec: s, Store: openTestStore(t, db), Runner: second}).Run(ctx)
	var le *LeasedError
	if !errors.As(err, &le) || le.Campaign != "test" || le.Holder.PID != os.Getpid() ||
		!strings.Contains(err.Error(), `campaign "test" is being run by host `) {
		t.Errorf("second scheduler: got %v, want a LeasedError naming campaign test and this process", err)
	}
	if len(second.calls) != 0 {
		t.Errorf("refused scheduler ran %v", second.calls)
	}
	close(f.block)
	<-finished
	close(f.started)
	if first != nil {
		t.Fatalf("first scheduler: %v", first)
	}
	c, err := (&Scheduler{Spec: s, Store: openTestStore(t, db), Runner: second}).Run(ctx)
	if err != nil || c.Skipped != c.Total {
		t.Errorf("after the first ended: got %+v, %v; want every transfer skipped, no error", c, err)
	}

	host, _ := os.Hostname()
	space := pidSpace()
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	past := func() time.Time { return time.Now().Add(-time.Hour) }
	for _, tc := range []struct {
		name    string
		holder  Owner
		now     func() time.Time // the holder's clock when it took the lease
		refused bool
	}{
		{"live, another host", Owner{"elsewhere", 1, "00", space}, nil, true},
		{"expired, another host", Owner{"elsewhere", 1, "01", space}, past, false},
		{"live, a dead process of this host", Owner{host, dead.Process.Pid, "02", space}, nil, false},
		{"live, a running process of this host", Owner{host, os.Getpid(), "03", space}, nil, true},
		// This host's name, but another PID space (a container or machine
		// of the same name): this host's processes say nothing of it.
		{"live, this host name, another PID space", Owner{host, dead.Process.Pid, "04", space + "x"}, nil, true},
	} {
		l, err := st.Acquire(ctx, "test", tc.holder, time.Hour-time.Minute, tc.now)
		if err != nil {
			t.Fatalf("%s: taking the lease: %v", tc.name, err)
		}
		_, err = (&Scheduler{Spec: s, Store: st, Runner: newFake(t, 1)}).Run(ctx)
		if got := errors.As(err, &le); got != tc.refused || (err != nil && !tc.refused) {
			t.Errorf("%s: got %v, want refused %v", tc.name, err, tc.refused)
		}
		if tc.refused && !strings.Contains(err.Error(), tc.holder.String()) {
			t.Errorf("%s: %v does not name the holder %s", tc.name, err, tc.holder)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}

	// A run whose lease is taken (here: its row overwritten) stops.
	f = newFake(t, 1)
	f.block = make(chan struct{}) // transfers run until cancelled
	_, err = (&Scheduler{Spec: testSpec(t, 3, 3, 1, ""), Store: st, Runner: f, LeaseTTL: 300 * time.Millisecond}).Run(
		stealAfterStart(t, st, f))
	if !errors.Is(err, ErrLeaseLost) {
		t.Errorf("run whose lease was taken: got %v, want ErrLeaseLost", err)
	}
}

// stealAfterStart returns a context for a scheduler run with fake runner
// f: once f has started a transfer, the campaign's lease row is given to
// another owner, as a run that found the lease expired would take it.
func stealAfterStart(t *testing.T, st *Store, f *fakeRunner) context.Context {
	f.started = make(chan string)
	go func() {
		<-f.started
		if _, err := st.SQL.SQL().Exec(context.Background(), `UPDATE campaign_leases SET owner_token = ? WHERE campaign = ?`, "thief", "test"); err != nil {
			t.Error(err)
		}
		for range f.started {
		}
	}()
	t.Cleanup(func() { close(f.started) })
	return context.Background()
}

// TestLeaseRenewalHangs: a run whose renewals hang (another handle holds
// SQLite's write lock: each renewal waits for it, up to the store's busy
// timeout of minutes) cancels its transfers with ErrLeaseLost once its
// lease expires, not when a renewal gives up.
func TestLeaseRenewalHangs(t *testing.T) {
	db := sqliteDB(t)
	st := openTestStore(t, db)
	f := newFake(t, 1)
	f.block = make(chan struct{}) // transfers run until cancelled
	f.started = make(chan string)
	release := make(chan struct{})
	locked := make(chan error, 1)
	t0 := time.Now()
	go func() {
		<-f.started
		other := openTestStore(t, db)
		locked <- other.SQL.InTx(context.Background(), true, func(store.SQLTx) error {
			<-release // held until the run's transfer was cancelled
			return nil
		})
	}()
	stopped := make(chan time.Duration, 1)
	r := runnerFunc(func(ctx context.Context, tr Transfer) (*Outcome, error) {
		o, err := f.Run(ctx, tr)
		select {
		case stopped <- time.Since(t0):
			close(release)
		default:
		}
		return o, err
	})
	_, err := (&Scheduler{Spec: testSpec(t, 2, 1, 1, ""), Store: st, Runner: r, LeaseTTL: 300 * time.Millisecond}).Run(context.Background())
	if lerr := <-locked; lerr != nil {
		t.Fatal(lerr)
	}
	if took := <-stopped; !errors.Is(err, ErrLeaseLost) || took > time.Minute {
		t.Errorf("run whose renewals hang: got %v, its transfer cancelled after %v; want ErrLeaseLost and the cancel well before the busy timeout (2 min)", err, took)
	}
}
