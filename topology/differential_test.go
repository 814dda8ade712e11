package topology_test

import (
	"context"
	"flag"
	"fmt"
	"math/rand"
	"reflect"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/types"
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
	"k8s.io/utils/ptr"
	"sigs.k8s.io/yaml"

	"github.com/spreadscale/spreadscale/topology"
)

var (
	diffCases = flag.Int("cases", 10000, "TestDifferential: number of random cases")
	diffSeed  = flag.Int64("seed", 1, "TestDifferential: seed of the first case (case i uses seed+i)")
)

// ---------------------------------------------------------------------------
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

// ---------------------------------------------------------------------------
// Random clusters and pods.

const (
	keyZone   = v1.LabelTopologyZone
	keyHost   = v1.LabelHostname
	keyRack   = "example.com/rack"
	keyPool   = "example.com/pool"
	keyAbsent = "example.com/absent" // no node carries it
)

var (
	diffZones      = []string{"zone-a", "zone-b", "zone-c", "zone-d"}
	diffPools      = []string{"pool-x", "pool-y", "pool-z"}
	diffNamespaces = []string{"default", "default", "default", "default", "default", "default", "default", "team-a", "team-a", "team-b"}
	diffTaints     = []v1.Taint{
		{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoExecute},
		{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule},
		{Key: "spot", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "gpu", Effect: v1.TaintEffectPreferNoSchedule},
	}
	diffTolerations = []v1.Toleration{
		{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "infra", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Operator: v1.TolerationOpExists},
		{Key: "spot", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "batch", Effect: v1.TaintEffectNoExecute},
		{Operator: v1.TolerationOpExists},
	}
)

func pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// diffConfig is one scheduler configuration: the plugin's defaulting and
// the engine's matching Defaults.
type diffConfig struct {
	name     string
	real     *realScheduler
	defaults *topology.Defaults
}

// diffOwners are the Services and controllers default constraints derive
// their selector from; the same objects feed the plugin's informers and the
// engine's Defaults.
func diffOwners() (topology.Owners, []runtime.Object) {
	rs := func(ns, name string, sel map[string]string) *appsv1.ReplicaSet {
		return &appsv1.ReplicaSet{ObjectMeta: metav1.ObjectMeta{Namespace: ns, Name: name, UID: types.UID(ns + "-" + name)},
			Spec: appsv1.ReplicaSetSpec{Selector: &metav1.LabelSelector{MatchLabels: sel}}}
	}
	owners := topology.Owners{
		ReplicaSets: []*appsv1.ReplicaSet{
			rs("default", "rs-web", map[string]string{"app": "web"}),
			rs("default", "rs-db", map[string]string{"app": "db", "tier": "back"}),
			rs("team-a", "rs-web", map[string]string{"app": "web"}),
		},
		StatefulSets: []*appsv1.StatefulSet{{
			ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "ss-cache", UID: "ss-cache"},
			Spec:       appsv1.StatefulSetSpec{Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "cache"}}},
		}},
		Services: []*v1.Service{
			{ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: "svc-front"}, Spec: v1.ServiceSpec{Selector: map[string]string{"tier": "front"}}},
			{ObjectMeta: metav1.ObjectMeta{Namespace: "team-a", Name: "svc-web"}, Spec: v1.ServiceSpec{Selector: map[string]string{"app": "web"}}},
		},
	}
	var objs []runtime.Object
	for _, o := range owners.ReplicaSets {
		objs = append(objs, o)
	}
	for _, o := range owners.StatefulSets {
		objs = append(objs, o)
	}
	for _, o := range owners.Services {
		objs = append(objs, o)
	}
	return owners, objs
}

func diffConfigs(tb testing.TB) []diffConfig {
	owners, objs := diffOwners()
	list := func(cs ...v1.TopologySpreadConstraint) *config.PodTopologySpreadArgs {
		return &config.PodTopologySpreadArgs{DefaultingType: config.ListDefaulting, DefaultConstraints: cs}
	}
	hard := func(key string, skew int32) v1.TopologySpreadConstraint {
		return v1.TopologySpreadConstraint{TopologyKey: key, MaxSkew: skew, WhenUnsatisfiable: v1.DoNotSchedule}
	}
	soft := func(key string, skew int32) v1.TopologySpreadConstraint {
		return v1.TopologySpreadConstraint{TopologyKey: key, MaxSkew: skew, WhenUnsatisfiable: v1.ScheduleAnyway}
	}
	type cfg struct {
		name string
		args *config.PodTopologySpreadArgs
		cs   []v1.TopologySpreadConstraint
	}
	cfgs := []cfg{
		{"system", nil, topology.SystemDefaultConstraints},
		{"list: zone DoNotSchedule 1", list(hard(keyZone, 1)), []v1.TopologySpreadConstraint{hard(keyZone, 1)}},
		{"list: hostname DoNotSchedule 2, zone ScheduleAnyway 3", list(hard(keyHost, 2), soft(keyZone, 3)),
			[]v1.TopologySpreadConstraint{hard(keyHost, 2), soft(keyZone, 3)}},
		{"list: zone+hostname DoNotSchedule 1", list(hard(keyZone, 1), hard(keyHost, 1)),
			[]v1.TopologySpreadConstraint{hard(keyZone, 1), hard(keyHost, 1)}},
	}
	out := make([]diffConfig, 0, len(cfgs))
	for _, c := range cfgs {
		out = append(out, diffConfig{name: c.name, real: newRealScheduler(tb, c.args, objs...),
			defaults: topology.NewDefaults(c.cs, owners)})
	}
	return out
}

// diffCase is one random cluster and incoming pod.
type diffCase struct {
	seed  int64
	cfg   int
	nodes []*v1.Node
	pods  []*v1.Pod
	pod   *v1.Pod
	// added are the nodes that check AdmitNew/AddNode: left out of the
	// engine's universe and registered in this order, each empty when its
	// AdmitNew verdict is compared.
	added []string
	// later are the pods left out of the universe and added with AddPod.
	later map[string]bool
}

func randPodLabels(r *rand.Rand) map[string]string {
	l := map[string]string{}
	if r.Intn(10) != 0 {
		l["app"] = pick(r, "web", "web", "web", "web", "db", "cache")
	}
	if r.Intn(5) < 2 {
		l["tier"] = pick(r, "front", "back")
	}
	if r.Intn(5) < 2 {
		l["version"] = pick(r, "v1", "v2")
	}
	if r.Intn(5) < 2 {
		l["pod-template-hash"] = pick(r, "h1", "h2")
	}
	return l
}

func genCluster(r *rand.Rand) ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	load := map[string]int{} // pods per node in a zone: 0..load-1
	for zi, z := range diffZones[:1+r.Intn(len(diffZones))] {
		hosts := r.Intn(4)
		zoneLoad := pick(r, 1, 5, 10)
		if zi == 0 && hosts == 0 {
			hosts = 1
		}
		for h := 0; h < hosts; h++ {
			name := fmt.Sprintf("node-%d", len(nodes))
			l := map[string]string{}
			switch r.Intn(16) {
			case 0: // no zone label
			case 1:
				l[keyZone] = "" // present, empty value
			default:
				l[keyZone] = z
			}
			switch r.Intn(16) {
			case 0: // no hostname label
			case 1:
				l[keyHost] = "node-0" // shares a hostname domain
			default:
				l[keyHost] = name
			}
			if r.Intn(3) != 0 {
				l[keyRack] = fmt.Sprintf("rack-%d", r.Intn(3))
			}
			if r.Intn(4) != 0 {
				l[keyPool] = pick(r, diffPools...)
			}
			n := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: l}}
			if r.Intn(3) == 0 {
				for k := 1 + r.Intn(2); k > 0; k-- {
					n.Spec.Taints = append(n.Spec.Taints, diffTaints[r.Intn(len(diffTaints))])
				}
			}
			nodes = append(nodes, n)
			load[name] = zoneLoad
		}
	}
	var pods []*v1.Pod
	// Most clusters run one main workload whose replicas are most pods.
	main := randPodLabels(r)
	mainShare := pick(r, 0, 2, 3)
	addPod := func(nodeName string) {
		ns, l := pick(r, diffNamespaces...), randPodLabels(r)
		if r.Intn(4) < mainShare {
			ns, l = "default", map[string]string{}
			for k, v := range main {
				l[k] = v
			}
		}
		p := &v1.Pod{
			ObjectMeta: metav1.ObjectMeta{Name: fmt.Sprintf("pod-%d", len(pods)), Namespace: ns,
				UID: types.UID(fmt.Sprintf("uid-%d", len(pods))), Labels: l},
			Spec:   v1.PodSpec{NodeName: nodeName},
			Status: v1.PodStatus{Phase: v1.PodRunning},
		}
		switch r.Intn(25) {
		case 0:
			p.Status.Phase = v1.PodSucceeded
		case 1:
			p.Status.Phase = v1.PodFailed
		case 2:
			p.Status.Phase = v1.PodPending
		}
		if r.Intn(12) == 0 {
			ts := metav1.NewTime(time.Unix(1700000000, 0))
			p.DeletionTimestamp = &ts
		}
		pods = append(pods, p)
	}
	for _, n := range nodes {
		for k := r.Intn(load[n.Name]); k > 0; k-- {
			addPod(n.Name)
		}
	}
	if r.Intn(5) == 0 {
		addPod("node-gone") // bound to a node that no longer exists
	}
	if r.Intn(5) == 0 {
		addPod("") // pending, not bound
	}
	return nodes, pods
}

// genSelector returns a labelSelector for a constraint of a pod with labels
// pl, and the label keys it mentions.
func genSelector(r *rand.Rand, pl map[string]string) *metav1.LabelSelector {
	switch r.Intn(12) {
	case 0:
		return &metav1.LabelSelector{}
	case 1:
		return nil
	case 2, 3, 10, 11: // self-matching when the pod has app
		app := pl["app"]
		if app == "" {
			app = "web"
		}
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": app}}
	case 4:
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": pick(r, "web", "db", "cache")}}
	case 5:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{pick(r, "web", "db"), pick(r, "cache", "web")}}}}
	case 6:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{pick(r, "front", "back")}}}}
	case 7:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpExists},
			{Key: "tier", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	case 8:
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": pick(r, "web", "db"), "tier": pick(r, "front", "back")}}
	default: // one of the pod's own labels
		for _, k := range []string{"tier", "app"} {
			if v, ok := pl[k]; ok {
				return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
			}
		}
		return &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}
	}
}

func selectorKeys(ls *metav1.LabelSelector) map[string]bool {
	keys := map[string]bool{}
	if ls == nil {
		return keys
	}
	for k := range ls.MatchLabels {
		keys[k] = true
	}
	for _, e := range ls.MatchExpressions {
		keys[e.Key] = true
	}
	return keys
}

func genPolicy(r *rand.Rand) *v1.NodeInclusionPolicy {
	switch r.Intn(3) {
	case 0:
		return nil
	case 1:
		return ptr.To(v1.NodeInclusionPolicyHonor)
	default:
		return ptr.To(v1.NodeInclusionPolicyIgnore)
	}
}

func genConstraints(r *rand.Rand, pl map[string]string) []v1.TopologySpreadConstraint {
	var cs []v1.TopologySpreadConstraint
	used := map[string]bool{}
	for want := 1 + r.Intn(3); len(cs) < want; {
		key := keyZone
		switch k := r.Intn(20); {
		case k < 8:
		case k < 15:
			key = keyHost
		case k < 19:
			key = keyRack
		default:
			key = keyAbsent
		}
		action := v1.DoNotSchedule
		if r.Intn(4) == 0 {
			action = v1.ScheduleAnyway
		}
		if used[key+"/"+string(action)] {
			continue
		}
		used[key+"/"+string(action)] = true
		c := v1.TopologySpreadConstraint{
			MaxSkew:            pick[int32](r, 1, 1, 1, 2, 2, 3),
			TopologyKey:        key,
			WhenUnsatisfiable:  action,
			LabelSelector:      genSelector(r, pl),
			NodeAffinityPolicy: genPolicy(r),
			NodeTaintsPolicy:   genPolicy(r),
		}
		if action == v1.DoNotSchedule && r.Intn(5) < 2 {
			c.MinDomains = ptr.To(int32(1 + r.Intn(4)))
		}
		if c.LabelSelector != nil && r.Intn(3) == 0 {
			inSel := selectorKeys(c.LabelSelector)
			for _, k := range []string{"pod-template-hash", "version"} {
				if inSel[k] || r.Intn(3) == 0 {
					continue
				}
				c.MatchLabelKeys = append(c.MatchLabelKeys, k)
				// The form an API server that merges matchLabelKeys
				// (1.34+) stores: key In (pod's value) in the selector.
				if v, ok := pl[k]; ok && r.Intn(2) == 0 {
					c.LabelSelector = c.LabelSelector.DeepCopy()
					c.LabelSelector.MatchExpressions = append(c.LabelSelector.MatchExpressions,
						metav1.LabelSelectorRequirement{Key: k, Operator: metav1.LabelSelectorOpIn, Values: []string{v}})
				}
			}
		}
		cs = append(cs, c)
	}
	return cs
}

func genAffinity(r *rand.Rand, nodes []*v1.Node) *v1.Affinity {
	var terms []v1.NodeSelectorTerm
	for t := 1 + r.Intn(2); t > 0; t-- {
		var term v1.NodeSelectorTerm
		for e := 1 + r.Intn(2); e > 0; e-- {
			switch r.Intn(7) {
			case 0, 1:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: keyZone, Operator: v1.NodeSelectorOpIn, Values: []string{pick(r, diffZones...), pick(r, diffZones...)}})
			case 2:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: keyZone, Operator: v1.NodeSelectorOpNotIn, Values: []string{pick(r, diffZones...)}})
			case 3:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: keyPool, Operator: v1.NodeSelectorOpExists})
			case 4:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: keyPool, Operator: v1.NodeSelectorOpDoesNotExist})
			case 5:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: keyRack, Operator: v1.NodeSelectorOpIn, Values: []string{fmt.Sprintf("rack-%d", r.Intn(3))}})
			default:
				term.MatchFields = append(term.MatchFields, v1.NodeSelectorRequirement{
					Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpNotIn, Values: []string{pick(r, nodes...).Name}})
			}
		}
		terms = append(terms, term)
	}
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
}

func genIncoming(r *rand.Rand, nodes []*v1.Node, pods []*v1.Pod) *v1.Pod {
	pl, ns := randPodLabels(r), pick(r, diffNamespaces...)
	if len(pods) > 0 && r.Intn(2) == 0 {
		// Another replica of an existing pod.
		twin := pods[r.Intn(len(pods))]
		pl, ns = map[string]string{}, twin.Namespace
		for k, v := range twin.Labels {
			pl[k] = v
		}
	}
	p := &v1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "incoming", UID: "incoming-uid", Labels: pl, Namespace: ns}}
	if r.Intn(8) == 0 {
		// No constraints of its own: the configuration's defaults apply,
		// with the selector derived from its controller and Services.
		switch r.Intn(4) {
		case 0:
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet",
				Name: pick(r, "rs-web", "rs-db", "rs-missing"), UID: "rs", Controller: ptr.To(true)}}
		case 1:
			p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "StatefulSet",
				Name: "ss-cache", UID: "ss", Controller: ptr.To(true)}}
		}
	} else {
		p.Spec.TopologySpreadConstraints = genConstraints(r, pl)
	}
	if r.Intn(5) == 0 {
		p.Spec.NodeSelector = map[string]string{keyPool: pick(r, diffPools...)}
	}
	if r.Intn(10) < 3 {
		p.Spec.Affinity = genAffinity(r, nodes)
	}
	if r.Intn(5) < 2 {
		for k := 1 + r.Intn(2); k > 0; k-- {
			p.Spec.Tolerations = append(p.Spec.Tolerations, diffTolerations[r.Intn(len(diffTolerations)-1)])
		}
		if r.Intn(20) == 0 {
			p.Spec.Tolerations = append(p.Spec.Tolerations, diffTolerations[len(diffTolerations)-1])
		}
	}
	return p
}

func genCase(seed int64, nConfigs int) *diffCase {
	r := rand.New(rand.NewSource(seed))
	c := &diffCase{seed: seed, cfg: r.Intn(nConfigs), later: map[string]bool{}}
	c.nodes, c.pods = genCluster(r)
	c.pod = genIncoming(r, c.nodes, c.pods)
	for _, i := range r.Perm(len(c.nodes))[:1+r.Intn(min(3, len(c.nodes)))] {
		c.added = append(c.added, c.nodes[i].Name)
	}
	for _, p := range c.pods {
		if r.Intn(3) == 0 {
			c.later[p.Name] = true
		}
	}
	return c
}

// ---------------------------------------------------------------------------
// Comparing the engine with the plugin.

// diffStats shows what the random cases exercised.
type diffStats struct {
	cases, hard, minDomainsZero, newDomain int
	decisions                              int // engine verdicts compared with the scheduler's
	codes                                  map[framework.Code]int
}

type mismatch struct {
	check  string // "Admit", "AdmitNew", "AddNode", "AddNode+AddPod", "AddPod", "counts", "spread"
	node   string
	engine string
	real   string
}

func (m mismatch) String() string {
	if m.node == "" {
		return fmt.Sprintf("%s: engine %s, scheduler %s", m.check, m.engine, m.real)
	}
	return fmt.Sprintf("%s on %s: engine %s, scheduler %s", m.check, m.node, m.engine, m.real)
}

func verdictString(r *topology.Rejection) string {
	if r == nil {
		return "Success"
	}
	return fmt.Sprintf("%s (%v)", engineCode(r), r)
}

func without(nodes []*v1.Node, name string) []*v1.Node {
	out := make([]*v1.Node, 0, len(nodes))
	for _, n := range nodes {
		if n.Name != name {
			out = append(out, n)
		}
	}
	return out
}

func podsOff(pods []*v1.Pod, node string) []*v1.Pod {
	out := make([]*v1.Pod, 0, len(pods))
	for _, p := range pods {
		if p.Spec.NodeName != node {
			out = append(out, p)
		}
	}
	return out
}

// check compares the engine with the plugin on c and returns every
// disagreement.
func check(tb testing.TB, cfgs []diffConfig, c *diffCase, st *diffStats) []mismatch {
	cfg := cfgs[c.cfg]
	var out []mismatch
	decided := func() {
		if st != nil {
			st.decisions++
		}
	}
	spread, err := topology.NewSpread(c.pod, cfg.defaults)
	if err != nil {
		return []mismatch{{check: "spread", engine: "invalid: " + err.Error(), real: "accepts the pod"}}
	}
	full, err := topology.NewUniverse(c.nodes, c.pods, nil, nil)
	require.NoError(tb, err, "NewUniverse")
	real := cfg.real.run(tb, c.nodes, c.pods, c.pod, nil)

	// The per-domain counts and global minimum PreFilter computed.
	counts := full.Count(spread)
	if len(real.matchNum) != len(spread.Hard) {
		out = append(out, mismatch{check: "counts", engine: fmt.Sprintf("%d hard constraints", len(spread.Hard)),
			real: fmt.Sprintf("%d hard constraints", len(real.matchNum))})
	} else {
		for i, m := range real.matchNum {
			if d := compareCounts(counts, i, spread.Hard[i], m); d != "" {
				out = append(out, mismatch{check: "counts", engine: d, real: fmt.Sprint(m)})
			}
		}
	}

	if st != nil {
		st.cases++
		if len(spread.Hard) > 0 {
			st.hard++
		}
		for i, m := range real.matchNum {
			lowest := -1
			for _, n := range m {
				if lowest < 0 || n < lowest {
					lowest = n
				}
			}
			if len(m) < int(spread.Hard[i].MinDomains) && lowest > 0 {
				st.minDomainsZero++
			}
		}
		for _, code := range real.codes {
			st.codes[code]++
		}
	}
	compareAll := func(name string, cnt *topology.Counts) {
		for _, n := range c.nodes {
			decided()
			got := cnt.Admit(n)
			if engineCode(got) != real.codes[n.Name] {
				out = append(out, mismatch{check: name, node: n.Name, engine: verdictString(got), real: real.codes[n.Name].String()})
			}
		}
	}
	compareAll("Admit", counts)

	// AdmitNew and AddNode: the engine starts from the cluster without the
	// added nodes and registers them one by one, as a plan does. Before
	// each registers, AdmitNew must give the verdict the scheduler gives
	// with that node registered (empty) next to the ones before it.
	isAdded := map[string]bool{}
	for _, name := range c.added {
		isAdded[name] = true
	}
	var base []*v1.Node
	for _, n := range c.nodes {
		if !isAdded[n.Name] {
			base = append(base, n)
		}
	}
	smaller, err := topology.NewUniverse(base, c.pods, nil, nil)
	require.NoError(tb, err, "NewUniverse")
	grown := smaller.Count(spread)
	seen := append([]*v1.Node(nil), base...)
	for _, name := range c.added {
		added := full.Node(name)
		seen = append(seen, added.Node)
		realNew := cfg.real.run(tb, seen, podsOff(c.pods, name), c.pod, nil)
		decided()
		if got := grown.AdmitNew(added.Node); engineCode(got) != realNew.codes[name] {
			out = append(out, mismatch{check: "AdmitNew", node: name, engine: verdictString(got), real: realNew.codes[name].String()})
		}
		before := make([]int, len(spread.Hard))
		for i := range spread.Hard {
			before[i] = grown.Domains(i)
		}
		// The node registers empty: every node's verdict is the
		// scheduler's on the cluster that now includes it.
		grown.AddNode(&topology.Node{Node: added.Node, Planned: true})
		for _, n := range seen {
			decided()
			if got := grown.Admit(n); engineCode(got) != realNew.codes[n.Name] {
				out = append(out, mismatch{check: "AddNode", node: n.Name, engine: verdictString(got), real: realNew.codes[n.Name].String()})
			}
		}
		// Then its pods land.
		for _, p := range added.Pods {
			grown.AddPod(p, added)
		}
		if st != nil {
			st.codes[realNew.codes[name]]++
			for i := range spread.Hard {
				if grown.Domains(i) > before[i] {
					st.newDomain++
					break
				}
			}
		}
	}
	// With every node registered and its pods counted, the counts are the
	// full cluster's.
	compareAll("AddNode+AddPod", grown)

	// AddPod: pods left out of the universe, then added one by one.
	var early, late []*v1.Pod
	for _, p := range c.pods {
		if c.later[p.Name] && full.Node(p.Spec.NodeName) != nil {
			late = append(late, p)
		} else {
			early = append(early, p)
		}
	}
	partial, err := topology.NewUniverse(c.nodes, early, nil, nil)
	require.NoError(tb, err, "NewUniverse")
	incr := partial.Count(spread)
	for _, p := range late {
		incr.AddPod(p, full.Node(p.Spec.NodeName))
	}
	compareAll("AddPod", incr)
	return out
}

// compareCounts returns "" when cnt's constraint i has exactly the domains
// and counts of the plugin's m, and the same global minimum.
func compareCounts(cnt *topology.Counts, i int, con topology.Constraint, m map[string]int) string {
	if cnt.Domains(i) != len(m) {
		return fmt.Sprintf("constraint %d (%s): %d domains", i, con.TopologyKey, cnt.Domains(i))
	}
	wantMin := 0
	first := true
	for v, n := range m {
		if got := cnt.MatchNum(i, v); got != n {
			return fmt.Sprintf("constraint %d (%s): %s=%s has %d matching pods", i, con.TopologyKey, con.TopologyKey, v, got)
		}
		if first || n < wantMin {
			wantMin, first = n, false
		}
	}
	if len(m) < int(con.MinDomains) {
		wantMin = 0
	}
	if got := cnt.MinMatchNum(i); got != wantMin {
		return fmt.Sprintf("constraint %d (%s): global minimum %d, want %d", i, con.TopologyKey, got, wantMin)
	}
	return ""
}

// shrink removes pods, nodes and constraints from c while a disagreement of
// the same check remains, to print a minimal case.
func shrink(tb testing.TB, cfgs []diffConfig, c *diffCase, kind string) *diffCase {
	still := func(d *diffCase) bool {
		for _, m := range check(tb, cfgs, d, nil) {
			if m.check == kind {
				return true
			}
		}
		return false
	}
	cur := c
	for changed := true; changed; {
		changed = false
		for i := 0; i < len(cur.pods); i++ {
			next := *cur
			next.pods = append(append([]*v1.Pod(nil), cur.pods[:i]...), cur.pods[i+1:]...)
			if still(&next) {
				cur, changed = &next, true
				i--
			}
		}
		for i := 0; i < len(cur.nodes) && len(cur.nodes) > 1; i++ {
			if slices.Contains(cur.added, cur.nodes[i].Name) {
				continue
			}
			next := *cur
			next.nodes = without(cur.nodes, cur.nodes[i].Name)
			next.pods = podsOff(cur.pods, cur.nodes[i].Name)
			if still(&next) {
				cur, changed = &next, true
				i--
			}
		}
		tscs := cur.pod.Spec.TopologySpreadConstraints
		for i := 0; i < len(tscs) && len(tscs) > 1; i++ {
			next := *cur
			next.pod = cur.pod.DeepCopy()
			next.pod.Spec.TopologySpreadConstraints = append(append([]v1.TopologySpreadConstraint(nil), tscs[:i]...), tscs[i+1:]...)
			if still(&next) {
				cur, changed = &next, true
				tscs = cur.pod.Spec.TopologySpreadConstraints
				i--
			}
		}
	}
	return cur
}

// describe prints a case compactly: nodes with labels, taints and pods; the
// incoming pod's spread, selector, affinity and tolerations.
func describe(c *diffCase, cfgs []diffConfig) string {
	var b strings.Builder
	fmt.Fprintf(&b, "scheduler config: %s\n", cfgs[c.cfg].name)
	byNode := map[string][]*v1.Pod{}
	for _, p := range c.pods {
		byNode[p.Spec.NodeName] = append(byNode[p.Spec.NodeName], p)
	}
	podLine := func(p *v1.Pod) string {
		s := fmt.Sprintf("%s ns=%s labels=%v phase=%s", p.Name, p.Namespace, p.Labels, p.Status.Phase)
		if p.DeletionTimestamp != nil {
			s += " terminating"
		}
		if c.later[p.Name] {
			s += " (AddPod)"
		}
		return s
	}
	for _, n := range c.nodes {
		keys := make([]string, 0, len(n.Labels))
		for k := range n.Labels {
			keys = append(keys, k+"="+n.Labels[k])
		}
		sort.Strings(keys)
		fmt.Fprintf(&b, "node %s labels=[%s]", n.Name, strings.Join(keys, " "))
		for _, t := range n.Spec.Taints {
			fmt.Fprintf(&b, " taint=%s", t.ToString())
		}
		if j := slices.Index(c.added, n.Name); j >= 0 {
			fmt.Fprintf(&b, " (AdmitNew/AddNode #%d)", j+1)
		}
		b.WriteByte('\n')
		for _, p := range byNode[n.Name] {
			fmt.Fprintf(&b, "    %s\n", podLine(p))
		}
	}
	for name, ps := range byNode {
		known := false
		for _, n := range c.nodes {
			known = known || n.Name == name
		}
		if !known {
			for _, p := range ps {
				fmt.Fprintf(&b, "pod on %q: %s\n", name, podLine(p))
			}
		}
	}
	spec := map[string]interface{}{
		"namespace": c.pod.Namespace, "labels": c.pod.Labels, "ownerReferences": c.pod.OwnerReferences,
		"topologySpreadConstraints": c.pod.Spec.TopologySpreadConstraints,
		"nodeSelector":              c.pod.Spec.NodeSelector, "affinity": c.pod.Spec.Affinity, "tolerations": c.pod.Spec.Tolerations,
	}
	y, _ := yaml.Marshal(spec)
	fmt.Fprintf(&b, "incoming pod:\n%s", y)
	return b.String()
}

// TestDifferential compares the engine with the real v1.33.1 plugin on
// random clusters and pods: Filter's decision per node (pass, Unschedulable
// for skew, UnschedulableAndUnresolvable for a missing key), PreFilter's
// per-domain counts and global minimum, AdmitNew against a node that has
// registered, and counts grown with AddNode/AddPod.
func TestDifferential(t *testing.T) {
	cfgs := diffConfigs(t)
	start := time.Now()
	n, bad := *diffCases, 0
	var firstBad *diffCase
	var firstKind string
	stats := &diffStats{codes: map[framework.Code]int{}}
	for i := 0; i < n; i++ {
		c := genCase(*diffSeed+int64(i), len(cfgs))
		ms := check(t, cfgs, c, stats)
		if len(ms) == 0 {
			continue
		}
		bad++
		if bad <= 5 {
			assert.Fail(t, fmt.Sprintf("seed %d (reproduce: go test ./topology/ -run 'TestDifferential$' -seed=%d -cases=1): %d disagreement(s), first: %v",
				c.seed, c.seed, len(ms), ms[0]))
		}
		if firstBad == nil {
			firstBad, firstKind = c, ms[0].check
		}
	}
	elapsed := time.Since(start)
	summary := fmt.Sprintf("differential: %d cases, %d disagreements (seed %d, %d node decisions, %.1fs)",
		n, bad, *diffSeed, stats.decisions, elapsed.Seconds())
	t.Logf("%s", summary)
	fmt.Printf("%s\n", summary)
	t.Logf("real Filter verdicts (full clusters, registering nodes): %d Success, %d Unschedulable, %d UnschedulableAndUnresolvable; "+
		"%d cases with hard constraints; %d constraints whose minimum minDomains forces to 0; %d AdmitNew checks on a new domain",
		stats.codes[framework.Success], stats.codes[framework.Unschedulable], stats.codes[framework.UnschedulableAndUnresolvable],
		stats.hard, stats.minDomainsZero, stats.newDomain)
	if firstBad != nil {
		min := shrink(t, cfgs, firstBad, firstKind)
		var lines []string
		for _, m := range check(t, cfgs, min, nil) {
			lines = append(lines, m.String())
		}
		require.Fail(t, fmt.Sprintf("first disagreement, seed %d, shrunk:\n%s\ndisagreements:\n  %s",
			firstBad.seed, describe(min, cfgs), strings.Join(lines, "\n  ")))
	}
}

// TestDifferentialGenerator keeps the generator honest: the random cases
// must reach every situation the differential test is meant to cover.
func TestDifferentialGenerator(t *testing.T) {
	seen := map[string]int{}
	for i := int64(0); i < 2000; i++ {
		c := genCase(*diffSeed+i, 4)
		for _, n := range c.nodes {
			if _, ok := n.Labels[keyZone]; !ok {
				seen["node without zone"]++
			}
			if _, ok := n.Labels[keyHost]; !ok {
				seen["node without hostname"]++
			}
			for _, tn := range n.Spec.Taints {
				seen["taint "+string(tn.Effect)]++
			}
		}
		for _, p := range c.pods {
			if p.DeletionTimestamp != nil {
				seen["terminating pod"]++
			}
			if p.Status.Phase == v1.PodSucceeded || p.Status.Phase == v1.PodFailed {
				seen["terminal pod"]++
			}
			seen["namespace "+p.Namespace]++
		}
		if len(c.pod.Spec.TopologySpreadConstraints) == 0 {
			seen["cluster defaults"]++
		}
		if len(c.pod.Spec.Tolerations) > 0 {
			seen["tolerations"]++
		}
		if c.pod.Spec.NodeSelector != nil {
			seen["nodeSelector"]++
		}
		if a := c.pod.Spec.Affinity; a != nil {
			for _, term := range a.NodeAffinity.RequiredDuringSchedulingIgnoredDuringExecution.NodeSelectorTerms {
				for _, e := range term.MatchExpressions {
					seen["affinity "+string(e.Operator)]++
				}
			}
		}
		for _, tsc := range c.pod.Spec.TopologySpreadConstraints {
			seen["key "+tsc.TopologyKey]++
			seen[fmt.Sprintf("maxSkew %d", tsc.MaxSkew)]++
			if tsc.MinDomains != nil {
				seen[fmt.Sprintf("minDomains %d", *tsc.MinDomains)]++
			}
			if tsc.NodeAffinityPolicy != nil {
				seen["nodeAffinityPolicy "+string(*tsc.NodeAffinityPolicy)]++
			}
			if tsc.NodeTaintsPolicy != nil {
				seen["nodeTaintsPolicy "+string(*tsc.NodeTaintsPolicy)]++
			}
			if len(tsc.MatchLabelKeys) > 0 {
				seen["matchLabelKeys"]++
				for _, k := range tsc.MatchLabelKeys {
					if selectorKeys(tsc.LabelSelector)[k] {
						seen["matchLabelKeys merged"]++
					}
				}
			}
			switch {
			case tsc.LabelSelector == nil:
				seen["nil selector"]++
			case len(tsc.LabelSelector.MatchLabels) == 0 && len(tsc.LabelSelector.MatchExpressions) == 0:
				seen["empty selector"]++
			default:
				sel, err := metav1.LabelSelectorAsSelector(tsc.LabelSelector)
				require.NoError(t, err, "seed %d: invalid selector %v", c.seed, tsc.LabelSelector)
				if sel.Matches(labels.Set(c.pod.Labels)) {
					seen["self-match"]++
				} else {
					seen["no self-match"]++
				}
			}
		}
		errs := topology.ValidateConstraints(c.pod)
		require.Empty(t, errs, "seed %d: generated an invalid pod: %v", c.seed, errs.ToAggregate())
	}
	want := []string{"node without zone", "node without hostname", "taint NoSchedule", "taint NoExecute",
		"taint PreferNoSchedule", "terminating pod", "terminal pod", "namespace default", "namespace team-a",
		"namespace team-b", "cluster defaults", "tolerations", "nodeSelector", "affinity In", "affinity NotIn",
		"affinity Exists", "affinity DoesNotExist", "key " + keyZone, "key " + keyHost, "key " + keyRack,
		"key " + keyAbsent, "maxSkew 1", "maxSkew 2", "maxSkew 3", "minDomains 1", "minDomains 4",
		"nodeAffinityPolicy Honor", "nodeAffinityPolicy Ignore", "nodeTaintsPolicy Honor", "nodeTaintsPolicy Ignore",
		"matchLabelKeys", "matchLabelKeys merged", "nil selector", "empty selector", "self-match", "no self-match"}
	for _, w := range want {
		assert.NotZero(t, seen[w], "2000 generated cases never produce %q", w)
	}
}

// plannerCase is a random cluster with node groups (zones that may have no
// node yet) and pending pods from a few workloads.
type plannerCase struct {
	seed    int64
	cfg     int
	nodes   []*v1.Node
	pods    []*v1.Pod
	groups  []*topology.Group
	groupOf map[string]string
	pending []*v1.Pod
}

func genPlannerCase(seed int64, nConfigs int) *plannerCase {
	r := rand.New(rand.NewSource(seed))
	c := &plannerCase{seed: seed, cfg: r.Intn(nConfigs), groupOf: map[string]string{}}
	c.nodes, c.pods = genCluster(r)
	for gi, z := range diffZones[:1+r.Intn(len(diffZones))] {
		name := fmt.Sprintf("group-%d", gi)
		l := map[string]string{keyZone: z}
		if r.Intn(8) == 0 {
			delete(l, keyZone) // the template lacks its zone...
		}
		if r.Intn(3) != 0 {
			l[keyRack] = fmt.Sprintf("rack-%d", r.Intn(3))
		}
		if r.Intn(4) != 0 {
			l[keyPool] = pick(r, diffPools...)
		}
		tmpl := &v1.Node{ObjectMeta: metav1.ObjectMeta{Name: name + "-template", Labels: l}}
		if r.Intn(5) == 0 {
			tmpl.Spec.Taints = []v1.Taint{diffTaints[r.Intn(len(diffTaints))]}
		}
		if _, ok := l[keyZone]; !ok && r.Intn(2) == 0 {
			tmpl = topology.ApplyDomainLabels(tmpl, map[string]string{keyZone: z}) // ...or declares it
		}
		size := 0
		for _, n := range c.nodes {
			if n.Labels[keyZone] == z && r.Intn(2) == 0 {
				c.groupOf[n.Name] = name
				size++
			}
		}
		c.groups = append(c.groups, &topology.Group{Name: name, Template: tmpl, Size: size, Min: 0, Max: size + 1 + r.Intn(4)})
	}
	for w := 1 + r.Intn(3); w > 0; w-- {
		proto := genIncoming(r, c.nodes, c.pods)
		rs := fmt.Sprintf("workload-%d", w)
		for k := 1 + r.Intn(4); k > 0; k-- {
			p := proto.DeepCopy()
			p.Name = fmt.Sprintf("%s-%d", rs, k)
			p.UID = types.UID(p.Name)
			if len(p.OwnerReferences) == 0 {
				p.OwnerReferences = []metav1.OwnerReference{{APIVersion: "apps/v1", Kind: "ReplicaSet", Name: rs,
					UID: types.UID(rs), Controller: ptr.To(true)}}
			}
			if r.Intn(6) == 0 {
				p.Labels = randPodLabels(r) // a replica whose labels drifted
			}
			c.pending = append(c.pending, p)
		}
	}
	return c
}

// TestDifferentialPlanner replays random scale-up plans through the real
// plugin: every placement, in queue order, must pass PodTopologySpread's
// Filter on the existing nodes plus the nodes planned so far, with the pods
// placed before it bound. That is the planner's promise.
func TestDifferentialPlanner(t *testing.T) {
	cfgs := diffConfigs(t)
	n := *diffCases / 10
	bad, placed, unplaced := 0, 0, 0
	for i := 0; i < n; i++ {
		c := genPlannerCase(*diffSeed+int64(i), len(cfgs))
		u, err := topology.NewUniverse(c.nodes, c.pods, c.groups, c.groupOf)
		require.NoError(t, err, "seed %d: NewUniverse", c.seed)
		cluster := &exCluster{}
		plan, err := topology.PlanScaleUp(topology.Request{Universe: u, Pending: c.pending,
			Defaults: cfgs[c.cfg].defaults, Cluster: cluster})
		require.NoError(t, err, "seed %d: PlanScaleUp", c.seed)
		placed += len(plan.Placements)
		unplaced += len(plan.Unplaced)
		if errs := checkPlan(t, cfgs[c.cfg].real, c.nodes, c.pods, plan); len(errs) > 0 {
			bad++
			if bad <= 5 {
				assert.Fail(t, fmt.Sprintf("seed %d (reproduce: go test ./topology/ -run 'TestDifferentialPlanner$' -seed=%d -cases=10): %s",
					c.seed, c.seed, strings.Join(errs, "; ")))
			}
		}
	}
	summary := fmt.Sprintf("planner differential: %d cases, %d with placements the scheduler rejects (%d placed, %d unplaced)",
		n, bad, placed, unplaced)
	t.Logf("%s", summary)
	fmt.Printf("%s\n", summary)
}
