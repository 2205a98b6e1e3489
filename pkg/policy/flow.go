package policy

// flowNet is a small flow network of classes and cells for spread; run
// finds a min-cost max flow by successive shortest paths (Bellman-Ford
// with a queue, as residual costs are negative).
type flowNet struct {
	head []int // per node: first edge, -1 for none
	next []int // per edge: the node's next edge
	to   []int
	cap  []int // residual capacity
	cost []int64
}

// flowInf is an edge capacity no demand reaches.
const flowInf = int(^uint(0) >> 2)

func newFlowNet(nodes int) *flowNet {
	f := &flowNet{head: make([]int, nodes)}
	for i := range f.head {
		f.head[i] = -1
	}
	return f
}

// add adds an edge u->v and its residual twin, and returns its index.
func (f *flowNet) add(u, v, capacity int, cost int64) int {
	e := len(f.to)
	f.to = append(f.to, v, u)
	f.cap = append(f.cap, capacity, 0)
	f.cost = append(f.cost, cost, -cost)
	f.next = append(f.next, f.head[u], f.head[v])
	f.head[u], f.head[v] = e, e+1
	return e
}

// flowOn returns the flow edge e carries.
func (f *flowNet) flowOn(e int) int { return f.cap[e^1] }

// run pushes the most flow from s to t, cheapest paths first.
func (f *flowNet) run(s, t int) int {
	n := len(f.head)
	dist := make([]int64, n)
	via := make([]int, n) // the edge a node was reached by
	queued := make([]bool, n)
	queue := make([]int, 0, n)
	total := 0
	for {
		for i := range dist {
			dist[i], via[i] = -1, -1
		}
		dist[s] = 0
		queue = append(queue[:0], s)
		queued[s] = true
		for len(queue) > 0 {
			u := queue[0]
			queue = queue[1:]
			queued[u] = false
			for e := f.head[u]; e >= 0; e = f.next[e] {
				v := f.to[e]
				if f.cap[e] == 0 || v == s {
					continue
				}
				if d := dist[u] + f.cost[e]; via[v] < 0 || d < dist[v] {
					dist[v], via[v] = d, e
					if !queued[v] {
						queued[v] = true
						queue = append(queue, v)
					}
				}
			}
		}
		if via[t] < 0 {
			return total
		}
		push := flowInf
		for v := t; v != s; v = f.to[via[v]^1] {
			push = min(push, f.cap[via[v]])
		}
		for v := t; v != s; v = f.to[via[v]^1] {
			f.cap[via[v]] -= push
			f.cap[via[v]^1] += push
		}
		total += push
	}
}
