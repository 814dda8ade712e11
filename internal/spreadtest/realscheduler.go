// Package spreadtest holds what the tests of topology and planner share:
// the real kube-scheduler PodTopologySpread plugin run through the
// scheduling framework, the oracle both packages are checked against. It is
// imported only from _test.go files.
package spreadtest

import (
	"context"
	"reflect"
	"testing"

	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	"k8s.io/client-go/informers"
	"k8s.io/client-go/kubernetes/fake"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/backend/cache"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/defaultbinder"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/podtopologyspread"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/queuesort"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
	"k8s.io/kubernetes/pkg/scheduler/metrics"
)

// The real kube-scheduler v1.33.1 PodTopologySpread plugin, run through the
// scheduling framework (PreFilter, then Filter per node).

// SwitchLister is the framework's snapshot lister; each run points it at a
// fresh cache snapshot, so one framework serves many clusters.
type SwitchLister struct{ Snap *cache.Snapshot }

func (l *SwitchLister) NodeInfos() framework.NodeInfoLister       { return l.Snap.NodeInfos() }
func (l *SwitchLister) StorageInfos() framework.StorageInfoLister { return l.Snap.StorageInfos() }

// RealScheduler is a scheduling framework whose only filter is the real
// PodTopologySpread plugin (plus the queue-sort and bind plugins every
// profile needs), configured with the given defaulting.
type RealScheduler struct {
	fwk    framework.Framework
	lister *SwitchLister
}

// SchedulerFeatures are the plugin features of a v1.33.1 kube-scheduler
// with default feature gates.
func SchedulerFeatures(tb testing.TB) feature.Features {
	fg := utilfeature.DefaultFeatureGate
	fts := feature.Features{
		EnableNodeInclusionPolicyInPodTopologySpread: fg.Enabled(features.NodeInclusionPolicyInPodTopologySpread),
		EnableMatchLabelKeysInPodTopologySpread:      fg.Enabled(features.MatchLabelKeysInPodTopologySpread),
		EnableSchedulingQueueHint:                    fg.Enabled(features.SchedulerQueueingHints),
	}
	require.True(tb, fts.EnableNodeInclusionPolicyInPodTopologySpread && fts.EnableMatchLabelKeysInPodTopologySpread,
		"1.33 default gates expected NodeInclusionPolicy and MatchLabelKeys enabled, got %+v", fts)
	return fts
}

// NewRealScheduler builds the framework. args nil means the scheduler's
// default configuration (defaultingType: System). objs are the objects the
// plugin's listers see (Services, ReplicaSets, ...).
func NewRealScheduler(tb testing.TB, args *config.PodTopologySpreadArgs, objs ...runtime.Object) *RealScheduler {
	tb.Helper()
	metrics.Register()
	if args == nil {
		args = &config.PodTopologySpreadArgs{DefaultingType: config.SystemDefaulting}
	}
	fts := SchedulerFeatures(tb)
	registry := frameworkruntime.Registry{
		queuesort.Name:         queuesort.New,
		defaultbinder.Name:     defaultbinder.New,
		podtopologyspread.Name: frameworkruntime.FactoryAdapter(fts, podtopologyspread.New),
	}
	profile := &config.KubeSchedulerProfile{
		SchedulerName: "spreadscale-differential",
		Plugins: &config.Plugins{
			QueueSort: config.PluginSet{Enabled: []config.Plugin{{Name: queuesort.Name}}},
			PreFilter: config.PluginSet{Enabled: []config.Plugin{{Name: podtopologyspread.Name}}},
			Filter:    config.PluginSet{Enabled: []config.Plugin{{Name: podtopologyspread.Name}}},
			Bind:      config.PluginSet{Enabled: []config.Plugin{{Name: defaultbinder.Name}}},
		},
		PluginConfig: []config.PluginConfig{{Name: podtopologyspread.Name, Args: args}},
	}
	fwk, lister := NewTestFramework(tb, registry, profile, objs...)
	return &RealScheduler{fwk: fwk, lister: lister}
}

// NewTestFramework builds the real scheduler framework for profile over an
// empty switchable snapshot, with a fake clientset holding objs behind the
// plugins' informers; it stops with the test.
func NewTestFramework(tb testing.TB, registry frameworkruntime.Registry, profile *config.KubeSchedulerProfile, objs ...runtime.Object) (framework.Framework, *SwitchLister) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	lister := &SwitchLister{Snap: cache.NewEmptySnapshot()}
	fwk, err := frameworkruntime.NewFramework(ctx, registry, profile,
		frameworkruntime.WithSnapshotSharedLister(lister),
		frameworkruntime.WithInformerFactory(factory),
		frameworkruntime.WithClientSet(client),
		frameworkruntime.WithParallelism(1))
	require.NoError(tb, err, "building scheduler framework")
	factory.Start(ctx.Done())
	factory.WaitForCacheSync(ctx.Done())
	return fwk, lister
}

// RealRun is the outcome of one scheduling cycle of the real plugin.
type RealRun struct {
	// Codes is the Filter status code per node name.
	Codes map[string]framework.Code
	// MatchNum is the plugin's PreFilter state: matching pods per topology
	// value, per hard constraint (nil when PreFilter skipped the plugin).
	MatchNum []map[string]int
}

// ScheduledPods returns the pods the scheduler's cache holds for this
// cluster: bound to an existing node and not Succeeded/Failed (its pod
// informer never lists terminal pods).
func ScheduledPods(nodes []*v1.Node, pods []*v1.Pod) []*v1.Pod {
	exists := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		exists[n.Name] = true
	}
	var out []*v1.Pod
	for _, p := range pods {
		if p.Spec.NodeName == "" || !exists[p.Spec.NodeName] ||
			p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
			continue
		}
		out = append(out, p)
	}
	return out
}

// run schedules pod against the cluster: PreFilter once, then Filter on
// each of the nodes named in filterOn (all nodes when nil).
func (r *RealScheduler) Run(tb testing.TB, nodes []*v1.Node, pods []*v1.Pod, pod *v1.Pod, filterOn []string) RealRun {
	tb.Helper()
	r.Load(nodes, pods)
	if filterOn == nil {
		for _, n := range nodes {
			filterOn = append(filterOn, n.Name)
		}
	}
	return r.Schedule(tb, pod, filterOn)
}

// load gives the scheduler a snapshot of the cluster, as its cache would.
func (r *RealScheduler) Load(nodes []*v1.Node, pods []*v1.Pod) {
	r.lister.Snap = cache.NewSnapshot(ScheduledPods(nodes, pods), nodes)
}

// schedule runs one scheduling cycle of pod on the loaded snapshot.
func (r *RealScheduler) Schedule(tb testing.TB, pod *v1.Pod, filterOn []string) RealRun {
	tb.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	_, pst, _ := r.fwk.RunPreFilterPlugins(ctx, state, pod)
	require.True(tb, pst.IsSuccess(), "real PreFilter for pod %s: %v", pod.Name, pst)
	out := RealRun{Codes: map[string]framework.Code{}}
	if !state.SkipFilterPlugins.Has(podtopologyspread.Name) {
		out.MatchNum = preFilterMatchNum(tb, state)
	}
	for _, name := range filterOn {
		ni, err := r.lister.Snap.NodeInfos().Get(name)
		require.NoError(tb, err, "snapshot lacks node %s", name)
		st := r.fwk.RunFilterPlugins(ctx, state, pod, ni)
		require.NotEqual(tb, framework.Error, st.Code(), "real Filter error on %s: %v", name, st)
		out.Codes[name] = st.Code()
	}
	return out
}

// preFilterMatchNum reads the plugin's PreFilter state (its exported field
// TpValueToMatchNum) by reflection: the per-domain counts the engine's
// Counts must equal.
func preFilterMatchNum(tb testing.TB, state *framework.CycleState) []map[string]int {
	data, err := state.Read(framework.StateKey("PreFilter" + podtopologyspread.Name))
	require.NoError(tb, err, "reading PodTopologySpread PreFilter state")
	v := reflect.ValueOf(data)
	if v.Kind() == reflect.Pointer {
		v = v.Elem()
	}
	f := v.FieldByName("TpValueToMatchNum")
	require.True(tb, f.IsValid(), "PodTopologySpread PreFilter state %T has no TpValueToMatchNum", data)
	m, ok := f.Interface().([]map[string]int)
	require.True(tb, ok, "TpValueToMatchNum is %s, want []map[string]int", f.Type())
	return m
}
