package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"

	"cclab/campaign"
	"cclab/store"
)

func init() {
	register("campaign", "measurement campaigns across hosts' agents: run, status, report, profile, validate, relays (docs/campaigns.md)", runCampaign)
}

// campaignCommands are cclab campaign's commands.
// ("run" is registered by campaign_run.go).
var campaignCommands = map[string]func(args []string) int{
	"status":      runCampaignStatus,
	"report":      runCampaignReport,
	"profile":     runCampaignProfile,
	"relay-stats": runCampaignRelayStats,
}

func campaignUsage() {
	fmt.Fprint(os.Stderr, `usage:
  cclab campaign run SPEC.yaml [-db DB] [-v] [-plan]    run the campaign's transfers (resumes where it stopped)
  cclab campaign status SPEC.yaml [-db DB]              done, failed and pending transfers per path and variant
  cclab campaign report SPEC.yaml [-db DB] [-o FILE]    the ETH analysis of the stored transfers (HTML)
  cclab campaign profile SPEC.yaml [-db DB] [-o FILE]   scenario path profiles of the measured paths (YAML)
  cclab campaign relays SPEC.yaml                       the bottleneck command line of each of the spec's relays
  cclab campaign relay-stats SPEC.yaml [-db DB] -stats FILE -fwd LINK [-rev LINK]
                                                        store a relay's host-limit intervals (its -stats lines) for LINK
  cclab campaign validate SPEC.yaml [-db DB] [-backends sim,live] [-include-host-limited] [-alone]
                                                        replay the profiles for every measured variant: predicted vs measured

DB is an SQLite file or a PostgreSQL URL; default the spec's db, else cclab.db (docs/campaigns.md).
`)
}

func runCampaign(args []string) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "help" {
		campaignUsage()
		return 2
	}
	cmd, ok := campaignCommands[args[0]]
	if !ok {
		fmt.Fprintf(os.Stderr, "cclab campaign: unknown command %q (allowed: profile, relay-stats, relays, report, run, status, validate)\n", args[0])
		campaignUsage()
		return 2
	}
	return cmd(args[1:])
}

// campaignFlags is what every cclab campaign command parses: the spec
// (one positional argument anywhere among the flags) and -db.
type campaignFlags struct {
	fs *flag.FlagSet
	db *string
	// The commands' own flags (nil where a command has none).
	verbose, plan *bool   // run
	out           *string // report, profile
	backends      *string // validate
	hostLimited   *bool   // validate: -include-host-limited
	alone         *bool   // validate: -alone
	stats, fwd    *string // relay-stats: -stats, -fwd
	rev           *string // relay-stats: -rev
}

func newCampaignFlags(cmd string) campaignFlags {
	fs := flag.NewFlagSet("cclab campaign "+cmd, flag.ContinueOnError)
	db := fs.String("db", "", "results database: an SQLite file or a PostgreSQL URL postgres://user@host/db (default: the spec's db, else "+store.DefaultDB+")")
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "usage: %s SPEC.yaml [flags]\n\nflags:\n", fs.Name())
		fs.PrintDefaults()
	}
	c := campaignFlags{fs: fs, db: db}
	switch cmd {
	case "run":
		c.verbose = fs.Bool("v", false, "print a line per finished transfer (on stderr) instead of the progress bar")
		c.plan = fs.Bool("plan", false, "print the plan (one line per transfer, in order) and exit; nothing is run")
	case "report":
		c.out = fs.String("o", "", "output HTML file (default: reports/<campaign>/campaign.html)")
	case "profile":
		c.out = fs.String("o", "", "output scenario file (default: <campaign>-profile.yaml; - for stdout)")
	case "relay-stats":
		c.stats = fs.String("stats", "", "the relay's statistics file (bottleneck -stats: JSON lines); - for standard input")
		c.fwd = fs.String("fwd", "", `the link the relay's forward direction emulates, as the spec's routes name it: "relay NAME", "up HOST", "down HOST", "groups A>B"`)
		c.rev = fs.String("rev", "", `the link its reverse direction emulates (default: -fwd's for a campaign relay, "relay NAME"; none otherwise)`)
	case "validate":
		c.backends = fs.String("backends", "sim", "where to replay: sim, live (through the relay on loopback) or sim,live")
		c.hostLimited = fs.Bool("include-host-limited", false, "compare with every measured transfer, also those their sender or receiver marked host-limited or during which a relay on their route was (cclab campaign relay-stats; left out by default)")
		c.alone = fs.Bool("alone", false, "replay each path alone, without the campaign's transfers that overlapped each measured one at its bottleneck (replayed with them by default)")
	}
	return c
}

// parse parses args and loads the spec; ok is false when the command
// should exit with code (0 after -h, 2 for bad flags or a bad spec).
func (c campaignFlags) parse(args []string) (sp *campaign.Spec, code int, ok bool) {
	name, err := parseNameAndFlags(c.fs, args)
	if err != nil {
		var ec exitCode
		if errors.As(err, &ec) {
			return nil, int(ec), false
		}
		fmt.Fprintf(os.Stderr, "%s: %v\n", c.fs.Name(), err)
		return nil, 2, false
	}
	if name == "" {
		c.fs.Usage()
		return nil, 2, false
	}
	sp, err = campaign.LoadSpec(name)
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", c.fs.Name(), err)
		return nil, 2, false
	}
	return sp, 0, true
}

// dbName is the database the command uses: -db, the spec's, the default.
func (c campaignFlags) dbName(sp *campaign.Spec) string {
	switch {
	case *c.db != "":
		return *c.db
	case sp.DB != "":
		return sp.DB
	}
	return store.DefaultDB
}

// open opens the campaign store; existing requires an SQLite file to exist.
func (c campaignFlags) open(sp *campaign.Spec, existing bool) (*campaign.Store, error) {
	db := c.dbName(sp)
	if existing && !store.IsPostgresURL(db) {
		if _, err := os.Stat(db); err != nil {
			return nil, fmt.Errorf("database %s: %w", db, err)
		}
	}
	return campaign.OpenStore(db)
}

// load parses args, loads the spec and the stored rows of its campaign
// and digest from the database, which must exist; ok is false when the
// command should exit with code (2 for bad flags or a bad spec, 1 for a
// database error, reported).
func (c campaignFlags) load(args []string) (sp *campaign.Spec, rows []campaign.Row, code int, ok bool) {
	if sp, code, ok = c.parse(args); !ok {
		return nil, nil, code, false
	}
	st, err := c.open(sp, true)
	if err == nil {
		rows, err = st.Transfers(context.Background(), sp)
		st.Close()
	}
	if err != nil {
		fmt.Fprintf(os.Stderr, "%s: %v\n", c.fs.Name(), err)
		return nil, nil, 1, false
	}
	return sp, rows, 0, true
}

func runCampaignStatus(args []string) int {
	c := newCampaignFlags("status")
	sp, rows, code, ok := c.load(args)
	if !ok {
		return code
	}
	lines, err := campaign.Summarize(sp, rows)
	if err == nil {
		fmt.Printf("campaign %s (spec digest %s), database %s\n", sp.Name, sp.Digest(), store.DBName(c.dbName(sp)))
		err = campaign.WriteStatus(os.Stdout, lines)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab campaign status:", err)
		return 1
	}
	return 0
}

func runCampaignReport(args []string) int {
	c := newCampaignFlags("report")
	out := c.out
	sp, rows, code, ok := c.load(args)
	if !ok {
		return code
	}
	path := *out
	if path == "" {
		path = filepath.Join("reports", sp.Name, "campaign.html")
	}
	cs, err := storedComparisons(c, sp, rows)
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab campaign report:", err)
		return 1
	}
	if err := writeFileWith(path, func(w io.Writer) error { return campaign.WriteReport(w, sp, c.dbName(sp), rows, cs) }); err != nil {
		fmt.Fprintln(os.Stderr, "cclab campaign report:", err)
		return 1
	}
	abs, _ := filepath.Abs(path)
	fmt.Println("report:", abs)
	return 0
}

func runCampaignProfile(args []string) int {
	c := newCampaignFlags("profile")
	out := c.out
	sp, rows, code, ok := c.load(args)
	if !ok {
		return code
	}
	profiles := campaign.Profiles(sp, rows)
	write := func(w io.Writer) error { return campaign.WriteProfileScenario(w, sp, profiles) }
	var err error
	if *out == "-" {
		err = write(os.Stdout)
	} else {
		path := *out
		if path == "" {
			path = sp.Name + "-profile.yaml"
		}
		if err = writeFileWith(path, write); err == nil {
			fmt.Printf("profile of %d paths: %s (replay: cclab run %s)\n", len(profiles), path, path)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "cclab campaign profile:", err)
		return 1
	}
	return 0
}

// storedComparisons is the newest stored replay of the campaign against
// its rows (campaign validate), none when it was never validated.
func storedComparisons(c campaignFlags, sp *campaign.Spec, rows []campaign.Row) ([]campaign.Comparison, error) {
	st, err := c.open(sp, true)
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return campaign.StoredComparisons(context.Background(), st.SQL, sp, rows)
}

// writeFileWith writes a file (creating its directory) with write.
func writeFileWith(path string, write func(io.Writer) error) error {
	if dir := filepath.Dir(path); dir != "." {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	f, err := os.Create(path)
	if err != nil {
		return err
	}
	if err := write(f); err != nil {
		f.Close()
		return err
	}
	return f.Close()
}
