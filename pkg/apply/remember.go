package apply

import "github.com/numairqd/numairqd/pkg/cpumask"

// dryLog is what a dry run last logged for each target of the last whole
// round, so each would-be write is logged once until it changes.
type dryLog[K comparable] struct {
	last, round map[K]cpumask.Mask
	logged      int // new writes logged this round
}

// changed records m as k's write this round: is it new since last round?
func (l *dryLog[K]) changed(k K, m cpumask.Mask) bool {
	if l.round == nil {
		l.round = map[K]cpumask.Mask{}
	}
	l.round[k] = m
	prev, ok := l.last[k]
	return !ok || !prev.Equal(m)
}

// startRound drops what a round cut short recorded.
func (l *dryLog[K]) startRound() { l.round, l.logged = nil, 0 }

// shown is how many of this round's new writes were logged at info.
func (l *dryLog[K]) shown() int { return min(l.logged, DryRunShown) }

// endRound keeps this round's writes and forgets the rest.
func (l *dryLog[K]) endRound() { l.last, l.round = l.round, nil }

// keepFirst records m as k's original in *originals unless one is kept.
func keepFirst[K comparable](originals *map[K]cpumask.Mask, k K, m cpumask.Mask) {
	if *originals == nil {
		*originals = map[K]cpumask.Mask{}
	}
	if _, ok := (*originals)[k]; !ok {
		(*originals)[k] = m
	}
}
