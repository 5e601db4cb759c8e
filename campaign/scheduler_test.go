package campaign

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

// testSpec is a spec of hosts h1..hN over all pairs with nVariants
// variants, rounds rounds and no pacing.
func testSpec(t *testing.T, hosts, nVariants, rounds int, extra string) *Spec {
	t.Helper()
	var b strings.Builder
	b.WriteString("name: test\nhosts:\n")
	for i := 1; i <= hosts; i++ {
		fmt.Fprintf(&b, "  - {name: h%d, agent: \"127.0.0.%d:5310\", group: g%d}\n", i, i, i%2)
	}
	b.WriteString("variants:\n")
	ccs := []string{"reno", "vegas", "cubic", "bbr", "newreno"}
	for i := 0; i < nVariants; i++ {
		fmt.Fprintf(&b, "  - {name: v%d, cc: %s}\n", i, ccs[i%len(ccs)])
	}
	fmt.Fprintf(&b, "transfer: {bytes: 1MB}\ncredentials: {psk: k}\nschedule: {rounds: %d, seed: 3, spacing: 0s, retry_delay: 0s%s}\n", rounds, extra)
	s, err := ParseSpec("test.yaml", []byte(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func TestPlanDeterministicAndShuffled(t *testing.T) {
	s := testSpec(t, 3, 5, 20, "")
	a, b := s.Plan(), s.Plan()
	if got, want := len(a), 20*6*5; got != want {
		t.Fatalf("plan: got %d transfers, want %d", got, want)
	}
	for i := range a {
		if a[i] != b[i] {
			t.Fatalf("plan not deterministic at %d: %v vs %v", i, a[i], b[i])
		}
		if a[i].Seq != i {
			t.Fatalf("seq %d at %d", a[i].Seq, i)
		}
	}
	// Within each round and pair, every variant exactly once; the first
	// variant differs between rounds/pairs (the order is shuffled).
	firsts := map[string]int{}
	for k := 0; k < len(a); k += 5 {
		seen := map[string]bool{}
		for _, it := range a[k : k+5] {
			if it.Round != a[k].Round || it.Pair != a[k].Pair {
				t.Fatalf("block %d mixes rounds or pairs", k)
			}
			seen[it.Variant.Name] = true
		}
		if len(seen) != 5 {
			t.Errorf("round %d pair %s: variants %v, want all 5", a[k].Round, a[k].Pair, seen)
		}
		firsts[a[k].Variant.Name]++
	}
	if len(firsts) < 4 {
		t.Errorf("first variants of 120 blocks: %v, want (nearly) every variant first sometimes", firsts)
	}
	// Another seed, another order.
	s2 := testSpec(t, 3, 5, 20, "")
	s2.Schedule.Seed = 4
	c := s2.Plan()
	same := 0
	for i := range a {
		if a[i].Variant == c[i].Variant {
			same++
		}
	}
	if same == len(a) {
		t.Errorf("seeds 3 and 4 gave the same order")
	}
}

// fakeRunner fails the test when two transfers share a path or a host runs
// more than hostLimit at once; fail decides an attempt's error.
type fakeRunner struct {
	t         *testing.T
	hostLimit int
	mu        sync.Mutex
	paths     map[[2]string]bool
	hosts     map[string]int
	running   int
	maxRun    int
	// overlap, if set, is closed when two transfers run at once; the first
	// transfer waits for it (at most 30 s), so a scheduler that can run
	// transfers concurrently is seen doing so.
	overlap    chan struct{}
	first      bool
	overlapped bool
	calls      []string
	fail       func(tr Transfer) error
	block      chan struct{} // if set, each transfer waits for a value or its ctx
	started    chan string
}

func newFake(t *testing.T, hostLimit int) *fakeRunner {
	return &fakeRunner{t: t, hostLimit: hostLimit, paths: map[[2]string]bool{}, hosts: map[string]int{}}
}

func (f *fakeRunner) Run(ctx context.Context, tr Transfer) (*Outcome, error) {
	f.mu.Lock()
	if f.paths[tr.Path()] {
		f.t.Errorf("transfer %s started while path %v is busy", tr.ID(), tr.Path())
	}
	f.paths[tr.Path()] = true
	for _, h := range []string{tr.Pair.From, tr.Pair.To} {
		f.hosts[h]++
		if f.hosts[h] > f.hostLimit {
			f.t.Errorf("host %s in %d transfers at once, limit %d", h, f.hosts[h], f.hostLimit)
		}
	}
	f.running++
	f.maxRun = max(f.maxRun, f.running)
	waitOverlap := false
	if f.overlap != nil {
		if f.running >= 2 && !f.overlapped {
			f.overlapped = true
			close(f.overlap)
		}
		waitOverlap, f.first = !f.first, true
	}
	f.calls = append(f.calls, tr.ID())
	f.mu.Unlock()
	if f.started != nil {
		f.started <- tr.ID()
	}
	var err error
	if waitOverlap {
		select {
		case <-f.overlap:
		case <-time.After(30 * time.Second):
			f.t.Errorf("no second transfer started in 30 s while %s ran", tr.ID())
		}
	}
	if f.block != nil {
		select {
		case <-f.block:
		case <-ctx.Done():
			err = ctx.Err()
		}
	} else {
		time.Sleep(time.Millisecond) // let other transfers overlap if the scheduler allowed it
	}
	f.mu.Lock()
	f.paths[tr.Path()] = false
	f.hosts[tr.Pair.From]--
	f.hosts[tr.Pair.To]--
	f.running--
	f.mu.Unlock()
	if err == nil && f.fail != nil {
		err = f.fail(tr)
	}
	if err != nil {
		return nil, err
	}
	return &Outcome{Seconds: 1, Bytes: 1e6, GoodputBps: 8e6, Retransmits: 3, RTOs: 1, RTOCauses: map[string]int64{"burst_loss": 1},
		PacketsSent: 700, Unnecessary: 1, MinRTTms: 10, MeanSRTTms: 12, SenderJSON: []byte(`{"end":{}}`), ReceiverJSON: []byte(`{}`)}, nil
}

func openTestStore(t *testing.T, db string) *Store {
	t.Helper()
	st, err := OpenStore(db)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func sqliteDB(t *testing.T) string { return filepath.Join(t.TempDir(), "c.db") }

// schedulerTests run on SQLite and PostgreSQL (newDB names a new database).
var schedulerTests = []struct {
	name string
	test func(t *testing.T, newDB func(t *testing.T) string)
}{
	{"exclusive", testExclusive},
	{"resume", testResume},
	{"failures", testFailures},
	{"rows", testRows},
	{"report", testReportFromStore},
	{"copy", testCopy},
	{"lease", testLease},
}

func TestSchedulerSQLite(t *testing.T) {
	for _, tc := range schedulerTests {
		t.Run(tc.name, func(t *testing.T) { tc.test(t, sqliteDB) })
	}
}

// testExclusive: 6 hosts (15 paths), concurrency 3: never two transfers
// on one path or host (the fake fails the test), and transfers do overlap.
func testExclusive(t *testing.T, newDB func(t *testing.T) string) {
	s := testSpec(t, 6, 3, 2, ", concurrency: 3")
	st := openTestStore(t, newDB(t))
	f := newFake(t, 1)
	f.overlap = make(chan struct{})
	c, err := (&Scheduler{Spec: s, Store: st, Runner: f}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := c.Done, 2*30*3; got != want {
		t.Errorf("done: got %d, want %d", got, want)
	}
	if f.maxRun < 2 || f.maxRun > 3 {
		t.Errorf("most transfers at once: got %d, want 2 or 3 (concurrency 3 over 6 hosts)", f.maxRun)
	}
}

// testResume: cancel the campaign after some transfers, run it again: every
// transfer stored exactly once, in the end all done, none repeated.
func testResume(t *testing.T, newDB func(t *testing.T) string) {
	s := testSpec(t, 4, 4, 2, ", concurrency: 2")
	db := newDB(t)
	st := openTestStore(t, db)
	ctx, cancel := context.WithCancel(context.Background())
	f := newFake(t, 1)
	f.block = make(chan struct{})
	f.started = make(chan string)
	var c Counts
	var runErr error
	finished := make(chan struct{})
	go func() {
		c, runErr = (&Scheduler{Spec: s, Store: st, Runner: f}).Run(ctx)
		close(finished)
	}()
	// Let 10 transfers finish, then cancel with others in flight.
	for n := 0; n < 10; n++ {
		<-f.started
		f.block <- struct{}{}
	}
	<-f.started // one more in flight
	cancel()
	go func() { // transfers the scheduler started before it saw the cancel
		for range f.started {
		}
	}()
	<-finished
	close(f.started)
	if !errors.Is(runErr, context.Canceled) {
		t.Errorf("first run: got error %v, want context.Canceled", runErr)
	}
	if c.Done < 10 {
		t.Errorf("first run: %d done, want at least 10", c.Done)
	}
	rows, err := st.Rows(context.Background(), s.Name, s.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != c.Done {
		t.Errorf("first run: %d rows stored, want %d (the finished ones; cancelled ones are not stored)", len(rows), c.Done)
	}
	// Resume in a new store handle (as a new process would).
	st2 := openTestStore(t, db)
	f2 := newFake(t, 1)
	c2, err := (&Scheduler{Spec: s, Store: st2, Runner: f2}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	total := len(s.Plan())
	if c2.Skipped != c.Done || c2.Done != total-c.Done {
		t.Errorf("resumed run: %+v, want %d skipped and %d done", c2, c.Done, total-c.Done)
	}
	for _, id := range f2.calls {
		for _, r := range rows {
			if r.ID == id {
				t.Errorf("resumed run repeated %s", id)
			}
		}
	}
	rows, err = st2.Rows(context.Background(), s.Name, s.Digest())
	if err != nil {
		t.Fatal(err)
	}
	seen := map[int]bool{}
	for _, r := range rows {
		if seen[r.Seq] {
			t.Errorf("transfer %s stored twice", r.ID)
		}
		seen[r.Seq] = true
		if r.Status != StatusDone {
			t.Errorf("transfer %s: status %s", r.ID, r.Status)
		}
	}
	if len(seen) != total {
		t.Errorf("stored %d transfers, want %d", len(seen), total)
	}
	// A third run has nothing to do.
	c3, err := (&Scheduler{Spec: s, Store: st2, Runner: newFake(t, 1)}).Run(context.Background())
	if err != nil || c3.Skipped != total || c3.Done != 0 {
		t.Errorf("third run: %+v, %v; want all %d skipped", c3, err, total)
	}
}

// testFailures: failures are stored with their cause and retried per the
// policy; unauthorized is not retried within the run.
func testFailures(t *testing.T, newDB func(t *testing.T) string) {
	s := testSpec(t, 3, 2, 1, ", retries: 2")
	st := openTestStore(t, newDB(t))
	f := newFake(t, 1)
	f.fail = func(tr Transfer) error {
		switch {
		case tr.Pair == Pair{"h1", "h2"} && tr.Attempt == 1:
			return fmt.Errorf("dial h2: %w", syscall.ECONNREFUSED)
		case tr.Pair == Pair{"h2", "h3"}:
			return &Failure{CauseUnauthorized, errors.New("agent h3 refused our key")}
		case tr.Pair == Pair{"h3", "h1"}:
			return context.DeadlineExceeded
		case tr.Pair == Pair{"h3", "h2"} && tr.Attempt < 3:
			return errors.New("receiver: connection reset")
		}
		return nil
	}
	c, err := (&Scheduler{Spec: s, Store: st, Runner: f}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	// h2->h3 (2 variants) unauthorized once each, not retried: neither
	// done nor given up, but deferred; h3->h1 (2) timeout 3 times: given
	// up. Every failed attempt is counted by its cause.
	wantAttempts := map[string]int{CauseDialRefused: 2, CauseUnauthorized: 2, CauseTimeout: 6, CauseTransfer: 4}
	if got, want := c, (Counts{Total: 12, Done: 8, Failed: 2, Deferred: 2, FailedAttempts: wantAttempts}); !reflect.DeepEqual(got, want) {
		t.Errorf("counts: got %+v, want %+v", got, want)
	}
	if got := c.NotDone(); got != 4 {
		t.Errorf("NotDone: got %d, want 4 (2 given up, 2 deferred)", got)
	}
	rows, err := st.Rows(context.Background(), s.Name, "")
	if err != nil {
		t.Fatal(err)
	}
	causes := map[string]int{}
	for _, r := range rows {
		if r.Status == StatusFailed {
			causes[r.Cause]++
			if r.Error == "" {
				t.Errorf("%s attempt %d: failed without an error", r.ID, r.Attempt)
			}
		}
	}
	for k, v := range wantAttempts {
		if causes[k] != v {
			t.Errorf("failures with cause %s: got %d, want %d (all: %v)", k, causes[k], v, causes)
		}
	}
	st2, err := Summarize(s, rows)
	if err != nil {
		t.Fatal(err)
	}
	for i, l := range st2 {
		if want := (Pair{s.Pairs[i/2].From, s.Pairs[i/2].To}); l.Pair != want || l.Variant != s.Variants[i%2].Name {
			t.Errorf("status line %d: %s %s, want %s %s (the spec's order)", i, l.Pair, l.Variant, want, s.Variants[i%2].Name)
		}
	}
	tot, causes := Totals(st2)
	if got, want := tot, (StatusCounts{Done: 8, Failed: 2, Pending: 2}); got != want {
		t.Errorf("status totals: got %+v, want %+v", got, want)
	}
	if !reflect.DeepEqual(causes, wantAttempts) {
		t.Errorf("status failed attempts: got %v, want %v", causes, wantAttempts)
	}
}

// testRows: a stored row reads back as written.
func testRows(t *testing.T, newDB func(t *testing.T) string) {
	s := testSpec(t, 2, 1, 1, "")
	st := openTestStore(t, newDB(t))
	if _, err := (&Scheduler{Spec: s, Store: st, Runner: newFake(t, 1)}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := st.Rows(context.Background(), "test", s.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if len(rows) != 2 {
		t.Fatalf("got %d rows, want 2", len(rows))
	}
	r := rows[0]
	if r.From != "h1" || r.To != "h2" || r.FromGroup != "g1" || r.ToGroup != "g0" || r.Variant != "v0" || r.CC != "reno" ||
		r.Recovery != "rack" || r.Status != StatusDone || r.Bytes != 1e6 || r.GoodputBps != 8e6 || r.Retransmits != 3 ||
		r.RTOCauses["burst_loss"] != 1 || r.PacketsSent != 700 || r.Unnecessary != 1 || r.MinRTTms != 10 || r.SenderJSON != `{"end":{}}` ||
		r.Attempt != 1 || r.Round != 1 || r.ID != "r1/h1->h2/v0" || r.Start.IsZero() {
		t.Errorf("row: got %+v", r)
	}
	names, err := st.Campaigns(context.Background())
	if err != nil || len(names) != 1 || names[0] != "test" {
		t.Errorf("campaigns: got %v, %v", names, err)
	}
	src, dig, err := st.SpecSource(context.Background(), "test", "")
	if err != nil || dig != s.Digest() || src != string(s.Source) {
		t.Errorf("spec source: digest %s, err %v", dig, err)
	}
}

// testReportFromStore: a campaign stored in the database is reported from
// it (the ETH analysis of its rows).
func testReportFromStore(t *testing.T, newDB func(t *testing.T) string) {
	s := testSpec(t, 3, 2, 2, "")
	db := newDB(t)
	st := openTestStore(t, db)
	if _, err := (&Scheduler{Spec: s, Store: st, Runner: newFake(t, 1)}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	rows, err := openTestStore(t, db).Rows(context.Background(), s.Name, s.Digest())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteReport(&b, s, db, rows, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "24 planned (2 rounds × 6 pairs × 2 variants): 24 done, 0 failed, 0 pending") {
		t.Errorf("report header lacks the counts:\n%.2000s", b.String())
	}
}

// TestMaxLength: no transfer starts after schedule.max_length (a clock
// that advances an hour per reading; bound 10 h).
func TestMaxLength(t *testing.T) {
	s := testSpec(t, 3, 2, 5, ", max_length: 10h")
	st := openTestStore(t, sqliteDB(t))
	now := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	clock := func() time.Time { now = now.Add(time.Hour); return now }
	c, err := (&Scheduler{Spec: s, Store: st, Runner: newFake(t, 1), lengthNow: clock}).Run(context.Background())
	if !errors.Is(err, ErrMaxLength) {
		t.Fatalf("got %v, want ErrMaxLength", err)
	}
	if c.Done == 0 || c.Done >= c.Total {
		t.Errorf("done %d of %d: want some, not all", c.Done, c.Total)
	}
}

// TestSpacing: a host's transfers start at least spacing apart.
func TestSpacing(t *testing.T) {
	s := testSpec(t, 2, 1, 3, ", jitter: 10ms")
	s.Schedule.Spacing = 30 * time.Millisecond
	st := openTestStore(t, sqliteDB(t))
	var starts []time.Time
	f := newFake(t, 1)
	f.fail = func(tr Transfer) error { return nil }
	r := runnerFunc(func(ctx context.Context, tr Transfer) (*Outcome, error) {
		starts = append(starts, time.Now())
		return f.Run(ctx, tr)
	})
	if _, err := (&Scheduler{Spec: s, Store: st, Runner: r}).Run(context.Background()); err != nil {
		t.Fatal(err)
	}
	if len(starts) != 6 {
		t.Fatalf("got %d transfers, want 6", len(starts))
	}
	for i := 1; i < len(starts); i++ {
		// Each transfer takes >= 1 ms (the fake); the next starts >= 30 ms after it ends.
		if gap := starts[i].Sub(starts[i-1]); gap < 31*time.Millisecond {
			t.Errorf("transfer %d started %s after the previous one, want >= 31ms", i, gap)
		}
	}
}

type runnerFunc func(ctx context.Context, t Transfer) (*Outcome, error)

func (f runnerFunc) Run(ctx context.Context, t Transfer) (*Outcome, error) { return f(ctx, t) }

// TestUnauthorizedCounted: a run whose every attempt is refused as
// unauthorized finishes nothing and says so — every transfer is counted as
// failed (left for the next run) and every attempt by its cause, not
// "0 failed"; the report's header lists the attempts too.
func TestUnauthorizedCounted(t *testing.T) {
	s := testSpec(t, 3, 2, 1, ", retries: 2")
	db := sqliteDB(t)
	st := openTestStore(t, db)
	f := newFake(t, 1)
	f.fail = func(Transfer) error { return &Failure{CauseUnauthorized, errors.New("agent refused our key")} }
	c, err := (&Scheduler{Spec: s, Store: st, Runner: f}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	want := Counts{Total: 12, Deferred: 12, FailedAttempts: map[string]int{CauseUnauthorized: 12}}
	if !reflect.DeepEqual(c, want) {
		t.Errorf("counts: got %+v, want %+v", c, want)
	}
	if got, want := c.Summary(), "12 transfers: 0 done now, 0 stored before, 12 failed (0 given up, 12 left for the next run); failed attempts: unauthorized 12"; got != want {
		t.Errorf("summary:\n got %q\nwant %q", got, want)
	}
	rows, err := st.Rows(context.Background(), s.Name, s.Digest())
	if err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := WriteReport(&b, s, db, rows, nil); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(b.String(), "unauthorized 12") {
		t.Errorf("report header lacks the failed attempts:\n%.1500s", b.String())
	}
}

// TestCountsSummary: the run's closing line for each mix of outcomes.
func TestCountsSummary(t *testing.T) {
	for _, tc := range []struct {
		c    Counts
		want string
	}{
		{Counts{Total: 4, Done: 3, Skipped: 1}, "4 transfers: 3 done now, 1 stored before, 0 failed (0 given up, 0 left for the next run); failed attempts: none"},
		{Counts{Total: 5, Done: 2, Failed: 1, Deferred: 2, FailedAttempts: map[string]int{CauseTimeout: 3, CauseDialRefused: 1, CauseUnauthorized: 2}},
			"5 transfers: 2 done now, 0 stored before, 3 failed (1 given up, 2 left for the next run); failed attempts: dial_refused 1, timeout 3, unauthorized 2"},
	} {
		if got := tc.c.Summary(); got != tc.want {
			t.Errorf("%+v:\n got %q\nwant %q", tc.c, got, tc.want)
		}
	}
}

// probeRunner records each transfer's ID, settings and how many ran
// beside it when it started.
type probeRunner struct {
	mu      sync.Mutex
	running int
	calls   []probeCall
}

type probeCall struct {
	id       string
	probe    bool
	settings TransferSettings
	beside   int
}

func (f *probeRunner) Run(ctx context.Context, tr Transfer) (*Outcome, error) {
	f.mu.Lock()
	f.calls = append(f.calls, probeCall{tr.ID(), tr.IsProbe(), tr.Settings, f.running})
	f.running++
	f.mu.Unlock()
	time.Sleep(time.Millisecond) // let other transfers overlap if the scheduler allowed it
	f.mu.Lock()
	f.running--
	f.mu.Unlock()
	return &Outcome{Seconds: 1, Bytes: 1e6, GoodputBps: 8e6, PacketsSent: 700, SenderJSON: []byte(`{"end":{}}`), ReceiverJSON: []byte(`{}`)}, nil
}

// TestSchedulerProbesFirst: with a probe phase every pair's probe runs
// first, alone, with the probe's settings; the analyses (final) see only
// the plan's transfers.
func TestSchedulerProbesFirst(t *testing.T) {
	s := testSpec(t, 4, 2, 1, ", concurrency: 2")
	s.Probe = &ProbeSettings{Rate: 50e6, Gain: 1.5, Bytes: 1 << 20}
	st := openTestStore(t, sqliteDB(t))
	f := &probeRunner{}
	c, err := (&Scheduler{Spec: s, Store: st, Runner: f}).Run(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	np := len(s.Pairs)
	if got, want := c.Done, np+len(s.Plan()); got != want {
		t.Errorf("done: got %d, want %d (probes and transfers)", got, want)
	}
	for i, call := range f.calls {
		if got, want := call.probe, i < np; got != want {
			t.Errorf("call %d (%s): probe %v, want %v (the %d probes first)", i, call.id, got, want, np)
		}
		if call.probe && (call.beside != 0 || call.settings != TransferSettings{Bytes: 1 << 20, Qlog: true}) {
			t.Errorf("probe %s: started beside %d transfers with settings %+v, want alone with 1MiB and qlogs", call.id, call.beside, call.settings)
		}
	}
	rows, err := st.Rows(context.Background(), s.Name, s.Digest())
	if err != nil {
		t.Fatal(err)
	}
	if got, want := len(final(s, rows)), len(s.Plan()); got != want {
		t.Errorf("final: %d rows, want the plan's %d", got, want)
	}
	if got, want := len(probeRows(s, rows)), np; got != want {
		t.Errorf("probeRows: %d, want %d", got, want)
	}
	if err := validateCC(s.Probe.CC()); err != nil {
		t.Errorf("the probe's cc %q: %v", s.Probe.CC(), err)
	}
}
