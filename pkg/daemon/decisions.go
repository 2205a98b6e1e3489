package daemon

import (
	"cmp"
	"fmt"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/cpumask"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/state"
)

// Bounds on logDecisions' moves per device and devices per round.
const (
	maxMovesLogged   = 8
	maxDevicesLogged = 256
)

// logDecisions logs at debug, one line per device, what the plan
// decided: rule, policy, CPUs, and the IRQs moved or left alone and why.
func logDecisions(log *zap.Logger, st *state.State) {
	if !log.Core().Enabled(zap.DebugLevel) {
		return
	}
	p := st.Plan
	log.Debug("round decisions", zap.String("trigger", st.Trigger), zap.Stringer("allowed", p.Allowed),
		zap.Stringer("full", p.Full), zap.Int("devices", len(p.Devices)))
	for i, dev := range p.Devices {
		if i == maxDevicesLogged {
			log.Debug("round decisions: more devices not logged", zap.Int("devices", len(p.Devices)-i))
			return
		}
		log.Debug("device decision", deviceFields(dev)...)
	}
}

// deviceFields describe one device's plan; IRQs in place and managed
// ones are only counted.
func deviceFields(dev policy.Device) []zap.Field {
	var moved, inPlace, managed, left int
	var decisions []string
	for _, q := range dev.IRQs {
		switch {
		case q.Managed:
			managed++
		case q.LeftAlone():
			left++
			if len(decisions) < maxMovesLogged {
				decisions = append(decisions, fmt.Sprintf("IRQ %d %s stays on %s: %s", q.Number, q.Name, q.Current, q.Reason))
			}
		case q.Current.Equal(q.Planned):
			inPlace++
		default:
			moved++
			if len(decisions) < maxMovesLogged {
				decisions = append(decisions, fmt.Sprintf("IRQ %d %s %s -> %s: %s", q.Number, q.Name, q.Current, q.Planned, q.Reason))
			}
		}
	}
	fields := []zap.Field{
		zap.String("device", dev.PCI), zap.String("driver", dev.Driver), zap.Strings("interfaces", dev.Interfaces),
		zap.String("rule", cmp.Or(dev.Rule, "none")), zap.String("policy", string(dev.Policy)), zap.String("policy_why", dev.PolicyWhy), zap.String("mask", string(dev.Mask)),
		zap.String("balance", string(dev.Balance)), zap.Int("node", dev.Node),
		zap.Stringer("allowed", cpumask.New(dev.Order...)),
		zap.Int("moved", moved), zap.Int("in_place", inPlace), zap.Int("managed", managed), zap.Int("left_alone", left),
		zap.Strings("decisions", decisions),
	}
	if n := moved + left - len(decisions); n > 0 {
		fields = append(fields, zap.Int("decisions_not_shown", n))
	}
	return fields
}
