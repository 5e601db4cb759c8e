package campaign

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"cclab/store"
)

// testCopy: CopyCampaigns moves every stored spec and attempt (done and
// failed) from the database newDB makes to a new SQLite file and from there
// to a second new database of newDB's kind, unchanged; copying again adds
// nothing; a named campaign that is not there is an error naming it.
func testCopy(t *testing.T, newDB func(t *testing.T) string) {
	ctx := context.Background()
	src := openTestStore(t, newDB(t))
	for _, variants := range []int{2, 3} { // two specs (digests) of one campaign
		s := testSpec(t, 3, variants, 1, "")
		f := newFake(t, 1)
		f.fail = func(tr Transfer) error {
			if tr.Pair == (Pair{"h2", "h3"}) {
				return &Failure{CauseUnauthorized, errors.New("agent h3 refused our key")}
			}
			return nil
		}
		if _, err := (&Scheduler{Spec: s, Store: src, Runner: f}).Run(ctx); err != nil {
			t.Fatal(err)
		}
	}
	want, err := src.Rows(ctx, "test", "")
	if err != nil {
		t.Fatal(err)
	}
	wantSpecs, err := src.specs(ctx, "test")
	if err != nil {
		t.Fatal(err)
	}
	if len(want) != 30 || len(wantSpecs) != 2 {
		t.Fatalf("source: %d attempts and %d specs, want 30 and 2", len(want), len(wantSpecs))
	}
	check := func(what string, dst *Store) {
		t.Helper()
		got, err := dst.Rows(ctx, "test", "")
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: the attempts differ from the source's (%d rows, want %d)", what, len(got), len(want))
		}
		gotSpecs, err := dst.specs(ctx, "test")
		if err != nil || !reflect.DeepEqual(gotSpecs, wantSpecs) {
			t.Errorf("%s: specs %v, %v; want the source's %v", what, gotSpecs, err, wantSpecs)
		}
	}
	mid := openTestStore(t, sqliteDB(t))
	for i, wantSt := range []CopyStats{{Campaigns: 1, Specs: 2, Attempts: 30}, {Campaigns: 1, Skipped: 30}} {
		got, err := CopyCampaigns(ctx, mid.SQL, src.SQL, "")
		if err != nil || got != wantSt {
			t.Errorf("copy %d to SQLite: got %+v, %v; want %+v", i+1, got, err, wantSt)
		}
	}
	check("SQLite copy", mid)
	back := openTestStore(t, newDB(t))
	if got, err := CopyCampaigns(ctx, back.SQL, mid.SQL, "test"); err != nil || got != (CopyStats{Campaigns: 1, Specs: 2, Attempts: 30}) {
		t.Errorf("copy back: got %+v, %v; want 1 campaign, 2 specs, 30 attempts", got, err)
	}
	check("copy of the copy", back)
	if _, err := CopyCampaigns(ctx, back.SQL, src.SQL, "nope"); err == nil || !strings.Contains(err.Error(), `"nope"`) {
		t.Errorf("copying a missing campaign: got %v, want an error naming it", err)
	}
}

// TestCopyWithoutCampaignTables: a results database without campaign tables
// copies nothing and gets none; naming a campaign is an error.
func TestCopyWithoutCampaignTables(t *testing.T) {
	ctx := context.Background()
	src, err := store.Open(filepath.Join(t.TempDir(), "plain.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer src.Close()
	dst, err := store.Open(filepath.Join(t.TempDir(), "dst.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer dst.Close()
	if got, err := CopyCampaigns(ctx, dst, src, ""); err != nil || got != (CopyStats{}) {
		t.Errorf("copy all: got %+v, %v; want nothing, nil", got, err)
	}
	for _, st := range []*store.SQLStore{src, dst} {
		if v, err := st.TablesVersion(ctx, "campaign"); v != 0 || err != nil {
			t.Errorf("campaign tables after the copy: version %d, %v; want none", v, err)
		}
	}
	if _, err := CopyCampaigns(ctx, dst, src, "c"); err == nil || !strings.Contains(err.Error(), `"c"`) {
		t.Errorf("copy a named campaign: got %v, want an error naming it", err)
	}
}
