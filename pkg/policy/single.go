package policy

import (
	"fmt"
	"strings"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/inventory"
)

// single is how one IRQ of a device is planned apart from its device's
// policy: left alone for why (another tool's ban), or by a rule matching
// its number.
type single struct {
	why  string
	rule *config.Rule
}

// irqBans are the IRQs other tools leave alone, by number and by module
// (in module spelling, '_' for '-'), each with the reason to say.
type irqBans struct {
	irqs    map[int]string
	modules map[string]string
}

// newIRQBans gathers the IRQ and module bans of tools.
func newIRQBans(tools []ToolBan) irqBans {
	b := irqBans{irqs: map[int]string{}, modules: map[string]string{}}
	for _, t := range tools {
		for n, by := range t.IRQs {
			b.irqs[n] = fmt.Sprintf("left alone: banned by irqbalance's %s in %s", by, t.Path)
		}
		for m, by := range t.Modules {
			b.modules[moduleName(m)] = fmt.Sprintf("left alone: banned by irqbalance's %s in %s", by, t.Path)
		}
	}
	return b
}

// moduleName spells a driver's name as its module's: virtio-pci is
// module virtio_pci.
func moduleName(s string) string { return strings.ReplaceAll(s, "-", "_") }

// singles notes which of a device's IRQs are planned on their own: those
// banned by number or by one of drivers, and, when byRule, those a
// rule by irq_numbers claims.
func (pl *planner) singles(cfg *config.Config, facts config.DeviceFacts, drivers []string, irqs []inventory.IRQ, byRule bool) {
	var modWhy string
	for _, d := range drivers {
		if why, ok := pl.bans.modules[moduleName(d)]; ok {
			modWhy = why
			break
		}
	}
	for _, q := range irqs {
		why, banned := pl.bans.irqs[q.Number]
		switch {
		case banned:
			pl.apart[q.Number] = single{why: why}
		case modWhy != "":
			pl.apart[q.Number] = single{why: modWhy}
		case byRule:
			if r, ok := cfg.IRQRule(facts, q.Number, q.Name); ok {
				pl.apart[q.Number] = single{rule: r}
			}
		}
	}
}

// planSingle plans q, which s sets apart: left alone, or as its rule says.
func (pl *planner) planSingle(q *IRQ, s single) {
	q.apart = true
	switch r := s.rule; {
	case r == nil:
		q.Reason = s.why
	case r.Policy == config.PolicyIgnore:
		q.Reason = fmt.Sprintf("ignore: %s, by IRQ number", ruleLabel(r))
	default:
		m := r.CPUs.And(pl.allowed)
		if m.IsEmpty() {
			q.NoCPU, q.Reason = true, fmt.Sprintf("pinned by IRQ number: none of CPUs %s is allowed (%s)", r.CPUs, ruleLabel(r))
			return
		}
		if note, ok := pl.put(&Device{Order: m.CPUs()}, q, m); ok {
			q.Reason = fmt.Sprintf("pinned to %s by %s, by IRQ number", q.Planned, ruleLabel(r)) + note
		}
	}
}

// ruleLabel names r for reasons: `rule "name" (line N)` or `rule at line N`.
func ruleLabel(r *config.Rule) string {
	if r.Name != "" {
		return fmt.Sprintf("rule %q (line %d)", r.Name, r.Line)
	}
	return fmt.Sprintf("rule at line %d", r.Line)
}

// Warnings are what cfg asks that this machine does not have, which are
// not errors as devices and CPUs come and go: rules matching no device
// or IRQ of inv, and banned_cpus outside possible (skipped when empty).
func Warnings(inv *inventory.Inventory, cfg *config.Config, possible cpumask.Mask) []string {
	var out []string
	at := func(line int) string {
		if line > 0 {
			return fmt.Sprintf("%s:%d:", cfg.Source, line)
		}
		return cfg.Source + ":"
	}
	if gone := cfg.BannedCPUs.AndNot(possible); !possible.IsEmpty() && !gone.IsEmpty() {
		out = append(out, fmt.Sprintf("%s banned_cpus: CPUs %s do not exist here (possible CPUs %s); banned should they appear", at(0), gone, possible))
	}
	facts := machineFacts(inv)
	var ifaces, drivers []string
	for _, f := range facts {
		ifaces, drivers = append(ifaces, f.Interfaces...), append(drivers, f.Drivers...)
	}
	for i, r := range cfg.Devices {
		if !r.Match.MatchesAny(facts) {
			out = append(out, fmt.Sprintf("%s devices[%d] matches no device or IRQ here (match %s%s); it applies to any that appear",
				at(r.Line), i, r.Match, r.Match.Nearest(ifaces, drivers)))
		}
	}
	return out
}

// machineFacts are what rules match on: each PCI device with IRQs, and
// each other IRQ alone.
func machineFacts(inv *inventory.Inventory) []config.DeviceFacts {
	var out []config.DeviceFacts
	owned := map[int]bool{}
	for _, dev := range inv.Devices {
		irqs := inv.DeviceIRQs(dev.PCI)
		if len(irqs) == 0 {
			continue
		}
		f := config.DeviceFacts{PCI: dev.PCI, Drivers: dev.Drivers, Interfaces: dev.Interfaces}
		for _, q := range irqs {
			owned[q.Number] = true
			f.IRQNames, f.IRQs = append(f.IRQNames, q.Name), append(f.IRQs, q.Number)
		}
		out = append(out, f)
	}
	for _, q := range inv.IRQs {
		if !owned[q.Number] {
			out = append(out, config.DeviceFacts{IRQNames: []string{q.Name}, IRQs: []int{q.Number}})
		}
	}
	return out
}
