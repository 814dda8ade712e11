package sim_test

import (
	"math/rand"
	"slices"
)

// maxCapacityBoundPending bounds the pending pods of a capacity-bound
// instance.
const maxCapacityBoundPending = 250

// genCapacityInstance draws an instance whose groups' max sizes leave a
// known number of pods pending. Every zone offers the same 1–4 values.
//
//   - Uniform (every instance with a hostname constraint, where a pod then
//     takes a node, and half the others): every group has the same existing nodes, each holding the same
//     matching pods, and the same room for new nodes. Filling every new
//     node keeps every domain equal, so the pods that fit are the groups'
//     whole room.
//   - Zone-uneven: no existing node; the groups of zone z take c_z pods
//     each. A zone holds at most V·c_z (V values) and at most maxSkew
//     more than the least-capped zone's V·c_min, so at most
//     Σ_z min(V·c_z, V·c_min + maxSkew) pods fit; splitting each zone's
//     share evenly over its values, the remainders dealt round-robin
//     across zones, reaches it with value counts within 1.
//
// The pending pods are that many plus 1–20, at most
// maxCapacityBoundPending (instances with a complete plan cover the sizes
// beyond).
func genCapacityInstance(r *rand.Rand, name string) *genInstance {
	for {
		g := newGenInstance(r, name)
		g.kind = "capacity-bound"
		g.hostname = r.Intn(3) == 0
		pool := slices.Clone(genValues[g.key])
		r.Shuffle(len(pool), func(i, j int) { pool[i], pool[j] = pool[j], pool[i] })
		values := pool[:1+r.Intn(len(pool))]
		slices.Sort(values)
		var fit int
		if g.hostname || r.Intn(2) == 0 {
			fit = g.uniformCells(r, values)
		} else {
			fit = g.unevenCells(r, values)
		}
		g.pending = fit + 1 + r.Intn(20)
		g.wantPending = g.pending - fit
		if g.pending <= maxCapacityBoundPending {
			return g
		}
	}
}

// uniformCells adds the same group for every (zone, value) and returns how
// many pending pods fit. With a hostname constraint a pod takes most of a
// node, so that filling every node keeps the hostname counts equal.
func (g *genInstance) uniformCells(r *rand.Rand, values []string) int {
	perNode := g.perNode()
	if g.hostname {
		g.podMilli = g.nodeMilli * 3 / 4
		perNode = 1
	}
	existingNodes, newNodes := r.Intn(2), 1+r.Intn(4)
	matching := r.Intn(perNode + 1)
	for _, z := range g.zones {
		for _, v := range values {
			c := genCell{zone: z, value: v, max: existingNodes + newNodes}
			for i := 0; i < existingNodes; i++ {
				c.existing = append(c.existing, matching)
			}
			g.cells = append(g.cells, c)
		}
	}
	return len(g.cells) * newNodes * perNode
}

// unevenCells adds empty groups whose max size differs by zone and returns
// how many pending pods fit.
func (g *genInstance) unevenCells(r *rand.Rand, values []string) int {
	caps := make([]int, len(g.zones))
	for zi, z := range g.zones {
		maxNodes := 1 + r.Intn(4)
		caps[zi] = maxNodes * g.perNode()
		for _, v := range values {
			g.cells = append(g.cells, genCell{zone: z, value: v, max: maxNodes})
		}
	}
	least := len(values) * slices.Min(caps)
	fit := 0
	for _, c := range caps {
		fit += min(len(values)*c, least+int(g.zoneSkew))
	}
	return fit
}
