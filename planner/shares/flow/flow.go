// Package flow is a small min-cost circulation with lower bounds: the
// transportation problem behind the shares of package shares (rows and
// columns two domain keys, cells their combinations).
package flow

// Network is a small network for that problem:
// integer capacities with lower bounds, and a cost per unit on some arcs.
// Arcs are stored in pairs (a, a^1: the arc and its residual reverse).
type Network struct {
	adj  [][]int
	to   []int
	capa []int
	cost []int
	// low is each forward arc's lower bound (its flow is low + the flow
	// the reduction routes); excess is what the bounds push per node.
	low    []int
	excess []int
}

func New(nodes int) *Network {
	return &Network{adj: make([][]int, nodes), excess: make([]int, nodes)}
}

// Arc adds an arc u→v carrying between lo and hi units at cost per unit,
// and returns its index.
func (g *Network) Arc(u, v, lo, hi, cost int) int {
	a := len(g.to)
	g.to = append(g.to, v, u)
	g.capa = append(g.capa, hi-lo, 0)
	g.cost = append(g.cost, cost, -cost)
	g.low = append(g.low, lo, 0)
	g.adj[u] = append(g.adj[u], a)
	g.adj[v] = append(g.adj[v], a+1)
	g.excess[v] += lo
	g.excess[u] -= lo
	return a
}

// Flow is the units arc a carries.
func (g *Network) Flow(a int) int { return g.low[a] + g.capa[a^1] }

// Circulate finds a circulation that meets every lower bound (the
// network must be closed: every unit that leaves a node comes back). It
// reports false when none exists.
func (g *Network) Circulate() bool {
	n := len(g.adj)
	src, dst := n, n+1
	g.adj = append(g.adj, nil, nil)
	need := 0
	for v := 0; v < n; v++ {
		switch e := g.excess[v]; {
		case e > 0:
			g.rawArc(src, v, e)
			need += e
		case e < 0:
			g.rawArc(v, dst, -e)
		}
	}
	return g.maxFlow(src, dst) == need
}

// rawArc adds a helper arc of the lower-bound reduction (no bound, no cost).
func (g *Network) rawArc(u, v, c int) {
	a := len(g.to)
	g.to = append(g.to, v, u)
	g.capa = append(g.capa, c, 0)
	g.cost = append(g.cost, 0, 0)
	g.low = append(g.low, 0, 0)
	g.adj[u] = append(g.adj[u], a)
	g.adj[v] = append(g.adj[v], a+1)
}

// maxFlow pushes as many units as it can from s to t along shortest
// augmenting paths (Edmonds–Karp) and returns them.
func (g *Network) maxFlow(s, t int) int {
	total := 0
	prev := make([]int, len(g.adj))
	for {
		for i := range prev {
			prev[i] = -1
		}
		queue := []int{s}
		prev[s] = -2
		for len(queue) > 0 && prev[t] == -1 {
			u := queue[0]
			queue = queue[1:]
			for _, a := range g.adj[u] {
				if v := g.to[a]; g.capa[a] > 0 && prev[v] == -1 {
					prev[v] = a
					queue = append(queue, v)
				}
			}
		}
		if prev[t] == -1 {
			return total
		}
		push := -1
		for v := t; v != s; v = g.to[prev[v]^1] {
			if a := prev[v]; push < 0 || g.capa[a] < push {
				push = g.capa[a]
			}
		}
		for v := t; v != s; v = g.to[prev[v]^1] {
			g.capa[prev[v]] -= push
			g.capa[prev[v]^1] += push
		}
		total += push
	}
}

// CancelNegativeCycles lowers the circulation's cost without changing
// what any node sends or receives: while the residual network has a cycle
// of negative cost (Bellman–Ford), it pushes the cycle's bottleneck around
// it. Each push lowers the cost by at least one, so it ends.
func (g *Network) CancelNegativeCycles() {
	for {
		cycle := g.negativeCycle()
		if cycle == nil {
			return
		}
		push := -1
		for _, a := range cycle {
			if push < 0 || g.capa[a] < push {
				push = g.capa[a]
			}
		}
		for _, a := range cycle {
			g.capa[a] -= push
			g.capa[a^1] += push
		}
	}
}

// negativeCycle returns the arcs of a residual cycle of negative cost, nil
// when there is none.
func (g *Network) negativeCycle() []int {
	n := len(g.adj)
	dist := make([]int, n)
	prev := make([]int, n)
	for i := range prev {
		prev[i] = -1
	}
	last := -1
	for round := 0; round < n; round++ {
		last = -1
		for a := range g.to {
			if g.capa[a] <= 0 {
				continue
			}
			u, v := g.to[a^1], g.to[a]
			if dist[u]+g.cost[a] < dist[v] {
				dist[v] = dist[u] + g.cost[a]
				prev[v] = a
				last = v
			}
		}
		if last < 0 {
			return nil
		}
	}
	// last was relaxed in round n: walking back n steps lands on a cycle.
	v := last
	for i := 0; i < n; i++ {
		v = g.to[prev[v]^1]
	}
	var cycle []int
	for u := v; ; {
		a := prev[u]
		cycle = append(cycle, a)
		u = g.to[a^1]
		if u == v {
			break
		}
	}
	return cycle
}
