package main

import (
	"fmt"
	"path"
	"slices"
	"strings"

	"github.com/numairqd/numairqd/pkg/policy"
)

// deviceFilter is plan's repeatable --device: path.Match globs, each
// matching a device's PCI address, an interface or a driver (an IRQ
// name for a device with no PCI address); matched devices are shown.
type deviceFilter []string

func (f *deviceFilter) String() string { return strings.Join(*f, ",") }

func (f *deviceFilter) Set(v string) error {
	if _, err := path.Match(v, ""); err != nil {
		return fmt.Errorf("%q: %w", v, err)
	}
	*f = append(*f, v)
	return nil
}

// deviceNames are what a --device pattern is matched against.
func deviceNames(d policy.Device) []string {
	if d.PCI == "" {
		var irqs []string
		for _, q := range d.IRQs {
			irqs = append(irqs, q.Name)
		}
		return irqs
	}
	names := append([]string{d.PCI}, d.Interfaces...)
	names = append(names, d.Drivers...)
	if len(d.Drivers) == 0 && d.Driver != "" {
		names = append(names, d.Driver)
	}
	return names
}

func matches(pattern string, d policy.Device) bool {
	return slices.ContainsFunc(deviceNames(d), func(n string) bool {
		ok, _ := path.Match(pattern, n)
		return ok
	})
}

// selectDevices returns p, planned for every device, with only the
// devices f matches (all for no pattern); a pattern that matches none
// is an error that lists the devices.
func selectDevices(p *policy.Plan, f deviceFilter) (*policy.Plan, error) {
	if len(f) == 0 {
		return p, nil
	}
	used := make([]bool, len(f))
	var kept []policy.Device
	for _, d := range p.Devices {
		keep := false
		for i, pat := range f {
			if matches(pat, d) {
				used[i], keep = true, true
			}
		}
		if keep {
			kept = append(kept, d)
		}
	}
	for i, ok := range used {
		if !ok {
			return nil, fmt.Errorf("--device %q matches no device's PCI address, interface or driver; devices: %s", f[i], listDevices(p.Devices))
		}
	}
	sel := *p
	sel.Devices = kept
	return &sel, nil
}

// listDevices names each device with what --device matches.
func listDevices(devs []policy.Device) string {
	if len(devs) == 0 {
		return "none"
	}
	var parts []string
	for _, d := range devs {
		part := d.PCI
		if names := deviceNames(d); d.PCI == "" {
			part = "IRQ " + strings.Join(names, " ")
		} else if len(names) > 1 {
			part += " (" + strings.Join(names[1:], " ") + ")"
		}
		parts = append(parts, part)
	}
	return strings.Join(parts, ", ")
}
