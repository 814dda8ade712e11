package planner_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	v1 "k8s.io/api/core/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/interpodaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/nodeaffinity"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/tainttoleration"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"

	"github.com/stretchr/testify/require"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/planner"
)

// filterScheduler is a kube-scheduler v1.33.1 framework whose filters are
// the real NodeResourcesFit, NodeAffinity, TaintToleration, InterPodAffinity
// and PodTopologySpread plugins (defaultingType: System, so cluster
// defaults only score). It runs PreFilter and Filter, as one scheduling
// cycle does, against a snapshot it is given.
type filterScheduler struct {
	fwk    framework.Framework
	lister *spreadtest.SwitchLister
}

// filterPlugins are the filter plugins of filterScheduler, in the order of
// kube-scheduler's default profile.
var filterPlugins = []string{
	noderesources.Name, nodeaffinity.Name, tainttoleration.Name, interpodaffinity.Name, podtopologyspread.Name,
}

// schedulerFilterFeatures are schedulerFeatures plus the gates the
// resource and affinity filters read, from the same 1.33 defaults.
func schedulerFilterFeatures(tb testing.TB) feature.Features {
	tb.Helper()
	fts := spreadtest.SchedulerFeatures(tb)
	fg := utilfeature.DefaultFeatureGate
	fts.EnableSidecarContainers = fg.Enabled(features.SidecarContainers)
	fts.EnableInPlacePodVerticalScaling = fg.Enabled(features.InPlacePodVerticalScaling)
	fts.EnablePodLevelResources = fg.Enabled(features.PodLevelResources)
	return fts
}

func newFilterScheduler(tb testing.TB) *filterScheduler {
	tb.Helper()
	metrics.Register()
	fts := schedulerFilterFeatures(tb)
	registry := frameworkruntime.Registry{
		queuesort.Name:         queuesort.New,
		defaultbinder.Name:     defaultbinder.New,
		noderesources.Name:     frameworkruntime.FactoryAdapter(fts, noderesources.NewFit),
		nodeaffinity.Name:      frameworkruntime.FactoryAdapter(fts, nodeaffinity.New),
		tainttoleration.Name:   frameworkruntime.FactoryAdapter(fts, tainttoleration.New),
		interpodaffinity.Name:  frameworkruntime.FactoryAdapter(fts, interpodaffinity.New),
		podtopologyspread.Name: frameworkruntime.FactoryAdapter(fts, podtopologyspread.New),
	}
	var filters []config.Plugin
	var preFilters []config.Plugin
	for _, name := range filterPlugins {
		filters = append(filters, config.Plugin{Name: name})
		if name != tainttoleration.Name { // TaintToleration has no PreFilter
			preFilters = append(preFilters, config.Plugin{Name: name})
		}
	}
	profile := &config.KubeSchedulerProfile{
		SchedulerName: "spreadscale-planner",
		Plugins: &config.Plugins{
			QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
			PreFilter: config.PluginSet{Enabled: preFilters},
			Filter:    config.PluginSet{Enabled: filters},
			Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
		},
		PluginConfig: []config.PluginConfig{
			{Name: noderesources.Name, Args: &config.NodeResourcesFitArgs{ScoringStrategy: &config.ScoringStrategy{
				Type:      config.LeastAllocated,
				Resources: []config.ResourceSpec{{Name: string(v1.ResourceCPU), Weight: 1}, {Name: string(v1.ResourceMemory), Weight: 1}},
			}}},
			{Name: nodeaffinity.Name, Args: &config.NodeAffinityArgs{}},
			{Name: interpodaffinity.Name, Args: &config.InterPodAffinityArgs{HardPodAffinityWeight: 1}},
			{Name: podtopologyspread.Name, Args: &config.PodTopologySpreadArgs{DefaultingType: config.SystemDefaulting}},
		},
	}
	fwk, lister := spreadtest.NewTestFramework(tb, registry, profile)
	return &filterScheduler{fwk: fwk, lister: lister}
}

// filter runs one scheduling cycle of pod over the cluster of nodes and
// (bound) pods, and returns the verdict for the named node: PreFilter
// (including a PreFilterResult that leaves the node out), then every
// Filter. A plugin error fails the test.
func (s *filterScheduler) filter(tb testing.TB, nodes []*v1.Node, pods []*v1.Pod, pod *v1.Pod, nodeName string) *framework.Status {
	tb.Helper()
	s.lister.Snap = cache.NewSnapshot(spreadtest.ScheduledPods(nodes, pods), nodes)
	ctx := context.Background()
	state := framework.NewCycleState()
	res, st, _ := s.fwk.RunPreFilterPlugins(ctx, state, pod)
	require.NotEqual(tb, framework.Error, st.Code(), "real PreFilter error for pod %s: %v", pod.Name, st)
	if !st.IsSuccess() {
		return st
	}
	if !res.AllNodes() && !res.NodeNames.Has(nodeName) {
		return framework.NewStatus(framework.UnschedulableAndUnresolvable, "node(s) excluded by PreFilter")
	}
	ni, err := s.lister.Snap.NodeInfos().Get(nodeName)
	require.NoError(tb, err, "snapshot lacks node %s", nodeName)
	st = s.fwk.RunFilterPlugins(ctx, state, pod, ni)
	require.NotEqual(tb, framework.Error, st.Code(), "real Filter error for pod %s on %s: %v", pod.Name, nodeName, st)
	return st
}

func statusError(nodeName string, st *framework.Status) error {
	if st.IsSuccess() {
		return nil
	}
	return fmt.Errorf("%s: %s (%s)", nodeName, strings.Join(st.Reasons(), ", "), st.Plugin())
}

// realCluster is the planner's Cluster backed by filterScheduler: a
// snapshot of the existing nodes and pods that grows as the planner adds
// nodes and binds pods. It records every call so tests can assert how the
// planner used it.
type realCluster struct {
	tb    testing.TB
	sched *filterScheduler
	nodes []*v1.Node
	pods  []*v1.Pod
	group map[string]string // node name → group ("" for existing nodes outside groups)

	added     []string // AddNode, in call order: "group/node"
	bound     []string // AddPod, in call order: "pod@node"
	checks    int
	checksNew int
	resets    int

	baseNodes, basePods int // what Reset returns to
}

var _ planner.Cluster = (*realCluster)(nil)

func newRealCluster(tb testing.TB, sched *filterScheduler, nodes []*v1.Node, pods []*v1.Pod, groupOf map[string]string) *realCluster {
	c := &realCluster{tb: tb, sched: sched, group: map[string]string{}}
	for _, n := range nodes {
		c.nodes = append(c.nodes, n.DeepCopy())
		c.group[n.Name] = groupOf[n.Name]
	}
	for _, p := range pods {
		c.pods = append(c.pods, p.DeepCopy())
	}
	c.baseNodes, c.basePods = len(c.nodes), len(c.pods)
	return c
}

// Reset drops every node and pod added through the planner, and the records
// of them, as a re-plan starts from scratch.
func (c *realCluster) Reset() error {
	for _, n := range c.nodes[c.baseNodes:] {
		delete(c.group, n.Name)
	}
	c.nodes, c.pods = c.nodes[:c.baseNodes], c.pods[:c.basePods]
	c.added, c.bound = nil, nil
	c.resets++
	return nil
}

func (c *realCluster) has(name string) bool {
	_, ok := c.group[name]
	return ok
}

func (c *realCluster) CheckNew(pod *v1.Pod, group string, node *v1.Node) error {
	c.checksNew++
	if c.has(node.Name) {
		return fmt.Errorf("CheckNew: node %s of group %s already exists", node.Name, group)
	}
	nodes := append(append([]*v1.Node(nil), c.nodes...), node.DeepCopy())
	return statusError(node.Name, c.sched.filter(c.tb, nodes, c.pods, pod, node.Name))
}

func (c *realCluster) Check(pod *v1.Pod, nodeName string) error {
	c.checks++
	if !c.has(nodeName) {
		return fmt.Errorf("Check: no node %s", nodeName)
	}
	return statusError(nodeName, c.sched.filter(c.tb, c.nodes, c.pods, pod, nodeName))
}

func (c *realCluster) AddNode(group string, node *v1.Node) error {
	if c.has(node.Name) {
		return fmt.Errorf("AddNode: node %s already exists", node.Name)
	}
	c.nodes = append(c.nodes, node.DeepCopy())
	c.group[node.Name] = group
	c.added = append(c.added, group+"/"+node.Name)
	return nil
}

func (c *realCluster) AddPod(pod *v1.Pod, nodeName string) error {
	if !c.has(nodeName) {
		return fmt.Errorf("AddPod: no node %s", nodeName)
	}
	c.pods = append(c.pods, spreadtest.PodFrom(pod).Node(nodeName).Phase(v1.PodRunning).Obj())
	c.bound = append(c.bound, pod.Name+"@"+nodeName)
	return nil
}
