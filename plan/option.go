package plan

import (
	"strconv"
	"strings"

	apiv1 "k8s.io/api/core/v1"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// shapeProbeKey identifies a podsPerNode probe: the pod's shape and the
// group, or the group's class for the shape (probeClass; then group is
// empty).
type shapeProbeKey struct {
	shape         int // shapeIDs
	group         string
	templateClass int
}

// shapeProbe is a probe's outcome: per pods fit on a node of the group,
// probed up to limit. PodsPerNode adds the pods one by one and stops at the
// first that does not fit or at the limit, so its answer for any limit l is
// min(l, per) when per < limit, and l when l <= limit.
type shapeProbe struct {
	per, limit int
}

// option is the expansion option CA would build for group g and the share:
// the nodes of g the share needs and the pods they hold. False when g's
// template holds no pod of the class or g has no room.
func (r *ranking) option(class planner.ClassKey, exemplar *apiv1.Pod, g *topology.Group, share []*apiv1.Pod) (caexpander.Option, bool) {
	room := g.Max - g.Size
	if room <= 0 {
		return caexpander.Option{}, false
	}
	perNode := r.perNode[class]
	if perNode == nil {
		perNode = map[string]int{}
		r.perNode[class] = perNode
	}
	per, ok := perNode[g.Name]
	if !ok {
		per = r.probe(class, exemplar, g, len(share))
		perNode[g.Name] = per
	}
	if per == 0 {
		return caexpander.Option{}, false
	}
	nodes := min((len(share)+per-1)/per, room)
	if g.ZeroOrMax && g.Size == 0 {
		nodes = g.Max
	}
	pods := share[:min(len(share), nodes*per)]
	return caexpander.Option{NodeGroup: r.nodeGroups[g.Name], NodeCount: nodes, Pods: pods}, true
}

// probe is podsPerNode for the exemplar, shared between pods of the same
// shape while byShape holds.
func (r *ranking) probe(class planner.ClassKey, exemplar *apiv1.Pod, g *topology.Group, limit int) int {
	cs := r.classShape(class, exemplar)
	if !cs.ok {
		return r.cluster.PodsPerNode(exemplar, g, limit, hostCap(exemplar, r.defaults))
	}
	shape := cs.shape
	if shape.hostCap >= 0 {
		limit = min(limit, shape.hostCap)
	}
	key := shapeProbeKey{shape: cs.id, group: g.Name}
	if tc := r.probeClass(shape.labelKeys, g.Name); tc > 0 && !shape.namesNodes {
		// Groups of one class hold the same number of copies. A shape
		// uses one numbering, so numberings never collide.
		key.group, key.templateClass = "", tc
	}
	if p, ok := r.shapeProbes[key]; ok && (p.per < p.limit || limit <= p.limit) {
		return min(limit, p.per)
	}
	per := r.cluster.PodsPerNode(exemplar, g, limit, shape.hostCap)
	r.shapeProbes[key] = shapeProbe{per: per, limit: limit}
	return per
}

// probeClass numbers the groups whose next nodes give the same verdicts to
// a pod that reads the values of labelKeys (podShape.labelKeys) and no
// other label's: the same template class without label values, and the
// same values of those keys. A pod that may read any label value gets the
// template class with values; 0: the group's own class.
func (r *ranking) probeClass(labelKeys string, group string) int {
	switch labelKeys {
	case "":
		return r.valueBlindClasses[group]
	case allLabelKeys:
		return r.templateClasses[group]
	}
	classes, ok := r.keyClasses[labelKeys]
	if !ok {
		keys := strings.Split(labelKeys, "\x00")
		n := number(len(r.groups))
		for _, g := range r.groups {
			vb := r.valueBlindClasses[g.Name]
			if vb == 0 {
				continue
			}
			class := strconv.Itoa(vb)
			for _, k := range keys {
				v, ok := g.Template.Labels[k]
				class += "\x00" + strconv.FormatBool(ok) + v
			}
			n.add(g.Name, class)
		}
		classes = n.of
		r.keyClasses[labelKeys] = classes
	}
	return classes[group]
}
