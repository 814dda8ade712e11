// Package flow is a small min-cost circulation with lower bounds: the
// transportation problem behind the shares of package shares (rows and
// columns two domain keys, cells their combinations).
package flow

// Network is a network with integer capacities, lower bounds and costs.
// Arcs are stored in pairs (a, a^1: the arc and its residual reverse).
type Network struct {
	adj    [][]int
	to     []int
	capa   []int
	cost   []int
	low    []int // each arc's lower bound
	excess []int // what the lower bounds push into each node
}

// New returns a network of nodes nodes and no arcs.
func New(nodes int) *Network { return &Network{adj: make([][]int, nodes), excess: make([]int, nodes)} }

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

// Circulate finds a circulation that meets every lower bound, false when
// none exists.
func (g *Network) Circulate() bool {
	n := len(g.adj)
	src, dst := n, n+1
	g.adj, g.excess = append(g.adj, nil, nil), append(g.excess, 0, 0)
	need := 0
	for v := 0; v < n; v++ {
		switch e := g.excess[v]; {
		case e > 0:
			g.Arc(src, v, 0, e, 0)
			need += e
		case e < 0:
			g.Arc(v, dst, 0, -e, 0)
		}
	}
	return g.maxFlow(src, dst) == need
}

// maxFlow pushes as many units as it can from s to t (Edmonds–Karp) and
// returns them.
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
		var path []int
		for v := t; v != s; v = g.to[prev[v]^1] {
			path = append(path, prev[v])
		}
		total += g.augment(path)
	}
}

// augment pushes the bottleneck of the residual arcs along them and
// returns it.
func (g *Network) augment(arcs []int) int {
	push := -1
	for _, a := range arcs {
		if push < 0 || g.capa[a] < push {
			push = g.capa[a]
		}
	}
	for _, a := range arcs {
		g.capa[a] -= push
		g.capa[a^1] += push
	}
	return push
}

// CancelNegativeCycles lowers the circulation's cost, keeping what every
// node sends and receives, by pushing flow around negative residual cycles.
func (g *Network) CancelNegativeCycles() {
	for cycle := g.negativeCycle(); cycle != nil; cycle = g.negativeCycle() {
		g.augment(cycle)
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
	cycle := []int{prev[v]}
	for u := g.to[prev[v]^1]; u != v; u = g.to[prev[u]^1] {
		cycle = append(cycle, prev[u])
	}
	return cycle
}
