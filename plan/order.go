package plan

import (
	"sort"
	"strconv"

	apiv1 "k8s.io/api/core/v1"
	caexpander "k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"

	"github.com/spreadscale/spreadscale/planner"
	"github.com/spreadscale/spreadscale/topology"
)

// order returns the candidates' ids in the Chooser's order for a share of
// pods, as far as it matters: groups are chosen one by one until the chosen
// ones hold the whole share and at least two are chosen (the preferred group
// and a fallback); the others, and the groups that cannot take any pod of
// the share, come after, by id. Each choice runs the user's expanders over
// every option left, so ordering all of a zone's many groups would cost the
// square of their number for nothing.
//
// Options the Chooser cannot tell apart (same option class, node count and
// pods: see optionClasses) are one option, the one of the smallest id; when
// it is chosen, its class's groups are chosen together, by id.
func (r *ranking) order(class planner.ClassKey, exemplar *apiv1.Pod, candidates []*topology.Group, share []*apiv1.Pod) []string {
	var options []caexpander.Option
	var rest []string
	type optionKey struct{ class, nodes, pods int }
	members := map[string][]string{} // by representative id
	repOf := map[optionKey]string{}
	for _, g := range candidates {
		o, ok := r.option(class, exemplar, g, share)
		if !ok {
			rest = append(rest, g.Name)
			continue
		}
		if oc := r.optionClasses[g.Name]; oc > 0 {
			key := optionKey{oc, o.NodeCount, len(o.Pods)}
			if rep, ok := repOf[key]; ok {
				members[rep] = append(members[rep], g.Name)
				continue
			}
			repOf[key] = g.Name
		}
		members[g.Name] = []string{g.Name}
		options = append(options, o)
	}
	var ids []string
	held := 0
	for len(options) > 0 && (held < len(share) || len(ids) < 2) {
		best := r.chooser.BestOption(options, r.templates)
		if best == nil {
			break
		}
		id := best.NodeGroup.Id()
		chosen := members[id]
		sort.Strings(chosen)
		held += len(best.Pods) * len(chosen)
		ids = append(ids, chosen...)
		kept := options[:0]
		for _, o := range options {
			if o.NodeGroup.Id() != id {
				kept = append(kept, o)
			}
		}
		options = kept
	}
	for _, o := range options {
		rest = append(rest, members[o.NodeGroup.Id()]...)
	}
	sort.Strings(rest)
	return append(ids, rest...)
}

// optionClasses returns each group's templateClass and, while
// in.ChooserByTemplate holds, its option class: the template class and,
// when the Chooser reads prices, the price of its template node; both
// numbered from 1. A group whose template cannot be encoded, or whose
// price is unknown, gets none (0: an option of its own).
func optionClasses(groups []*topology.Group, templates map[string]*framework.NodeInfo, in LoopInputs) (map[string]int, map[string]int) {
	tcs := make(map[string]int, len(groups))
	ids, ocIDs := map[string]int{}, map[string]int{}
	ocs := make(map[string]int, len(groups))
	for _, g := range groups {
		t := templates[g.Name]
		tc := templateClass(t)
		if tc == "" {
			continue
		}
		if _, ok := ids[tc]; !ok {
			ids[tc] = len(ids) + 1
		}
		tcs[g.Name] = ids[tc]
		if !in.ChooserByTemplate {
			continue
		}
		oc := tc
		if in.Price != nil {
			p, ok := in.Price(t.Node())
			if !ok {
				continue
			}
			oc += "\x00" + strconv.FormatFloat(p, 'g', -1, 64)
		}
		if _, ok := ocIDs[oc]; !ok {
			ocIDs[oc] = len(ocIDs) + 1
		}
		ocs[g.Name] = ocIDs[oc]
	}
	return tcs, ocs
}
