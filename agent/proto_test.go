package agent

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
)

func TestDecodeMessage(t *testing.T) {
	tok := strings.Repeat("ab", tokenBytes)
	for _, tc := range []struct {
		in      string
		wantErr string // substring; "" for success
	}{
		{`{"v":2,"type":"ping","id":3}`, ""},
		{`{"v":2,"type":"collect","id":3,"token":"` + tok + `"}`, ""},
		{`{"v":2,"type":"receive","id":1,"spec":{"id":"a","receiver_host":"h","cc":"reno","bytes":1000}}`, ""},
		{`{"v":1,"type":"ping"}`, "protocol version 1"},
		{`{"v":2,"type":"shell"}`, "unknown type"},
		{`{"v":2,"type":"ping"`, "bad control message"},
		{`{"v":2,"type":"collect","token":"` + strings.ToUpper(tok) + `"}`, "lower-case hex"},
		{`{"v":2,"type":"collect","token":"abcd"}`, "token"},
		{`{"v":2,"type":"ready","data_port":70000}`, "data_port"},
		{`{"v":2,"type":"send","spec":{"id":"a","receiver_host":"h","bytes":1000,"seconds":3}}`, "exactly one"},
		{`{"v":2,"type":"send","spec":{"id":"","receiver_host":"h","bytes":1000}}`, "id"},
		{`{"v":2,"type":"send","spec":{"id":"a","receiver_host":"h","seconds":99999}}`, "seconds"},
		{`{"v":2,"type":"send","spec":{"id":"a","receiver_host":"h","bytes":-1}}`, "bytes"},
		{`{"v":2,"type":"send","spec":{"id":"a","receiver_host":"h","bytes":1,"max_datagram":20}}`, "max_datagram"},
		{`{"v":2,"type":"hello","key":"` + strings.Repeat("k", 300) + `"}`, "longer than"},
	} {
		_, err := decodeMessage([]byte(tc.in))
		switch {
		case tc.wantErr == "" && err != nil:
			t.Errorf("decodeMessage(%s): %v", tc.in, err)
		case tc.wantErr != "" && (err == nil || !strings.Contains(err.Error(), tc.wantErr)):
			t.Errorf("decodeMessage(%s): got %v, want an error containing %q", tc.in, err, tc.wantErr)
		case tc.wantErr != "" && !errors.Is(err, errBadMessage):
			t.Errorf("decodeMessage(%s): %v does not wrap errBadMessage", tc.in, err)
		}
	}
}

func TestFrameBound(t *testing.T) {
	var b bytes.Buffer
	if err := writeFrame(&b, &message{Type: tPing, ID: 7}); err != nil {
		t.Fatal(err)
	}
	raw := b.Bytes()
	if _, err := readFrame(bytes.NewReader(raw), len(raw)-4); err != nil {
		t.Errorf("readFrame at its exact bound: %v", err)
	}
	if _, err := readFrame(bytes.NewReader(raw), len(raw)-5); !errors.Is(err, errBadMessage) {
		t.Errorf("readFrame over the bound: got %v, want errBadMessage", err)
	}
	if _, err := readFrame(bytes.NewReader([]byte{0, 0, 0, 0}), 100); !errors.Is(err, errBadMessage) {
		t.Errorf("readFrame of length 0: got %v, want errBadMessage", err)
	}
}

// FuzzDecodeMessage: the decoder never panics, and what it accepts
// survives a round trip through writeFrame and readFrame unchanged.
func FuzzDecodeMessage(f *testing.F) {
	f.Add([]byte(`{"v":2,"type":"hello","method":"psk","key":"lab","nonce":"000102030405060708090a0b0c0d0e0f"}`))
	f.Add([]byte(`{"v":2,"type":"time","id":9,"t1":1700000000000000000}`))
	f.Add([]byte(`{"v":2,"type":"send","id":2,"token":"` + strings.Repeat("0f", tokenBytes) + `","addr":"h:5311","spec":{"id":"c/1/2","receiver_host":"h","cc":"reno","recovery":"sack","seconds":1.5,"qlog":true}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		m, err := decodeMessage(b)
		if err != nil {
			if !errors.Is(err, errBadMessage) {
				t.Errorf("decodeMessage(%q): error %v does not wrap errBadMessage", b, err)
			}
			return
		}
		var buf bytes.Buffer
		if err := writeFrame(&buf, m); err != nil {
			t.Fatalf("writeFrame of an accepted message: %v", err)
		}
		raw, err := readFrame(&buf, buf.Len())
		if err != nil {
			t.Fatalf("readFrame of our own frame: %v", err)
		}
		m2, err := decodeMessage(raw)
		if err != nil {
			t.Fatalf("decodeMessage(%q) accepted, its re-encoding %q not: %v", b, raw, err)
		}
		j1, _ := json.Marshal(m)
		j2, _ := json.Marshal(m2)
		if !bytes.Equal(j1, j2) {
			t.Errorf("round trip changed the message: %s -> %s", j1, j2)
		}
	})
}
