package planner_test

import (
	"context"
	"fmt"
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

	"github.com/spreadscale/spreadscale/topology"
)

// The real kube-scheduler v1.33.1 PodTopologySpread plugin, run through the
// scheduling framework (PreFilter, then Filter per node).

// switchLister is the framework's snapshot lister; each run points it at a
// fresh cache snapshot, so one framework serves many clusters.
type switchLister struct{ snap *cache.Snapshot }

func (l *switchLister) NodeInfos() framework.NodeInfoLister       { return l.snap.NodeInfos() }
func (l *switchLister) StorageInfos() framework.StorageInfoLister { return l.snap.StorageInfos() }

// realScheduler is a scheduling framework whose only filter is the real
// PodTopologySpread plugin (plus the queue-sort and bind plugins every
// profile needs), configured with the given defaulting.
type realScheduler struct {
	fwk    framework.Framework
	lister *switchLister
}

// schedulerFeatures are the plugin features of a v1.33.1 kube-scheduler
// with default feature gates.
func schedulerFeatures(tb testing.TB) feature.Features {
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

// newRealScheduler builds the framework. args nil means the scheduler's
// default configuration (defaultingType: System). objs are the objects the
// plugin's listers see (Services, ReplicaSets, ...).
func newRealScheduler(tb testing.TB, args *config.PodTopologySpreadArgs, objs ...runtime.Object) *realScheduler {
	tb.Helper()
	metrics.Register()
	if args == nil {
		args = &config.PodTopologySpreadArgs{DefaultingType: config.SystemDefaulting}
	}
	fts := schedulerFeatures(tb)
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
	fwk, lister := newTestFramework(tb, registry, profile, objs...)
	return &realScheduler{fwk: fwk, lister: lister}
}

// newTestFramework builds the real scheduler framework for profile over an
// empty switchable snapshot, with a fake clientset holding objs behind the
// plugins' informers; it stops with the test.
func newTestFramework(tb testing.TB, registry frameworkruntime.Registry, profile *config.KubeSchedulerProfile, objs ...runtime.Object) (framework.Framework, *switchLister) {
	tb.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	tb.Cleanup(cancel)
	client := fake.NewClientset(objs...)
	factory := informers.NewSharedInformerFactory(client, 0)
	lister := &switchLister{snap: cache.NewEmptySnapshot()}
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

// realRun is the outcome of one scheduling cycle of the real plugin.
type realRun struct {
	// codes is the Filter status code per node name.
	codes map[string]framework.Code
	// matchNum is the plugin's PreFilter state: matching pods per topology
	// value, per hard constraint (nil when PreFilter skipped the plugin).
	matchNum []map[string]int
}

// scheduledPods returns the pods the scheduler's cache holds for this
// cluster: bound to an existing node and not Succeeded/Failed (its pod
// informer never lists terminal pods).
func scheduledPods(nodes []*v1.Node, pods []*v1.Pod) []*v1.Pod {
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
func (r *realScheduler) run(tb testing.TB, nodes []*v1.Node, pods []*v1.Pod, pod *v1.Pod, filterOn []string) realRun {
	tb.Helper()
	r.load(nodes, pods)
	if filterOn == nil {
		for _, n := range nodes {
			filterOn = append(filterOn, n.Name)
		}
	}
	return r.schedule(tb, pod, filterOn)
}

// load gives the scheduler a snapshot of the cluster, as its cache would.
func (r *realScheduler) load(nodes []*v1.Node, pods []*v1.Pod) {
	r.lister.snap = cache.NewSnapshot(scheduledPods(nodes, pods), nodes)
}

// schedule runs one scheduling cycle of pod on the loaded snapshot.
func (r *realScheduler) schedule(tb testing.TB, pod *v1.Pod, filterOn []string) realRun {
	tb.Helper()
	ctx := context.Background()
	state := framework.NewCycleState()
	_, pst, _ := r.fwk.RunPreFilterPlugins(ctx, state, pod)
	require.True(tb, pst.IsSuccess(), "real PreFilter for pod %s: %v", pod.Name, pst)
	out := realRun{codes: map[string]framework.Code{}}
	if !state.SkipFilterPlugins.Has(podtopologyspread.Name) {
		out.matchNum = preFilterMatchNum(tb, state)
	}
	for _, name := range filterOn {
		ni, err := r.lister.snap.NodeInfos().Get(name)
		require.NoError(tb, err, "snapshot lacks node %s", name)
		st := r.fwk.RunFilterPlugins(ctx, state, pod, ni)
		require.NotEqual(tb, framework.Error, st.Code(), "real Filter error on %s: %v", name, st)
		out.codes[name] = st.Code()
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

// engineCode maps an engine verdict to the status code the plugin returns.
func engineCode(r *topology.Rejection) framework.Code {
	switch {
	case r == nil:
		return framework.Success
	case r.MissingKey:
		return framework.UnschedulableAndUnresolvable
	default:
		return framework.Unschedulable
	}
}

func verdictString(r *topology.Rejection) string {
	if r == nil {
		return "Success"
	}
	return fmt.Sprintf("%s (%v)", engineCode(r), r)
}
