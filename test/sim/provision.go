package sim

import (
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
	"time"

	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
	cautils "k8s.io/autoscaler/cluster-autoscaler/clusterstate/utils"
	"k8s.io/autoscaler/cluster-autoscaler/config"
	cacontext "k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/core"
	"k8s.io/autoscaler/cluster-autoscaler/simulator"
	caframework "k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
)

// instance is a cloud instance a scale-up created that has not joined the
// cluster yet.
type instance struct {
	name, group string
	// registerAt is when the node registers; zero for an instance that
	// never registers.
	registerAt time.Time
}

// onScaleUp is the test cloud provider's IncreaseSize callback. For a group
// with Provisioning.Error it fails with that message and puts the target
// size back (the test provider raises it before calling back; a real
// provider whose resize call fails leaves it as it was), so CA's executor
// registers a failed scale-up and the registry backs the group off, as in
// production. DecreaseTargetSize calls back with a negative delta, which
// always succeeds.
func (r *runner) onScaleUp(group string, delta int) error {
	g := r.groups[group]
	if delta <= 0 || g == nil || g.Provisioning.Error == "" {
		return nil
	}
	if ng, ok := r.provider.GetNodeGroup(group).(*testcloudprovider.TestNodeGroup); ok {
		size, _ := ng.TargetSize()
		ng.SetTargetSize(size - delta)
	}
	return errors.New(g.Provisioning.Error)
}

// onScaleDown is the test cloud provider's DeleteNodes callback (the test
// provider has already lowered the group's target size). An instance that
// never registered is gone at once (removeOldUnregistered deletes those);
// for a registered node — CA's actuator, from its goroutines — the request
// is kept and carried out at the end of the next loop (see the package
// doc's drain timing).
func (r *runner) onScaleDown(_ string, name string) error {
	r.drainMu.Lock()
	defer r.drainMu.Unlock()
	if _, registered := r.nodeGroupOf[name]; registered {
		r.deleteRequests = append(r.deleteRequests, name)
		return nil
	}
	r.instances.remove(&apiv1.Node{ObjectMeta: metav1.ObjectMeta{Name: name}})
	r.launching = slices.DeleteFunc(r.launching, func(in instance) bool { return in.name == name })
	return nil
}

// launch creates the instances of a scale-up of group by n nodes at now:
// they exist on the cloud provider at once (CA sees them as unregistered
// nodes) and each registers after the group's Provisioning.Delay plus its
// own draw of Jitter, or never.
func (r *runner) launch(group string, n int, now time.Time) {
	p := r.groups[group].Provisioning
	for range n {
		in := instance{name: r.namer.name(group), group: group}
		if !p.NeverRegisters {
			in.registerAt = now.Add(p.Delay + r.jitter(p.Jitter))
		}
		r.instances.add(group, &apiv1.Node{ObjectMeta: metav1.ObjectMeta{Name: in.name}})
		r.launching = append(r.launching, in)
	}
}

// jitter draws a duration uniformly from [0, max] from the run's arrival
// source; it draws nothing when max is 0, so that runs without jitter
// consume no numbers.
func (r *runner) jitter(max time.Duration) time.Duration {
	if max <= 0 {
		return 0
	}
	return time.Duration(r.arrivalRng.Int64N(int64(max) + 1))
}

// registerDue registers, in registration order (launch order among equal
// times), every instance whose registerAt is not after now as a node of its
// group created at registerAt: Ready at once when the group's ReadyDelay is
// 0, otherwise not Ready and tainted as the node lifecycle controller
// taints it until ReadyDelay has passed (see readyDue).
func (r *runner) registerDue(now time.Time) {
	var due, still []instance
	for _, in := range r.launching {
		if in.registerAt.IsZero() || in.registerAt.After(now) {
			still = append(still, in)
			continue
		}
		due = append(due, in)
	}
	slices.SortStableFunc(due, func(a, b instance) int { return a.registerAt.Compare(b.registerAt) })
	for _, in := range due {
		g := r.groups[in.group]
		n := nodeFromTemplate(g, in.name, in.registerAt, true)
		r.withoutArrivalTaint(n)
		if d := g.Provisioning.ReadyDelay; d > 0 {
			markNotReady(n, in.registerAt)
			r.starting = append(r.starting, startingNode{name: n.Name, readyAt: in.registerAt.Add(d)})
		}
		r.nodes = append(r.nodes, n)
		r.nodeGroupOf[n.Name] = in.group
	}
	r.launching = still
}

// refreshInstances refreshes the registry's cache of cloud instances every
// CloudProviderNodeInstancesCacheRefreshInterval (2 minutes) of simulated
// time, as the goroutine ClusterStateRegistry.Start runs does on the wall
// clock. Between refreshes the registry refetches only groups that are
// scaling up and entries CA invalidated.
func (r *runner) refreshInstances(now time.Time) {
	if now.Sub(r.instancesRefreshed) >= cautils.CloudProviderNodeInstancesCacheRefreshInterval {
		r.csr.RefreshCloudProviderNodeInstancesCache()
		r.instancesRefreshed = now
	}
}

// removeOldUnregistered mirrors RunOnce's removeOldUnregisteredNodes (CA
// 1.33.0 defaults: --force-delete-long-unregistered-nodes off): every node
// the registry has seen unregistered for longer than the group's
// --max-node-provision-time is deleted through NodeGroup.DeleteNodes, at
// most down to the group's minimum size, and the group's instance cache
// entry is invalidated.
func (r *runner) removeOldUnregistered(now time.Time) error {
	old := map[string][]*apiv1.Node{}
	var order []string
	for _, u := range r.csr.GetUnregisteredNodes() {
		ng, err := r.provider.NodeGroupForNode(u.Node)
		if err != nil || ng == nil || reflect.ValueOf(ng).IsNil() {
			continue
		}
		maxTime, err := r.csr.MaxNodeProvisionTime(ng)
		if err != nil {
			return err
		}
		if u.UnregisteredSince.Add(maxTime).Before(now) {
			if len(old[ng.Id()]) == 0 {
				order = append(order, ng.Id())
			}
			old[ng.Id()] = append(old[ng.Id()], u.Node)
		}
	}
	slices.Sort(order)
	for _, id := range order {
		ng := r.provider.GetNodeGroup(id)
		nodes := old[id]
		slices.SortFunc(nodes, func(a, b *apiv1.Node) int { return strings.Compare(a.Name, b.Name) })
		size, err := ng.TargetSize()
		if err != nil {
			return err
		}
		possible := size - ng.MinSize()
		if possible <= 0 {
			continue
		}
		if len(nodes) > possible {
			nodes = nodes[:possible]
		}
		err = ng.DeleteNodes(nodes)
		r.csr.InvalidateNodeInstancesCacheEntry(ng)
		if err != nil {
			return fmt.Errorf("delete unregistered nodes of %s: %w", id, err)
		}
	}
	return nil
}

// fixNodeGroupSizes mirrors RunOnce's fixNodeGroupSize: a group whose
// registered nodes have stayed below its target size (beyond its
// unregistered instances) for longer than --max-node-provision-time gets
// its target size decreased to the registered count. It returns whether it
// fixed a group, in which case CA skips the rest of the loop.
func (r *runner) fixNodeGroupSizes(now time.Time) (bool, error) {
	fixed := false
	for _, ng := range r.provider.NodeGroups() {
		incorrect := r.csr.GetIncorrectNodeGroupSize(ng.Id())
		if incorrect == nil {
			continue
		}
		maxTime, err := r.csr.MaxNodeProvisionTime(ng)
		if err != nil {
			return false, err
		}
		if incorrect.FirstObserved.Add(maxTime).Before(now) {
			if delta := incorrect.CurrentSize - incorrect.ExpectedSize; delta < 0 {
				if err := ng.DecreaseTargetSize(delta); err != nil {
					return fixed, fmt.Errorf("decrease %s: %w", ng.Id(), err)
				}
				fixed = true
			}
		}
	}
	return fixed, nil
}

// addUpcomingNodes mirrors RunOnce's addUpcomingNodesToClusterSnapshot: for
// every group with upcoming nodes (ClusterStateRegistry.GetUpcomingNodes),
// that many sanitized copies of the group's template NodeInfo named
// "<template>-upcoming-<i>" go into CA's cluster snapshot, the template
// marked with CA's upcoming-node annotation as CA marks it. The pod list
// processor then fits pending pods on them and the orchestrator and the
// plugin see them, so the pods they will take trigger no second scale-up.
func (r *runner) addUpcomingNodes(upcoming map[string]int, nodeInfos map[string]*caframework.NodeInfo) error {
	for _, id := range sortedKeys(upcoming) {
		tpl, ok := nodeInfos[id]
		if !ok {
			continue
		}
		if tpl.Node().Annotations == nil {
			tpl.Node().Annotations = map[string]string{}
		}
		tpl.Node().Annotations[core.NodeUpcomingAnnotation] = "true"
		for i := range upcoming[id] {
			ni, err := simulator.SanitizedNodeInfo(tpl, fmt.Sprintf("upcoming-%d", i))
			if err != nil {
				return err
			}
			if err := r.actx.ClusterSnapshot.AddNodeInfo(ni); err != nil {
				return fmt.Errorf("add upcoming node %s: %w", ni.Node().Name, err)
			}
		}
	}
	return nil
}

// backedOff reports whether any group is backed off at the simulated time.
func (r *runner) backedOff() bool {
	for _, ng := range r.provider.NodeGroups() {
		if r.csr.BackoffStatusForNodeGroup(ng, r.clock.Now()).IsBackedOff {
			return true
		}
	}
	return false
}

// buildProvider builds CA's test cloud provider with the scenario's groups,
// their templates and existing nodes, and the resource limits of opts; its
// NodeGroups() are sorted by id (orderedProvider).
func (r *runner) buildProvider(s Scenario, opts config.AutoscalingOptions, readyAt time.Time) orderedProvider {
	templates := map[string]*caframework.NodeInfo{}
	for _, g := range s.NodeGroups {
		tpl := nodeFromTemplate(r.groups[g.Name], g.Name+"-template", readyAt, false)
		templates[g.Name] = caframework.NewNodeInfo(tpl, nil)
	}
	r.provider = testcloudprovider.NewTestCloudProviderBuilder().
		WithOnScaleUp(r.onScaleUp).
		WithOnScaleDown(r.onScaleDown).
		WithMachineTemplates(templates).
		Build()
	r.provider.SetResourceLimiter(cacontext.NewResourceLimiterFromAutoscalingOptions(opts))
	for _, g := range s.NodeGroups {
		r.provider.AddNodeGroup(g.Name, g.MinSize, g.MaxSize, r.initialSize[g.Name])
	}
	r.instances = newCloudInstances(r.provider)
	for _, n := range r.nodes {
		if g, ok := r.nodeGroupOf[n.Name]; ok {
			r.instances.add(g, n)
		}
	}
	return orderedProvider{r.provider}
}

// declaredDomains collects the groups' DomainLabels for the plugin.
func declaredDomains(groups []NodeGroup) map[string]map[string]string {
	out := map[string]map[string]string{}
	for _, g := range groups {
		if len(g.DomainLabels) > 0 {
			out[g.Name] = maps.Clone(g.DomainLabels)
		}
	}
	return out
}
