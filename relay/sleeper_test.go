package relay

import (
	"testing"
	"time"
)

// TestSleeperWake: a sleep ends when woken (long before its hour), a wake
// before a sleep ends the next sleep at once, and a sleep that is not woken
// runs out and says so. No bound on how precisely it wakes: that is a
// timing figure (the relay's sleep lateness, cmd/bottleneck/relaybench).
func TestSleeperWake(t *testing.T) {
	for _, raw := range []bool{false, true} {
		name := "ppoll"
		if raw {
			name = "raw ppoll"
		}
		t.Run(name, func(t *testing.T) {
			s, err := newSleeper(false, raw)
			if err != nil {
				t.Fatal(err)
			}
			defer s.close()
			if s.sleep(time.Millisecond) {
				t.Errorf("sleep(1ms) without a wake reported a wake")
			}
			s.wake()
			if !s.sleep(time.Hour) {
				t.Errorf("sleep after a pending wake got no wake")
			}
			done := make(chan bool)
			go func() {
				for {
					// A raw sleep may end early on a signal (EINTR); go on
					// until woken, as the scheduler does.
					if s.sleep(time.Hour) {
						done <- true
						return
					}
				}
			}()
			time.Sleep(10 * time.Millisecond) // let it sleep (not needed for correctness: a wake is kept until a sleep takes it)
			s.wake()
			if !<-done {
				t.Errorf("sleep did not report the wake")
			}
		})
	}
}
