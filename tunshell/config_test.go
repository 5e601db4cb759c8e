package tunshell

import (
	"net/netip"
	"strings"
	"testing"
)

func TestAllocate(t *testing.T) {
	sub := netip.MustParsePrefix("100.64.0.0/10")
	p := netip.MustParsePrefix
	tests := []struct {
		name   string
		subnet netip.Prefix
		start  uint32
		used   []netip.Prefix
		want   string // host address, "" for an error
		want6  string
	}{
		{"first free", sub, 0, nil, "100.64.0.1", "fd63:636c:6162::1"},
		{"start block", sub, 5, nil, "100.64.0.21", "fd63:636c:6162:5::1"},
		{"wraps", sub, 1<<20 + 2, nil, "100.64.0.9", "fd63:636c:6162:2::1"},
		{"skips a used address", sub, 0, []netip.Prefix{p("100.64.0.2/32")}, "100.64.0.5", "fd63:636c:6162:1::1"},
		{"skips a used route", sub, 0, []netip.Prefix{p("100.64.0.0/29")}, "100.64.0.9", "fd63:636c:6162:2::1"},
		{"skips a used IPv6 subnet", sub, 0, []netip.Prefix{p("fd63:636c:6162::/64")}, "100.64.0.5", "fd63:636c:6162:1::1"},
		{"other ranges do not matter", sub, 0, []netip.Prefix{p("10.0.0.0/8"), p("fd00::/64")}, "100.64.0.1", "fd63:636c:6162::1"},
		{"small subnet", p("192.168.7.0/29"), 1, nil, "192.168.7.5", "fd63:636c:6162:1c1::1"},  // 192.168.7.4 / 4 = 0x302a01c1
		{"a /30 of its own", p("10.77.1.4/30"), 9, nil, "10.77.1.5", "fd63:636c:6162:4041::1"}, // 10.77.1.4 / 4 = 0x02934041
		{"all used", p("192.168.7.0/29"), 0, []netip.Prefix{p("192.168.7.0/24")}, "", ""},
	}
	for _, tc := range tests {
		got, err := allocate(tc.subnet, tc.start, tc.used)
		if tc.want == "" {
			if err == nil || !strings.Contains(err.Error(), "no free /30") {
				t.Errorf("%s: got %+v, %v; want a no-free-subnet error", tc.name, got, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		host := netip.MustParseAddr(tc.want)
		host6 := netip.MustParseAddr(tc.want6)
		if got.Host != host || got.Inner != host.Next() || got.Host6 != host6 || got.Inner6 != host6.Next() {
			t.Errorf("%s: got %+v, want host %v inner %v, host6 %v inner6 %v", tc.name, got, host, host.Next(), host6, host6.Next())
		}
	}
}

func TestConfigValidate(t *testing.T) {
	tests := []struct {
		cfg  Config
		want string // error substring, "" for none
	}{
		{Config{}, ""},
		{Config{MTU: 9000, Subnet: netip.MustParsePrefix("10.99.0.0/16")}, ""},
		{Config{MTU: 576}, "1280..65535"},
		{Config{MTU: 70000}, "1280..65535"},
		{Config{Subnet: netip.MustParsePrefix("fd00::/64")}, "IPv4 prefix"},
		{Config{Subnet: netip.MustParsePrefix("10.0.0.0/31")}, "/30 or shorter"},
	}
	for _, tc := range tests {
		c := tc.cfg
		err := c.validate()
		switch {
		case tc.want == "" && err != nil:
			t.Errorf("%+v: got %v, want no error", tc.cfg, err)
		case tc.want != "" && (err == nil || !strings.Contains(err.Error(), tc.want)):
			t.Errorf("%+v: got %v, want an error containing %q", tc.cfg, err, tc.want)
		case tc.want == "" && (c.MTU == 0 || !c.Subnet.IsValid()):
			t.Errorf("%+v: defaults not filled in: %+v", tc.cfg, c)
		}
	}
}

func TestEnv(t *testing.T) {
	a := Addrs{Host: netip.MustParseAddr("100.64.0.1"), Inner: netip.MustParseAddr("100.64.0.2")}
	got := strings.Join(a.Env(), " ")
	if want := "CCLAB_SHELL_HOST=100.64.0.1 CCLAB_SHELL_ADDR=100.64.0.2 MAHIMAHI_BASE=100.64.0.1"; got != want {
		t.Errorf("IPv4 only: got %q, want %q", got, want)
	}
	a.Host6, a.Inner6 = netip.MustParseAddr("fd63:636c:6162::1"), netip.MustParseAddr("fd63:636c:6162::2")
	if got := strings.Join(a.Env(), " "); !strings.Contains(got, "CCLAB_SHELL_HOST6=fd63:636c:6162::1 CCLAB_SHELL_ADDR6=fd63:636c:6162::2") {
		t.Errorf("with IPv6: got %q", got)
	}
}
