package main

import (
	"slices"
	"strings"
	"testing"
	"time"
)

func TestParseFlagsDefaults(t *testing.T) {
	c, err := parseFlags([]string{"-iface", "tapq0"})
	if err != nil {
		t.Fatal(err)
	}
	if c.iface != "tapq0" || c.dstMAC.String() != "52:54:00:e2:e0:00" || c.flows != 64 || c.weights != nil ||
		c.rate != 20000 || c.duration != 10*time.Second || c.size != 128 ||
		c.src.String() != "198.18.0.1" || c.dst.String() != "198.19.0.2" {
		t.Errorf("defaults: %+v", c)
	}
}

func TestParseFlagsBounds(t *testing.T) {
	ok := []string{
		"-flows 1", "-flows 4096", "-rate 1", "-rate 200000", "-duration 1ms", "-duration 15m",
		"-size 64", "-size 1514", "-src 198.19.255.254 -dst 198.18.0.0", "-weights 8,1,1,1", "-weights 100",
		"-dst-mac 02:00:00:00:00:01",
	}
	for _, a := range ok {
		if _, err := parseFlags(append([]string{"-iface", "t"}, strings.Fields(a)...)); err != nil {
			t.Errorf("%s: %v", a, err)
		}
	}
	bad := map[string]string{
		"":                                    "-iface is required",
		"-iface t -flows 0":                   "-flows 0: want 1..4096",
		"-iface t -flows 4097":                "-flows 4097",
		"-iface t -rate 0":                    "-rate 0: want 1..200000",
		"-iface t -rate 200001":               "-rate 200001",
		"-iface t -duration 0s":               "-duration 0s",
		"-iface t -duration -1s":              "-duration -1s",
		"-iface t -duration 15m1s":            "at most 15m0s",
		"-iface t -size 63":                   "-size 63: want 64..1514",
		"-iface t -size 1515":                 "-size 1515",
		"-iface t -src 10.0.0.1":              "-src: 10.0.0.1 is outside 198.18.0.0/15",
		"-iface t -dst 198.20.0.1":            "-dst: 198.20.0.1 is outside",
		"-iface t -dst 198.17.255.255":        "outside",
		"-iface t -src ::ffff:198.18.0.1":     "outside",
		"-iface t -src 2001:db8::1":           "outside",
		"-iface t -src 198.18.0":              "-src: ParseAddr",
		"-iface t -dst-mac 52:54:00:e2:e0":    "-dst-mac: address 52:54:00:e2:e0: invalid MAC address",
		"-iface t -dst-mac ff:ff:ff:ff:ff:ff": "multicast or broadcast",
		"-iface t -dst-mac 01:00:5e:00:00:01": "multicast or broadcast",
		"-iface t -dst-mac 00:00:00:00:00:00": "zero address",
		"-iface t -dst-mac 00:00:00:00:fe:80:00:00:00:00:00:00:02:00:5e:10:00:00:00:01": "not a 6-byte",
		"-iface t -weights 8,0":            `-weights "8,0": weight 0: want 1..100`,
		"-iface t -flows 2 -weights 8,1,1": `-weights "8,1,1": 3 weights for 2 flows`,
		"-iface t -weights 101":            "weight 101",
		"-iface t -weights 8,,1":           `weight "" is not a number`,
		"-iface t -rate x":                 "invalid value",
		"-iface t extra":                   `unexpected argument "extra"`,
	}
	for a, want := range bad {
		_, err := parseFlags(strings.Fields(a))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: error %v, want it to contain %q", a, err, want)
		}
	}
}

func TestParseWeights(t *testing.T) {
	w, err := parseWeights("8, 1,1 ,1")
	if err != nil || !slices.Equal(w, []int{8, 1, 1, 1}) {
		t.Errorf("parseWeights = %v, %v", w, err)
	}
}
