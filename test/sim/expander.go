package sim

import (
	"math/rand/v2"
	"slices"
	"sort"
	"strings"

	"k8s.io/autoscaler/cluster-autoscaler/cloudprovider"
	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	caerrors "k8s.io/autoscaler/cluster-autoscaler/utils/errors"
)

// seededRandom is registered under CA's expander name "random" in place of
// CA's own: CA's random expander draws from the global math/rand source,
// which cannot be seeded from Go 1.24 on, so its choice differs from run to
// run. seededRandom chooses uniformly, like CA's, but with a source seeded
// from Config.Seed and over the options sorted by node group id (CA hands
// them over in cloud provider map order), so the same input and seed always
// choose the same group. It is both a Filter (for a chain) and a Strategy.
type seededRandom struct {
	rng *rand.Rand
}

// BestOptions implements expander.Filter: it keeps one option chosen at
// random.
func (r *seededRandom) BestOptions(options []expander.Option, nodeInfos map[string]*caframework.NodeInfo) []expander.Option {
	best := r.BestOption(options, nodeInfos)
	if best == nil {
		return nil
	}
	return []expander.Option{*best}
}

// BestOption implements expander.Strategy: it returns one option chosen at
// random, nil when there is none.
func (r *seededRandom) BestOption(options []expander.Option, _ map[string]*caframework.NodeInfo) *expander.Option {
	if len(options) == 0 {
		return nil
	}
	order := make([]int, len(options))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool {
		return options[order[a]].NodeGroup.Id() < options[order[b]].NodeGroup.Id()
	})
	return &options[order[r.rng.IntN(len(order))]]
}

// buildExpanderChain builds the strategy for the comma-separated names with
// f. CA's chain ends in an unseeded random pick among the options its
// filters leave; to make that pick deterministic the seeded "random" filter
// is appended to the chain unless the chain already ends in a strategy
// (an expander that always returns one option), which yields the same
// choice semantics with the seeded source.
func buildExpanderChain(f *factory.Factory, names string) (expander.Strategy, caerrors.AutoscalerError) {
	list := strings.Split(names, ",")
	for i := range list {
		list[i] = strings.TrimSpace(list[i])
	}
	if list[len(list)-1] != expander.RandomExpanderName {
		if s, err := f.Build(append(slices.Clone(list), expander.RandomExpanderName)); err == nil {
			return s, nil
		}
	}
	return f.Build(list)
}

// orderedProvider is CA's test cloud provider with NodeGroups() sorted by
// id. The test provider keeps groups in a map, so its NodeGroups() order
// (which decides the order in which CA evaluates groups and hands options
// to the expander and balancer) would change from run to run.
type orderedProvider struct {
	*testcloudprovider.TestCloudProvider
}

// NodeGroups returns all node groups sorted by id.
func (p orderedProvider) NodeGroups() []cloudprovider.NodeGroup {
	groups := p.TestCloudProvider.NodeGroups()
	sort.Slice(groups, func(i, j int) bool { return groups[i].Id() < groups[j].Id() })
	return groups
}
