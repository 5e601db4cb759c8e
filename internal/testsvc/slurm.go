package testsvc

import (
	"crypto/rand"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"cclab/internal/testenv"
)

// Slurm is a running single-node Slurm cluster: munged with a key of its
// own, slurmctld and slurmd, all in one temporary directory and on
// loopback.
type Slurm struct {
	Dir  string // configuration, state, spool and logs
	Conf string // slurm.conf; clients find it through SLURM_CONF (Env)
	Node string // the node's name (this host's name)
	CPUs int    // CPUs the node offers
}

// slurmPrograms are the programs StartSlurm needs.
var slurmPrograms = []string{"munged", "slurmctld", "slurmd", "sbatch", "sinfo"}

// StartSlurm starts munged, slurmctld and slurmd (foreground children of
// the test, stopped when it ends) with a configuration of one node (this
// host, at 127.0.0.1, with its CPUs) in one partition, process tracking by
// /proc (ProctrackType=proctrack/linuxproc) and no task plugin
// (TaskPlugin=task/none): no cgroups or systemd needed. It waits until the
// node is idle.
func StartSlurm(t testing.TB) *Slurm {
	t.Helper()
	for _, p := range slurmPrograms {
		_, err := exec.LookPath(p)
		testenv.Need(t, "Slurm ("+p+"; Debian: apt-get install slurm-wlm munge)", err)
	}
	host, err := os.Hostname()
	if err != nil {
		t.Fatal(err)
	}
	host, _, _ = strings.Cut(host, ".")
	s := &Slurm{Dir: tempDir(t, "cclab-slurm-"), Node: host, CPUs: runtime.NumCPU()}
	s.Conf = filepath.Join(s.Dir, "slurm.conf")
	path := func(name string) string { return filepath.Join(s.Dir, name) }
	for _, d := range []string{"state", "spool"} {
		if err := os.Mkdir(path(d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	// munged: a fresh key (munged wants it private to its user).
	key := make([]byte, 1024)
	rand.Read(key)
	if err := os.WriteFile(path("munge.key"), key, 0o400); err != nil {
		t.Fatal(err)
	}
	socket := path("munge.socket")
	munged := startDaemon(t, s.Dir, "munged", "munged", "--foreground", "--force", "--key-file="+path("munge.key"),
		"--socket="+socket, "--pid-file="+path("munged.pid"), "--log-file="+path("munged.log"), "--seed-file="+path("munged.seed"))
	waitFor(t, "munged's socket", 2*time.Minute, func() bool { _, err := os.Stat(socket); return err == nil }, munged)

	conf := fmt.Sprintf(`# single-node test cluster (cclab internal/testsvc)
ClusterName=cclabtest
SlurmctldHost=%[1]s(127.0.0.1)
SlurmctldPort=%[2]d
SlurmdPort=%[3]d
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
AuthInfo=socket=%[4]s
CredType=cred/munge
StateSaveLocation=%[5]s
SlurmdSpoolDir=%[6]s
SlurmctldPidFile=%[7]s
SlurmdPidFile=%[8]s
SlurmctldLogFile=%[9]s
SlurmdLogFile=%[10]s
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
SchedulerType=sched/builtin
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
ReturnToService=2
SlurmdParameters=config_overrides
NodeName=%[1]s NodeAddr=127.0.0.1 CPUs=%[11]d State=UNKNOWN
PartitionName=test Nodes=ALL Default=YES MaxTime=INFINITE State=UP
`, s.Node, freePort(t), freePort(t), socket, path("state"), path("spool"), path("slurmctld.pid"), path("slurmd.pid"),
		path("slurmctld.log"), path("slurmd.log"), s.CPUs)
	if err := os.WriteFile(s.Conf, []byte(conf), 0o644); err != nil {
		t.Fatal(err)
	}
	ctld := startDaemon(t, s.Dir, "slurmctld", "slurmctld", "-D", "-f", s.Conf)
	slurmd := startDaemon(t, s.Dir, "slurmd", "slurmd", "-D", "-f", s.Conf, "-N", s.Node)
	waitFor(t, "the Slurm node to be idle", 2*time.Minute, func() bool {
		out, err := s.Command("sinfo", "-h", "-N", "-o", "%T").Output()
		return err == nil && strings.TrimSpace(string(out)) == "idle"
	}, munged, ctld, slurmd)
	return s
}

// Env returns the environment for the cluster's clients (sbatch, squeue,
// sinfo): the current one with SLURM_CONF set.
func (s *Slurm) Env() []string {
	return append(os.Environ(), "SLURM_CONF="+s.Conf)
}

// Command returns a client command (sbatch, sinfo, ...) for the cluster.
func (s *Slurm) Command(name string, args ...string) *exec.Cmd {
	cmd := exec.Command(name, args...)
	cmd.Env = s.Env()
	return cmd
}

// Logs returns the daemons' logs, for a failing test's message.
func (s *Slurm) Logs() string {
	var b strings.Builder
	for _, f := range []string{"slurmctld.log", "slurmd.log"} {
		data, _ := os.ReadFile(filepath.Join(s.Dir, f))
		fmt.Fprintf(&b, "--- %s:\n%s\n", f, data)
	}
	return b.String()
}
