package plan

import (
	"slices"
	"sort"
	"strconv"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
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
// it is chosen, its class's groups are chosen together, in the order the
// Chooser gives them among themselves (see members).
func (r *ranking) order(class planner.ClassKey, exemplar *apiv1.Pod, candidates []*topology.Group, share []*apiv1.Pod) []string {
	var options []caexpander.Option
	var rest []string
	type optionKey struct{ class, nodes, pods int }
	members := map[string][]caexpander.Option{} // by representative id
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
				members[rep] = append(members[rep], o)
				continue
			}
			repOf[key] = g.Name
		}
		members[g.Name] = []caexpander.Option{o}
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
		chosen := r.members(members[id])
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
		for _, m := range members[o.NodeGroup.Id()] {
			rest = append(rest, m.NodeGroup.Id())
		}
	}
	sort.Strings(rest)
	return append(ids, rest...)
}

// members orders the options of one option class, which differ only in
// their groups, as the Chooser orders them: its best, then the best of the
// rest. A chain that ends without telling them apart draws at random (CA's
// fallback), so the groups of an instance type in several zones take the
// pods that any zone serves in the Chooser's random order, as they would
// one CA loop at a time, not all in the zone whose id comes first.
func (r *ranking) members(opts []caexpander.Option) []string {
	ids := make([]string, 0, len(opts))
	opts = slices.Clone(opts)
	for len(opts) > 1 {
		best := r.chooser.BestOption(opts, r.templates)
		if best == nil {
			break
		}
		id := best.NodeGroup.Id()
		ids = append(ids, id)
		opts = slices.DeleteFunc(opts, func(o caexpander.Option) bool { return o.NodeGroup.Id() == id })
	}
	for _, o := range opts {
		ids = append(ids, o.NodeGroup.Id())
	}
	return ids
}

// optionClasses returns each group's template classes (templateClasses),
// with its label values and without (see ranking.templateClasses), and,
// while in.ChooserByTemplate holds, its option class: the template class without label values,
// whether the group exists and, when the Chooser reads prices, the price of
// its template node. The expanders that read groups by their templates read
// a template's labels only through the provider's price and the GPU label's
// presence (the price expander, which also reads whether the group exists),
// so the groups of an instance type in several zones, or spot and
// on-demand at one price, are one option class. Each map numbers its
// classes from 1; a group whose template cannot be encoded, or whose price
// is unknown, gets none (0: an option of its own).
func optionClasses(groups []*topology.Group, templates map[string]*framework.NodeInfo, byID map[string]cloudprovider.NodeGroup, in LoopInputs) (map[string]int, map[string]int, map[string]int) {
	exact, valueBlind, options := number(len(groups)), number(len(groups)), number(len(groups))
	for _, g := range groups {
		t := templates[g.Name]
		tc, blind := templateClasses(t)
		if tc == "" {
			continue
		}
		exact.add(g.Name, tc)
		valueBlind.add(g.Name, blind)
		if !in.ChooserByTemplate {
			continue
		}
		ng := byID[g.Name]
		if ng == nil {
			continue
		}
		oc := blind + "\x00" + strconv.FormatBool(ng.Exist())
		if in.Price != nil {
			p, ok := in.Price(t.Node())
			if !ok {
				continue
			}
			oc += "\x00" + strconv.FormatFloat(p, 'g', -1, 64)
		}
		options.add(g.Name, oc)
	}
	return exact.of, valueBlind.of, options.of
}

// numbering numbers classes from 1 in the order they are first added.
type numbering struct {
	ids, of map[string]int
}

func number(n int) numbering {
	return numbering{ids: map[string]int{}, of: make(map[string]int, n)}
}

// add puts group in class.
func (n numbering) add(group, class string) {
	id, ok := n.ids[class]
	if !ok {
		id = len(n.ids) + 1
		n.ids[class] = id
	}
	n.of[group] = id
}
