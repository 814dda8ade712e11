package sim

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	apiv1 "k8s.io/api/core/v1"
	resourcehelper "k8s.io/component-helpers/resource"

	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	"k8s.io/autoscaler/cluster-autoscaler/expander"
	"k8s.io/autoscaler/cluster-autoscaler/expander/factory"
	"k8s.io/autoscaler/cluster-autoscaler/expander/price"
)

// registerPriceExpander sets the scenario's pricing model on provider and
// registers cluster-autoscaler's price filter over it when some group has
// a Price (see registerScenarioExpanders); otherwise it leaves the default
// registration, which cannot be built without a pricing model.
func registerPriceExpander(f *factory.Factory, s Scenario, instances *cloudInstances) {
	provider := instances.provider
	if !slices.ContainsFunc(s.NodeGroups, func(g NodeGroup) bool { return g.Price != nil }) {
		return
	}
	provider.SetPricingModel(newScenarioPricing(s, provider))
	nodes := &clusterNodes{instances: instances}
	for _, n := range s.Nodes {
		if _, managed := s.NodeGroupOf[n.Name]; !managed {
			nodes.unmanaged = append(nodes.unmanaged, n.Name)
		}
	}
	f.RegisterFilter(expander.PriceBasedExpanderName, func() expander.Filter {
		return price.NewFilter(provider, price.NewSimplePreferredNodeProvider(nodes), price.SimpleNodeUnfitness)
	})
}

// groupRate is what the pricing model knows of one priced node group.
type groupRate struct {
	perHour     float64
	allocatable apiv1.ResourceList
}

// scenarioPricing is the cloudprovider.PricingModel of a Scenario: every
// node of a group costs the group's NodeGroup.Price per hour.
//
// NodePrice maps the node it is given to its group:
//
//  1. a node the cloud provider knows (the scenario's nodes in
//     NodeGroupOf and the "<group>-new-<n>" nodes of the run) is priced as
//     its provider group;
//  2. otherwise by name: after stripping the prefix of cluster-autoscaler's
//     sanitized templates ("template-node-for-<group>-<suffix>", and the
//     copies CA and spreadscale's planner make of them, which append
//     further suffixes), or from the name as it is (the simulation's raw
//     templates "<group>-template" and their copies), the group is the
//     longest group name that equals the name or is followed in it by "-".
//     The longest match keeps groups whose names prefix each other ("ng"
//     and "ng-a") apart.
//
// Nothing is read from the node's labels, so pricing needs no label that
// would change scheduling or similar-group balancing. A node that maps to
// no group, or to a group without a Price, is an error (CA's price
// expander then drops the option).
type scenarioPricing struct {
	rates    map[string]groupRate // group -> rate, priced groups only
	names    map[string]bool      // every group name
	provider *testcloudprovider.TestCloudProvider
	// podRates memoizes PodPrice's per-hour minimum by the pod's CPU and
	// memory request: CA's price expander prices every pod of every option,
	// and the minimum over the groups reads nothing else of the pod.
	podRates sync.Map // podRequest -> float64
	// requests memoizes each pod's podRequest (a pod's requests never
	// change: the API server refuses such an update), since the expander
	// prices the same pods option after option.
	requests sync.Map // *apiv1.Pod -> podRequest
}

// podRequest is the part of a pod PodPrice reads: its CPU (millicores) and
// memory (bytes) requests.
type podRequest struct{ cpu, mem int64 }

// templateNamePrefix is the name prefix of CA's sanitized templates and of
// every copy of them.
const templateNamePrefix = "template-node-for-"

// newScenarioPricing builds the pricing model of s; provider (may be nil)
// maps the nodes it knows to their groups.
func newScenarioPricing(s Scenario, provider *testcloudprovider.TestCloudProvider) *scenarioPricing {
	p := &scenarioPricing{rates: map[string]groupRate{}, names: map[string]bool{}, provider: provider}
	for _, g := range s.NodeGroups {
		p.names[g.Name] = true
		if g.Price == nil {
			continue
		}
		alloc := g.Template.Status.Allocatable
		if len(alloc) == 0 {
			alloc = g.Template.Status.Capacity
		}
		p.rates[g.Name] = groupRate{perHour: *g.Price, allocatable: alloc}
	}
	return p
}

// NodePrice returns the Price of the node's group times the length of
// [startTime, endTime] in hours.
func (p *scenarioPricing) NodePrice(node *apiv1.Node, startTime, endTime time.Time) (float64, error) {
	group, ok := p.groupOf(node)
	if !ok {
		return 0, fmt.Errorf("sim pricing: node %q belongs to no node group", node.Name)
	}
	rate, ok := p.rates[group]
	if !ok {
		return 0, fmt.Errorf("sim pricing: node group %q of node %q has no price", group, node.Name)
	}
	return rate.perHour * hours(startTime, endTime), nil
}

// PodPrice returns the theoretical minimum price of running the pod over
// [startTime, endTime], as the PricingModel interface defines it, priced
// from the node prices: the pod's dominant share of a node (the larger of
// its CPU and its memory request over the node's allocatable) times the
// node's price, on the group with a positive Price where that product is
// the smallest. Groups whose allocatable lacks a resource the pod requests
// are skipped. A pod requesting neither CPU nor memory, or a scenario
// without a group with a positive price, costs 0. It never fails: CA's
// price expander drops every option whose pods it cannot price.
//
// CA's price expander scores an option (node price × node count +
// stabilization) / (pods price + stabilization), the stabilization being
// the PodPrice of a 0.5-CPU, 500MiB pod, so pod prices in the currency of
// the node prices make options that help more pods per unit of money win.
func (p *scenarioPricing) PodPrice(pod *apiv1.Pod, startTime, endTime time.Time) (float64, error) {
	key := p.requestOf(pod)
	if key.cpu <= 0 && key.mem <= 0 {
		return 0, nil
	}
	perHour, ok := p.podRates.Load(key)
	if !ok {
		perHour, _ = p.podRates.LoadOrStore(key, p.cheapestShare(key.cpu, key.mem))
	}
	return perHour.(float64) * hours(startTime, endTime), nil
}

// requestOf returns pod's CPU and memory requests as kube-scheduler counts
// them (resourcehelper.PodRequests), computed once per pod.
func (p *scenarioPricing) requestOf(pod *apiv1.Pod) podRequest {
	if r, ok := p.requests.Load(pod); ok {
		return r.(podRequest)
	}
	req := resourcehelper.PodRequests(pod, resourcehelper.PodResourcesOptions{})
	r := podRequest{req.Cpu().MilliValue(), req.Memory().Value()}
	p.requests.Store(pod, r)
	return r
}

// cheapestShare is the smallest dominant share of a node times the node's
// price per hour over the groups with a positive Price (0 when none fits).
func (p *scenarioPricing) cheapestShare(cpu, mem int64) float64 {
	best, found := 0.0, false
	for _, r := range p.rates {
		if r.perHour <= 0 {
			continue
		}
		share, ok := dominantShare(cpu, mem, r.allocatable)
		if !ok {
			continue
		}
		if c := share * r.perHour; !found || c < best {
			best, found = c, true
		}
	}
	return best
}

// dominantShare is the larger of cpu (millicores) and mem (bytes) over
// alloc's CPU and memory; false when alloc lacks a requested resource.
func dominantShare(cpu, mem int64, alloc apiv1.ResourceList) (float64, bool) {
	share := 0.0
	for _, d := range []struct {
		want int64
		have int64
	}{{cpu, alloc.Cpu().MilliValue()}, {mem, alloc.Memory().Value()}} {
		if d.want <= 0 {
			continue
		}
		if d.have <= 0 {
			return 0, false
		}
		share = max(share, float64(d.want)/float64(d.have))
	}
	return share, true
}

// hours is the length of [start, end] in hours, 0 when end is before start.
func hours(start, end time.Time) float64 {
	return max(0, end.Sub(start).Hours())
}

// groupOf maps node to its group (see scenarioPricing).
func (p *scenarioPricing) groupOf(node *apiv1.Node) (string, bool) {
	if p.provider != nil {
		if ng, err := p.provider.NodeGroupForNode(node); err == nil && ng != nil {
			return ng.Id(), true
		}
	}
	if rest, ok := strings.CutPrefix(node.Name, templateNamePrefix); ok {
		if g, ok := p.longestGroupPrefix(rest); ok {
			return g, true
		}
	}
	return p.longestGroupPrefix(node.Name)
}

// longestGroupPrefix returns the longest group name that is name or is
// followed in name by "-": name itself, then name cut before each "-" from
// the right, looked up in the set of group names.
func (p *scenarioPricing) longestGroupPrefix(name string) (string, bool) {
	for prefix := name; ; {
		if p.names[prefix] {
			return prefix, true
		}
		i := strings.LastIndexByte(prefix, '-')
		if i < 0 {
			return "", false
		}
		prefix = prefix[:i]
	}
}
