package policy

import "slices"

// lpt is the longest-processing-time placement: busy queues in
// descending load, each to the least loaded CPU of its locality bound
// in a class with room left, nearer classes first on ties; idle queues
// stay where from has them. It returns from when a queue finds no room
// (the bounds of the device's queues crossed).
func (s *search) lpt(from []int) []int {
	assign := slices.Clone(from)
	busy, room, loads := s.split(from)
	for _, i := range busy {
		u := s.units[i]
		best, bestClass := -1, -1
		for cl, cpus := range s.devs[u.bdev].cpus {
			if room[u.bdev][cl] == 0 {
				continue
			}
			for _, c := range cpus {
				if u.near.Contains(c) && (best < 0 || loads[c] < loads[best]) {
					best, bestClass = c, cl
				}
			}
		}
		if best < 0 {
			return slices.Clone(from)
		}
		assign[i] = best
		loads[best] += u.load
		room[u.bdev][bestClass]--
	}
	return assign
}
