package apply

import "github.com/numairqd/numairqd/pkg/policy"

// verifies returns the writes to verify after res, the outcome of p:
// each successful write with the IRQ's interrupt count just after it,
// and the earlier writes p found still outside their mask. A write counts
// as a re-write only when p asked for one (EffectiveRewrite), so a driver
// that resets the mask (virtio-net on every CPU event) does not use up
// the tries. Everything else is forgotten.
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
