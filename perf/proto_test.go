package perf

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"strings"
	"testing"
	"time"

	"cclab/transport"
	"cclab/transport/udp"
)

func TestParseRequest(t *testing.T) {
	for _, tc := range []struct {
		in      string
		wantErr bool
	}{
		{`{"v":3,"seed":5}`, false},
		{`{"v":3,"seed":5,"test":"0123abcd","flows":4}`, false},
		{`{"v":3,"seed":5,"test":"0123abcd"}`, false},
		{`{"v":3,"seed":5,"flows":4}`, true},
		{`{"v":3,"seed":5,"test":"ab","flows":1}`, true},
		{`{"v":3,"seed":5,"test":"ab","flows":129}`, true},
		{`{"v":3,"seed":5,"test":"XYZ"}`, true},
		{`{"v":2,"seed":5}`, true},
		{`{"v":3,"reverse":true,"bytes":100,"cc":"reno","seed":1}`, false},
		{``, true},
		{`{`, true},
		{`{"v":1,"seed":1}`, true},
		{`{"v":3,"bytes":-1}`, true},
		{`{"v":3,"seconds":1e9}`, true},
		{`[1,2]`, true},
		{`{"v":3,"seed":5,"test":"0123abcd","mac":"00112233445566778899aabbccddeeff"}`, false},
		{`{"v":3,"seed":5,"test":"0123abcd","mac":"00112233445566778899AABBCCDDEEFF"}`, true},
		{`{"v":3,"seed":5,"test":"0123abcd","mac":"0011"}`, true},
		{`{"v":3,"seed":5,"test":"0123abcd","mac":"00112233445566778899aabbccddeeff00"}`, true},
	} {
		_, err := parseRequest([]byte(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("parseRequest(%q): got error %v, want error %v", tc.in, err, tc.wantErr)
		}
		if err != nil && !errors.Is(err, ErrBadRequest) {
			t.Errorf("parseRequest(%q): error %v does not wrap ErrBadRequest", tc.in, err)
		}
	}
}

func FuzzParseRequest(f *testing.F) {
	f.Add([]byte(`{"v":3,"seed":5}`))
	f.Add([]byte(`{"v":3,"reverse":true,"seconds":2.5,"cc":"dca:x=2","recovery":"reno","ecn":true,"seed":9}`))
	f.Add([]byte(`{"v":3,"results":12345}`))
	f.Add([]byte(`{"v":3,"seed":1,"test":"00ff00ff00ff00ff","flows":8}`))
	f.Add([]byte(`{"v":3,"seed":1,"test":"00ff00ff00ff00ff00ff00ff00ff00ff","mac":"0123456789abcdef0123456789abcdef"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseRequest(b)
		if err != nil {
			return
		}
		if r.V != Version || r.Bytes < 0 || r.Seconds < 0 || r.Seconds > MaxReverseSeconds ||
			r.Flows != 0 && (r.Flows < 2 || r.Flows > MaxFlows || r.Test == "") || len(r.Test) > maxTestID ||
			r.MAC != "" && len(r.MAC) != 2*AdmissionMACBytes {
			t.Errorf("parseRequest(%q) accepted %+v", b, r)
		}
	})
}

func FuzzParseReport(f *testing.F) {
	f.Add([]byte(`{"v":3,"bytes":100,"digest":"00ff","seconds":1}`))
	f.Add([]byte(`{"v":3,"error":"reverse mode (-R) refused"}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		r, err := parseReport(b)
		if err == nil && r.V != Version {
			t.Errorf("parseReport(%q) accepted version %d", b, r.V)
		}
	})
}

// rawDial opens a connection with an arbitrary request and returns what
// the server answers.
func rawDial(t *testing.T, srv *Server, request []byte) string {
	t.Helper()
	ep, err := udp.DialSocket(srv.Addr().String(), udp.Config{})
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	c, err := ep.Dial(ctx, srv.Addr(), transport.Config{Request: request})
	if err != nil {
		t.Fatal(err)
	}
	c.CloseWrite()
	b, err := readAll(c, maxMessage)
	if err != nil && err != io.EOF {
		t.Fatalf("read answer: %v", err)
	}
	_ = c.Wait(ctx)
	return string(b)
}

func TestServerRefusalsAreCounted(t *testing.T) {
	srv, _ := startServer(t, ServerConfig{AllowReverse: true})
	for _, tc := range []struct {
		req     string
		want    string // in the answer's error
		counter func(ServerStats) uint64
	}{
		{`garbage`, "bad request", func(s ServerStats) uint64 { return s.BadRequests }},
		{`{"v":7}`, "version", func(s ServerStats) uint64 { return s.BadRequests }},
		{`{"v":3,"reverse":true,"bytes":1000,"cc":"nosuchcc","seed":1}`, "registered controllers",
			func(s ServerStats) uint64 { return s.BadParameters }},
		{`{"v":3,"results":99}`, "no reverse flow", func(s ServerStats) uint64 { return s.Reports }},
	} {
		before := tc.counter(srv.Stats())
		ans := rawDial(t, srv, []byte(tc.req))
		var rep Report
		if err := json.Unmarshal([]byte(ans), &rep); err != nil {
			t.Errorf("request %q: answer %q is not a report: %v", tc.req, ans, err)
			continue
		}
		if !strings.Contains(rep.Error, tc.want) {
			t.Errorf("request %q: error %q, want it to contain %q", tc.req, rep.Error, tc.want)
		}
		if after := tc.counter(srv.Stats()); after != before+1 {
			t.Errorf("request %q: counter went %d -> %d, want +1", tc.req, before, after)
		}
	}
}

func TestSilentPeerTimesOut(t *testing.T) {
	// A socket that never answers: the handshake must time out with a clear error.
	ep, err := udp.Listen("127.0.0.1:0", udp.Config{}) // not a server: ignores Initials
	if err != nil {
		t.Fatal(err)
	}
	defer ep.Close()
	_, err = Run(context.Background(), ClientConfig{Addr: ep.LocalAddr().String(), Bytes: 1 << 20, Timeout: time.Second})
	if err == nil || !strings.Contains(err.Error(), "no answer") {
		t.Errorf("Run to a silent peer: got %v, want a 'no answer' error", err)
	}
}
