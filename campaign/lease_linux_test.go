package campaign

import (
	"os"
	"os/exec"
	"testing"

	"golang.org/x/sys/unix"
)

// TestProcessAliveZombie: a killed process that its parent has not reaped
// yet (a zombie) does not hold its lease; a running one does.
func TestProcessAliveZombie(t *testing.T) {
	if !processAlive(os.Getpid()) {
		t.Errorf("processAlive(self) = false, want true")
	}
	cmd := exec.Command("sleep", "600")
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	pid := cmd.Process.Pid
	if !processAlive(pid) {
		t.Errorf("processAlive(running child) = false, want true")
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	// Wait for the exit but leave the child unreaped (WNOWAIT): a zombie.
	var info unix.Siginfo
	if err := unix.Waitid(unix.P_PID, pid, &info, unix.WEXITED|unix.WNOWAIT, nil); err != nil {
		t.Fatal(err)
	}
	if processAlive(pid) {
		t.Errorf("processAlive(zombie %d) = true, want false", pid)
	}
	_ = cmd.Wait()
}
