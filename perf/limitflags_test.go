package perf

import (
	"flag"
	"io"
	"strings"
	"testing"
	"time"

	"cclab/transport"
)

// TestAdmissionFlags: the limit flags parse into the endpoint config, out
// of range values are refused naming the flag, and CheckLimits names the
// flag to raise when one limit could never be reached.
func TestAdmissionFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string // error substring; "" ok
	}{
		{[]string{"-max-conns-per-source", "2000", "-max-conns-per-prefix", "2000"}, ""},
		{[]string{"-max-conns-per-source", "2000"}, "raise that too"},
		{[]string{"-max-conns-per-prefix", "5000"}, "-max-conns 4096"},
		{[]string{"-max-half-open-per-source", "200"}, "-max-half-open-per-prefix"},
		{[]string{"-max-conns", "0"}, "must be 1..1048576"},
		{[]string{"-evict-idle", "10ms"}, "100ms..1h"},
		{[]string{"-evict-idle", "5s", "-max-half-open", "1000"}, ""},
	} {
		fs := flag.NewFlagSet("receiver", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		var ec transport.EndpointConfig
		AdmissionFlags(fs, &ec)
		err := fs.Parse(tc.args)
		if err == nil {
			err = CheckLimits(ec)
		}
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%v: %v", tc.args, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%v: err %v, want one with %q", tc.args, err, tc.want)
		}
		if tc.want == "" && tc.args[0] == "-evict-idle" && ec.EvictIdle != 5*time.Second {
			t.Errorf("-evict-idle 5s parsed as %v", ec.EvictIdle)
		}
	}
}
