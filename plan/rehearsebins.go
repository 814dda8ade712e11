package plan

import (
	"context"
	"fmt"
	"maps"
	"slices"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// newRehearsal returns the rehearsal of p's pods, nil when p is not
// rehearsed (see rehearsable): the existing nodes with room for them, the
// groups that can add a node that holds one, and the pods' cycle state.
func (l *loop) newRehearsal(p *planner.Plan) (*rehearsal, error) {
	pods := l.rehearsable(p)
	if pods == nil {
		return nil, nil
	}
	s, err := topology.NewSpread(pods[0], l.in.Defaults)
	if err != nil || !s.HasHard() || len(s.Soft) > 0 {
		return nil, nil
	}
	ctx := l.in.Context
	if ctx == nil {
		ctx = context.Background()
	}
	sc, err := scorer()
	if err != nil {
		klog.FromContext(ctx).Error(err, "Plan not rehearsed: the scheduler's score plugins could not be built")
		return nil, nil
	}
	r := &rehearsal{l: l, ctx: ctx, pods: pods, spread: s, scorer: sc, groups: map[string]*groupRoom{},
		newNodes: map[nodeKey]*topology.Node{}}
	if err := l.cluster.Reset(); err != nil {
		return nil, err
	}
	if (len(l.u.Nodes)+p.TotalNewNodes())*len(pods)*rehearsalSeeds > rehearsalBounds.work {
		r.tooLarge = true
		return r, nil
	}
	if err := r.findExisting(); err != nil {
		return nil, err
	}
	r.findGroups()
	for g := range p.NewNodes {
		if r.groups[g] == nil {
			return nil, nil
		}
	}
	r.need = r.realizes(p.NewNodes)
	infos := make([]*schedframework.NodeInfo, 0, len(r.existing))
	for _, b := range r.existing {
		infos = append(infos, b.scores.info)
	}
	r.state = sc.prescore(ctx, pods[0], infos)
	return r, nil
}

// findExisting finds the existing nodes with room for the pods: as many as
// the scheduler's filters (all but the spread) pass when they are added
// one by one to the loop's snapshot, which is reset afterwards.
func (r *rehearsal) findExisting() error {
	c := r.l.cluster
	for _, n := range r.l.u.Nodes {
		if c.Check(r.pods[0], n.Name) != nil {
			continue
		}
		ni, err := r.l.in.Snapshot.GetNodeInfo(n.Name)
		if err != nil {
			return fmt.Errorf("plan: rehearsal: node %s: %w", n.Name, err)
		}
		info := ni.ToScheduler().Snapshot()
		slots := 0
		for slots < len(r.pods) && c.Check(r.pods[slots], n.Name) == nil {
			if err := c.AddPod(r.pods[slots], n.Name); err != nil {
				return err
			}
			slots++
		}
		r.existing = append(r.existing, &bin{topo: n, scores: newScores(info, slots), slots: slots})
	}
	return c.Reset()
}

// findGroups finds the groups that can add a node holding a pod.
func (r *rehearsal) findGroups() {
	cnt := r.l.u.CountOnce(r.spread)
	for _, g := range r.l.u.Groups {
		t := r.l.templates[g.Name]
		room := g.Max - g.Size
		if t == nil || room <= 0 || g.ZeroOrMax || !r.spread.CarriesKeys(g.Template) {
			continue
		}
		slots := r.l.cluster.PodsPerNode(r.pods[0], g, len(r.pods), len(r.pods))
		if slots == 0 {
			continue
		}
		r.groups[g.Name] = &groupRoom{g: g, scores: newScores(t.ToScheduler(), slots), slots: slots, room: room,
			cost: r.l.costOf(&planner.Plan{NewNodes: map[string]int{g.Name: 1}}), opens: r.opens(g, cnt)}
	}
}

// bins are the existing bins followed by dist's new nodes, by group name.
func (r *rehearsal) bins(dist map[string]int) []*bin {
	out := slices.Clone(r.existing)
	for _, name := range slices.Sorted(maps.Keys(dist)) {
		g := r.groups[name]
		for i := range dist[name] {
			if g == nil {
				break
			}
			out = append(out, &bin{topo: r.newNode(g.g, i), scores: g.scores, slots: g.slots})
		}
	}
	return out
}

// newNode is group g's i-th new node in the scheduler view, built once.
func (r *rehearsal) newNode(g *topology.Group, i int) *topology.Node {
	k := nodeKey{g.Name, i}
	if n, ok := r.newNodes[k]; ok {
		return n
	}
	name := r.l.cluster.NodeName(g.Name, g.Size+i+1)
	n := &topology.Node{Node: topology.NodeFromTemplate(g.Template, name), Group: g.Name}
	r.newNodes[k] = n
	return n
}

// domain is a value of the hard constraint at index i.
type domain struct {
	i     int
	value string
}

// realizes returns the domains of the hard constraints but the hostname's
// that dist's new nodes add to the scheduler view: the plan's universe,
// which a distribution must keep (see covers).
func (r *rehearsal) realizes(dist map[string]int) map[domain]bool {
	out := map[domain]bool{}
	for name := range dist {
		for _, d := range r.groups[name].opens {
			out[d] = true
		}
	}
	return out
}

// opens lists the domains of the hard constraints but the hostname's that
// a new node of g adds to the scheduler view (cnt: its counts).
func (r *rehearsal) opens(g *topology.Group, cnt *topology.Counts) []domain {
	var out []domain
	for i, c := range r.spread.Hard {
		if v, ok := g.Template.Labels[c.TopologyKey]; ok && c.TopologyKey != apiv1.LabelHostname && !cnt.HasDomain(i, v) {
			out = append(out, domain{i, v})
		}
	}
	return out
}

// covers reports whether dist's new nodes realize every domain the plan's
// do: a domain the plan opens stays known to the scheduler, so that a
// distribution never shrinks the domain universe the plan keeps balanced.
func (r *rehearsal) covers(dist map[string]int) bool {
	got := r.realizes(dist)
	for d := range r.need {
		if !got[d] {
			return false
		}
	}
	return true
}

// sameDomains reports whether a and b's new nodes are in the same domain of
// every hard constraint but the hostname's.
func (r *rehearsal) sameDomains(a, b *topology.Group) bool {
	for _, c := range r.spread.Hard {
		if c.TopologyKey != apiv1.LabelHostname && a.Template.Labels[c.TopologyKey] != b.Template.Labels[c.TopologyKey] {
			return false
		}
	}
	return true
}
