// Package spell finds the name a typo was meant to be, for the "did
// you mean" of the commands and of the config's keys and values.
package spell

import "strings"

// maxSuggest bounds the length of a word nearest compares: the edit
// distance is quadratic, and a long key is no typo.
const maxSuggest = 64

// Nearest is the candidate a typo of s most likely meant: the closest
// by edit distance (insertions, deletions, substitutions; '_' and '-'
// are the same letter, as are the two cases), and only when close: at
// most 2 edits and at most a third of the longer word. "" when none is.
func Nearest(s string, cands []string) string {
	if len(s) > maxSuggest {
		return ""
	}
	best, bestD := "", 3
	for _, c := range cands {
		d := editDistance(fold(s), fold(c))
		if d < bestD && 3*d <= max(len(s), len(c)) {
			best, bestD = c, d
		}
	}
	return best
}

// fold maps what a typo of a name often changes to one spelling.
func fold(s string) string { return strings.ReplaceAll(strings.ToLower(s), "_", "-") }

// editDistance is the optimal string alignment distance of a and b, by
// bytes: insertions, deletions, substitutions and swaps of two
// neighbours ("ture" is one edit from "true").
func editDistance(a, b string) int {
	pp, prev, cur := make([]int, len(b)+1), make([]int, len(b)+1), make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && a[i-1] == b[j-2] && a[i-2] == b[j-1] {
				cur[j] = min(cur[j], pp[j-2]+1)
			}
		}
		pp, prev, cur = prev, cur, pp
	}
	return prev[len(b)]
}
