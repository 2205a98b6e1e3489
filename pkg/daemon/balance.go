package daemon

import (
	"context"
	"fmt"
	"maps"
	"time"

	"go.uber.org/zap"

	"github.com/numairqd/numairqd/pkg/config"
	"github.com/numairqd/numairqd/pkg/load"
	"github.com/numairqd/numairqd/pkg/metrics"
	"github.com/numairqd/numairqd/pkg/policy"
	"github.com/numairqd/numairqd/pkg/watch"
)

// balancer is load balancing's state across rounds: the sampler and its
// loads, the proposal pending and its streak, the move budget (a token
// bucket of moves_per_minute) and whether a proposal awaits its round.
type balancer struct {
	sampler      *load.Sampler
	counters     config.QueueCounters // the sampler's mode
	queuesWarned string
	loads        *load.Loads
	pending      policy.Held
	streak       int
	tokens       float64
	filled       time.Time
	held         bool
}

// balancing is what a round plans with: the loads, no proposal.
func (d *Daemon) balancing() policy.Balancing {
	return policy.Balancing{Loads: d.bal.loads}
}

// budget refills the move budget and returns the moves it allows now.
func (b *balancer) budget(lb config.LoadBalance, now time.Time) int {
	perMinute := float64(lb.MovesPerMinute)
	if b.filled.IsZero() {
		b.tokens = perMinute
	} else {
		b.tokens = min(perMinute, b.tokens+now.Sub(b.filled).Minutes()*perMinute)
	}
	b.filled = now
	return int(b.tokens)
}

// confirmed reports whether prop (nil: none) equals the proposals of the
// samples-1 load rounds before it, then starts the count afresh.
func (b *balancer) confirmed(prop *policy.Proposal, samples int) bool {
	if prop == nil {
		b.streak, b.pending = 0, nil
		return false
	}
	if !maps.Equal(prop.Held, b.pending) {
		b.streak, b.pending = 0, prop.Held
	}
	b.streak++
	if b.streak < samples {
		return false
	}
	b.streak, b.pending = 0, nil
	return true
}

// loadRound samples the loads and plans for a better placement. A
// proposal made samples rounds in a row (not noise) is held, and the
// next round, hinted, applies it. With nothing to balance the round
// runs only for t's other causes.
func (d *Daemon) loadRound(ctx context.Context, h hinter, t watch.Trigger) {
	bal, ok := d.sample(time.Now())
	if !ok {
		if len(t.Causes) > 1 {
			d.step(ctx, h, t.Label(), readDepth(t), t.First, d.balancing())
		}
		return
	}
	st, err := d.step(ctx, h, t.Label(), readDepth(t), t.First, bal)
	if err != nil {
		return
	}
	var prop *policy.Proposal
	v := st.Plan.Balance
	if v != nil {
		prop = v.Proposal
		if ce := d.log.Check(zap.DebugLevel, "load round"); ce != nil {
			f := []zap.Field{zap.Int("intervals", d.bal.loads.Intervals), zap.Float64("peak", v.Peak), zap.Float64("mean", v.Mean)}
			if prop != nil {
				f = append(f, zap.Float64("proposed_peak", prop.Peak), zap.Float64("noise", prop.Noise), zap.Strings("proposal", moveList(prop.Moves)))
			} else {
				f = append(f, zap.String("still", string(v.Still)))
			}
			ce.Write(f...)
		}
	}
	if !d.bal.confirmed(prop, d.Config().LoadBalance.Samples) {
		return
	}
	d.bal.tokens -= float64(len(prop.Moves))
	d.bal.held = true
	d.mem.Held = prop.Held
	d.metrics.BalanceMoved(len(prop.Moves), v.Peak/v.Mean, prop.Peak/prop.Mean)
	d.log.Info("load balance moved queues", zap.Int("moves", len(prop.Moves)),
		zap.Float64("peak_before", v.Peak), zap.Float64("peak_after", prop.Peak), zap.Float64("noise", prop.Noise), zap.Float64("mean", v.Mean),
		zap.Any("queues", moveList(prop.Moves)))
	h.Hint(watch.CauseLoad)
}

// sample samples the loads and returns what a load round plans with;
// false with nothing to balance, on failure, or on the first sample.
func (d *Daemon) sample(now time.Time) (policy.Balancing, bool) {
	cfg := d.Config()
	if !cfg.WantsLoad() {
		d.bal = balancer{}
		return policy.Balancing{}, false
	}
	lb := cfg.LoadBalance
	if d.bal.sampler == nil || d.bal.counters != lb.QueueCounters {
		lc := load.Config{HalfLife: lb.HalfLife}
		if lb.QueueCounters != config.QueueCountersOff {
			lc.Queues = d.opts.Queues
		}
		d.bal.sampler, d.bal.counters = load.NewSampler(load.FS{Proc: d.roots.Proc}, lc), lb.QueueCounters
	}
	l, err := d.bal.sampler.Sample(now)
	if err != nil {
		d.metrics.Error(metrics.ErrLoad)
		d.log.Warn("load sample failed; keeping the previous loads", zap.Error(err))
		return policy.Balancing{}, false
	}
	d.bal.warnQueues(d.log, l.QueuesErr)
	d.bal.loads = &l
	if !l.Ready {
		return policy.Balancing{}, false
	}
	bal := d.balancing()
	bal.MaxMoves, bal.MinGain, bal.MinDrop, bal.MinPeak = d.bal.budget(lb, now), lb.MinGain, lb.MinDrop, lb.MinPeak
	return bal, true
}

// moveList is a proposal's moves for the log: "0000:00:03.0 q2 1->3".
func moveList(moves []policy.Move) []string {
	out := make([]string, len(moves))
	for i, m := range moves {
		out[i] = fmt.Sprintf("%s q%d %d->%d", m.PCI, m.Queue, m.From, m.To)
	}
	return out
}

// warnQueues warns of failed queue counter reads once per distinct error.
func (b *balancer) warnQueues(log *zap.Logger, err error) {
	if err == nil || err.Error() == b.queuesWarned {
		return
	}
	b.queuesWarned = err.Error()
	log.Warn("some queue counters could not be read; those interfaces' queues are weighed by the interrupt estimate", zap.Error(err))
}
