package plan

import (
	"sort"
	"strconv"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/casnapshot"
	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// ranking is the planner's group preference per pod class (Request.Rank).
//
// A class's domains are the value tuples of its DoNotSchedule constraints'
// topology keys, hostname excluded: the groups whose templates carry the same
// values realize the same domain. Pods without such constraints have one
// domain, the whole cluster, so all groups compete for them as in stock CA.
//
// The spread decides how many pods a domain gets; the Chooser decides which
// of the domain's groups get them. For each class and domain that the first
// plan gives new nodes, the domain's groups compete as CA options would: a
// group's option carries the pods of the domain's share that its nodes hold
// and the nodes they need (ceil(share / pods per node), at most the group's
// room), and the Chooser picks the best option, then the best of the rest,
// until the chosen groups hold the share and include a fallback (see
// order). The rank is that position, then the domain, then the group id —
// never the order in which the cloud provider lists groups.
type ranking struct {
	groups     []*topology.Group
	defaults   *topology.Defaults
	chooser    caexpander.Strategy
	nodeGroups map[string]cloudprovider.NodeGroup
	templates  map[string]*framework.NodeInfo
	cluster    *casnapshot.Cluster
	facts      *planner.PodFacts

	// applied are the orders (indices in orders) that choose applied to
	// each class, one per domain with a choice, in domain order: a group's
	// position inside its domain is its index in its domain's order.
	applied map[planner.ClassKey][]int
	// perNode is the pods per node of each class's option on each group
	// (from option), by class, then group.
	perNode map[planner.ClassKey]map[string]int

	// byShape is set while choose may share probes and orders between
	// classes of the same podShape (LoopInputs.ChooserByShape; shapeOf
	// decides which pods have one): with many Deployments of one pod
	// template, each domain's groups are then ordered once.
	byShape       bool
	chooserShapes bool
	// profileReadsLabels: LoopInputs.AddedNodeAffinity.
	profileReadsLabels bool
	shapeOrders        map[shapeOrderKey]int // index in orders
	shapeProbes        map[shapeProbeKey]shapeProbe
	shapes             map[planner.ClassKey]classShape
	// shapeIDs number the shapes from 1, so that the keys above hash an
	// int, not a pod spec.
	shapeIDs map[podShape]int

	// orders are the orders computed, each identified by its index;
	// ranks are the ranks computed so far, by domain keys and applied
	// orders: classes with the same ones share a rank.
	orders [][]string
	ranks  map[string]map[string]int
	// byDomain are domainGroups, by joined domain keys.
	byDomain map[string]map[string][]*topology.Group

	// templateClasses number the groups' templateClass (from 1; 0: a
	// class of its own), valueBlindClasses the same without label values,
	// and keyClasses, by podShape.labelKeys, the value-blind class with
	// the values of those keys (see probeClass).
	// optionClasses, set while LoopInputs.ChooserByTemplate holds, number
	// the option classes: groups of one domain with the same option class
	// are one option for the Chooser (see order and optionClasses).
	templateClasses   map[string]int
	valueBlindClasses map[string]int
	keyClasses        map[string]map[string]int
	optionClasses     map[string]int
}

// shapeOrderKey identifies a domain's order for a share: the pods' shape,
// the domain (its keys and values) and the share's size.
type shapeOrderKey struct {
	shape        int // shapeIDs
	keys, domain string
	share        int
}

func newRanking(groups []*topology.Group, in LoopInputs, byID map[string]cloudprovider.NodeGroup, templates map[string]*framework.NodeInfo, c *casnapshot.Cluster, facts *planner.PodFacts) *ranking {
	r := &ranking{groups: groups, defaults: in.Defaults, chooser: in.Chooser, nodeGroups: byID, facts: facts,
		templates: templates, cluster: c, applied: map[planner.ClassKey][]int{}, perNode: map[planner.ClassKey]map[string]int{},
		chooserShapes: in.ChooserByShape, profileReadsLabels: in.AddedNodeAffinity, shapeOrders: map[shapeOrderKey]int{}, shapeProbes: map[shapeProbeKey]shapeProbe{},
		shapes: map[planner.ClassKey]classShape{}, shapeIDs: map[podShape]int{}, keyClasses: map[string]map[string]int{}, ranks: map[string]map[string]int{},
		byDomain: map[string]map[string][]*topology.Group{}}
	if in.Chooser != nil {
		r.templateClasses, r.valueBlindClasses, r.optionClasses = optionClasses(groups, templates, byID, in)
	}
	return r
}

// domainKeys returns the sorted topology keys of pod's DoNotSchedule
// constraints, hostname excluded.
func (r *ranking) domainKeys(pod *apiv1.Pod) []string {
	s, err := topology.NewSpread(pod, r.defaults)
	if err != nil {
		return nil
	}
	return topology.DomainKeys(s)
}

// domainOf is topology.ComboKey: the domain tuple of a node with labels
// for keys, and false when the node lacks a key.
func domainOf(labels map[string]string, keys []string) (string, bool) {
	return topology.ComboKey(labels, keys)
}

// rank implements planner.Request.Rank: position in the domain, then the
// domain, then the group id, as one number (lower first). The result is
// shared between classes with the same domain keys and positions; the
// planner only reads it.
func (r *ranking) rank(pod *apiv1.Pod) map[string]int {
	keys := r.domainKeys(pod)
	applied := r.applied[r.facts.ClassKey(pod)]
	var b strings.Builder
	b.WriteString(strings.Join(keys, "\x00"))
	b.WriteByte('\x01')
	for _, o := range applied {
		b.WriteString(strconv.Itoa(o))
		b.WriteByte(',')
	}
	key := b.String()
	if out, ok := r.ranks[key]; ok {
		return out
	}
	pos := map[string]int{}
	for _, o := range applied {
		for i, id := range r.orders[o] {
			pos[id] = i
		}
	}
	type entry struct {
		id, domain string
		pos        int
	}
	entries := make([]entry, 0, len(r.groups))
	for _, g := range r.groups {
		d, ok := domainOf(g.Template.Labels, keys)
		if !ok {
			d = "\xff"
		}
		entries = append(entries, entry{id: g.Name, domain: d, pos: pos[g.Name]})
	}
	sort.Slice(entries, func(i, j int) bool {
		a, b := entries[i], entries[j]
		if a.pos != b.pos {
			return a.pos < b.pos
		}
		if a.domain != b.domain {
			return a.domain < b.domain
		}
		return a.id < b.id
	})
	out := make(map[string]int, len(entries))
	for i, e := range entries {
		out[e.id] = i
	}
	r.ranks[key] = out
	return out
}

// choose orders, with the Chooser, the groups of every domain in which the
// draft plan opened nodes for a class, and reports whether any domain had a
// choice to make (two or more groups; then the plan is computed again with
// these positions).
func (r *ranking) choose(draft *planner.Plan) bool {
	nodeLabels := map[string]map[string]string{}
	for _, pn := range draft.Nodes {
		nodeLabels[pn.Name] = pn.Node.Labels
	}
	type share struct {
		exemplar *apiv1.Pod
		keys     []string
		pods     map[string][]*apiv1.Pod // by domain
	}
	shares := map[planner.ClassKey]*share{}
	var classes []planner.ClassKey
	for _, pl := range draft.Placements {
		if !pl.NewNode {
			continue
		}
		class := r.facts.ClassKey(pl.Pod)
		sh, ok := shares[class]
		if !ok {
			sh = &share{exemplar: pl.Pod, keys: r.domainKeys(pl.Pod), pods: map[string][]*apiv1.Pod{}}
			shares[class] = sh
			classes = append(classes, class)
		}
		d, _ := domainOf(nodeLabels[pl.Node], sh.keys)
		sh.pods[d] = append(sh.pods[d], pl.Pod)
	}
	chose := false
	r.byShape = r.chooserShapes && len(classes) > 1
	for _, class := range classes {
		sh := shares[class]
		cs := r.classShape(class, sh.exemplar)
		domains := make([]string, 0, len(sh.pods))
		for d := range sh.pods {
			domains = append(domains, d)
		}
		sort.Strings(domains) // the Chooser may draw random numbers: a fixed order
		for _, d := range domains {
			pods := sh.pods[d]
			candidates := r.domainGroups(sh.keys)[d]
			if len(candidates) < 2 {
				continue
			}
			chose = true
			var order int
			key := shapeOrderKey{shape: cs.id, keys: strings.Join(sh.keys, "\x00"), domain: d, share: len(pods)}
			uniform := cs.ok && r.sameShape(pods, sh.exemplar)
			if cached, ok := r.shapeOrders[key]; uniform && ok {
				order = cached
			} else {
				order = len(r.orders)
				r.orders = append(r.orders, r.order(class, sh.exemplar, candidates, pods))
				if uniform {
					r.shapeOrders[key] = order
				}
			}
			r.applied[class] = append(r.applied[class], order)
		}
	}
	return chose
}

// domainGroups returns the groups of each domain of keys, in group order,
// computed once per keys.
func (r *ranking) domainGroups(keys []string) map[string][]*topology.Group {
	joined := strings.Join(keys, "\x00")
	if byDomain, ok := r.byDomain[joined]; ok {
		return byDomain
	}
	byDomain := map[string][]*topology.Group{}
	for _, g := range r.groups {
		if d, ok := domainOf(g.Template.Labels, keys); ok {
			byDomain[d] = append(byDomain[d], g)
		}
	}
	r.byDomain[joined] = byDomain
	return byDomain
}

// classShape is shapeOf the class's exemplar, computed once per class,
// with its number (shapeIDs).
func (r *ranking) classShape(class planner.ClassKey, exemplar *apiv1.Pod) classShape {
	if !r.byShape {
		return classShape{}
	}
	if cs, ok := r.shapes[class]; ok {
		return cs
	}
	cs := classShape{}
	cs.shape, cs.ok = r.shapeOf(exemplar)
	if cs.ok {
		if cs.id = r.shapeIDs[cs.shape]; cs.id == 0 {
			cs.id = len(r.shapeIDs) + 1
			r.shapeIDs[cs.shape] = cs.id
		}
	}
	r.shapes[class] = cs
	return cs
}

type classShape struct {
	shape podShape
	id    int
	ok    bool
}

// sameShape reports whether every pod of a share has the exemplar's spec
// (then also its filtered spec, the shape's): the options built for the
// share then carry pods whose requests are the exemplar's. Specs are
// compared by the planning's interned ids (planner.PodFacts.SpecID).
func (r *ranking) sameShape(pods []*apiv1.Pod, exemplar *apiv1.Pod) bool {
	want := r.facts.SpecID(exemplar)
	for _, pod := range pods {
		if r.facts.SpecID(pod) != want {
			return false
		}
	}
	return true
}
