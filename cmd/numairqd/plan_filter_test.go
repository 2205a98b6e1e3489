package main

import (
	"encoding/json"
	"regexp"
	"strings"
	"testing"
)

// planDevices runs plan with extra args and returns the PCI addresses
// of the devices the text and the JSON show, which must agree.
func planDevices(t *testing.T, args ...string) (code int, pcis []string, stderr string) {
	t.Helper()
	tree := planFixture(t)
	base := []string{"plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "", "--config", writeConfig(t, "")}
	code, text, stderr := runCmd(append(append(base, args...), "--format", "text")...)
	if code != 0 {
		return code, nil, stderr
	}
	for _, m := range regexp.MustCompile(`(?m)^(0000:\S+)  driver `).FindAllStringSubmatch(text, -1) {
		pcis = append(pcis, m[1])
	}
	_, js, _ := runCmd(append(append(base, args...), "--format", "json")...)
	var doc struct {
		Devices []struct {
			PCI string `json:"pci"`
		} `json:"devices"`
	}
	if err := json.Unmarshal([]byte(js), &doc); err != nil {
		t.Fatal(err)
	}
	var inJSON []string
	for _, d := range doc.Devices {
		inJSON = append(inJSON, d.PCI)
	}
	if strings.Join(inJSON, " ") != strings.Join(pcis, " ") {
		t.Errorf("%v: text shows %v, JSON %v", args, pcis, inJSON)
	}
	return code, pcis, stderr
}

func TestPlanDeviceFilter(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want string
	}{
		{nil, "0000:21:00.0 0000:41:00.0"},
		{[]string{"--device", "0000:41:00.0"}, "0000:41:00.0"}, // PCI address
		{[]string{"--device", "eth0"}, "0000:41:00.0"},         // interface
		{[]string{"--device", "nvme"}, "0000:21:00.0"},         // PCI driver
		{[]string{"--device", "virtio_net"}, "0000:41:00.0"},   // the function's driver
		{[]string{"--device", "eth*"}, "0000:41:00.0"},         // glob
		{[]string{"--device", "0000:?1:00.0"}, "0000:21:00.0 0000:41:00.0"},
		{[]string{"--device", "nvme", "--device", "eth0"}, "0000:21:00.0 0000:41:00.0"}, // repeated: any
		{[]string{"--device", "nvme", "--device", "nv*"}, "0000:21:00.0"},               // shown once
	} {
		code, got, stderr := planDevices(t, tc.args...)
		if code != 0 || strings.Join(got, " ") != tc.want {
			t.Errorf("%v: exit %d, devices %v, want %s; stderr %s", tc.args, code, got, tc.want, stderr)
		}
	}
}

// TestPlanDeviceFilterErrors: a pattern matching nothing names itself
// and the devices there are; a malformed glob is a usage error.
func TestPlanDeviceFilterErrors(t *testing.T) {
	code, _, stderr := planDevices(t, "--device", "eth0", "--device", "eth9")
	want := `numairqd plan: --device "eth9" matches no device's PCI address, interface or driver; devices: 0000:21:00.0 (nvme), 0000:41:00.0 (eth0 virtio-pci virtio_net)`
	if code != 1 || strings.TrimSpace(stderr) != want {
		t.Errorf("exit %d, stderr %q; want 1 and %q", code, stderr, want)
	}
	code, _, stderr = planDevices(t, "--device", "eth[")
	if code != 2 || !strings.Contains(stderr, `"eth[": syntax error in pattern`) {
		t.Errorf("malformed glob: exit %d, stderr %q", code, stderr)
	}
}

// TestPlanDeviceFilterIRQ: a device with no PCI address, which a rule
// named by IRQ, is matched by its IRQ names and listed by them.
func TestPlanDeviceFilterIRQ(t *testing.T) {
	tree := planFixture(t)
	args := []string{"plan", "--sysfs", tree.Sys(), "--procfs", tree.Proc(), "--etc", "",
		"--config", writeConfig(t, "devices:\n  - match: {irq: timer}\n    policy: pinned\n    cpus: 3\n")}
	code, text, stderr := runCmd(append(args, "--device", "tim*")...)
	if code != 0 || !strings.Contains(text, "\n(no PCI device)  driver -") || strings.Contains(text, "0000:") ||
		!strings.Contains(text, "  0    timer  -      0-7 -> 3") {
		t.Errorf("exit %d, stderr %s, text:\n%s", code, stderr, text)
	}
	code, _, stderr = runCmd(append(args, "--device", "nothing")...)
	if code != 1 || !strings.HasSuffix(strings.TrimSpace(stderr), "(eth0 virtio-pci virtio_net), IRQ timer") {
		t.Errorf("exit %d, stderr %q", code, stderr)
	}
}
