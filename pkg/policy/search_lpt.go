package policy

import "slices"

// lpt is the longest-processing-time placement: busy queues in
// descending load, each to the least loaded CPU of a class with room
// left, nearer classes first on ties; idle queues stay where from has them.
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
				if best < 0 || loads[c] < loads[best] {
					best, bestClass = c, cl
				}
			}
		}
		assign[i] = best
		loads[best] += u.load
		room[u.bdev][bestClass]--
	}
	return assign
}
