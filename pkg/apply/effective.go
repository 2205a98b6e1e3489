package apply

import "github.com/numairqd/numairqd/pkg/policy"

// verifies returns the writes to verify after res, the outcome of p:
// each successful write with the interrupt count just after it, and the
// earlier ones p found still outside their mask. Only a re-write p asked
// for (EffectiveRewrite) uses up a try, not a driver resetting the mask.
func (a *Applier) verifies(p *policy.Plan, res Result, old policy.Verifies) policy.Verifies {
	out := policy.Verifies{}
	rewrite := map[int]bool{}
	for _, d := range p.Devices {
		for _, q := range d.IRQs {
			if v, ok := old[q.Number]; ok && q.EffectiveState > policy.EffectiveVerified {
				out[q.Number] = v
			}
			rewrite[q.Number] = q.EffectiveState == policy.EffectiveRewrite
		}
	}
	for _, o := range res.Writes {
		if o.Kind != KindOK || o.Write.Kind != policy.WriteIRQAffinity {
			continue
		}
		v := policy.Verify{Name: o.Name, Mask: o.After}
		if prev, ok := old[o.IRQ]; ok && rewrite[o.IRQ] && prev.Name == o.Name && prev.Mask.Equal(o.After) {
			v.Rewrites = prev.Rewrites + 1
		}
		if a.opts.Interrupts != nil {
			v.Count, v.Counted = a.opts.Interrupts(o.IRQ)
		}
		out[o.IRQ] = v
	}
	return out
}
