package topology_test

import (
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/utils/ptr"

	"github.com/spreadscale/spreadscale/topology"
)

// Random clusters and pods of the differential tests.

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
