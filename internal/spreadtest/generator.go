package spreadtest

import (
	"fmt"
	"math/rand"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// Random clusters and pods of the differential tests, built from a
// *rand.Rand so that a seed reproduces a case.

// Label keys of the tests' nodes: the well-known zone and hostname keys,
// and those the random nodes carry besides.
const (
	KeyZone   = v1.LabelTopologyZone
	KeyHost   = v1.LabelHostname
	KeyRack   = "example.com/rack"
	KeyPool   = "example.com/pool"
	KeyAbsent = "example.com/absent" // no node carries it
)

// Pick returns one of xs at random.
func Pick[T any](r *rand.Rand, xs ...T) T { return xs[r.Intn(len(xs))] }

// The values the random objects draw from.
var (
	Zones      = []string{"zone-a", "zone-b", "zone-c", "zone-d"}
	Pools      = []string{"pool-x", "pool-y", "pool-z"}
	Namespaces = []string{"default", "default", "default", "default", "default", "default", "default", "team-a", "team-a", "team-b"}
	Taints     = []v1.Taint{
		{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectNoExecute},
		{Key: "dedicated", Value: "batch", Effect: v1.TaintEffectNoSchedule},
		{Key: "spot", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Value: "infra", Effect: v1.TaintEffectPreferNoSchedule},
		{Key: "gpu", Effect: v1.TaintEffectPreferNoSchedule},
	}
	Tolerations = []v1.Toleration{
		{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "infra", Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Operator: v1.TolerationOpExists},
		{Key: "spot", Operator: v1.TolerationOpExists, Effect: v1.TaintEffectNoSchedule},
		{Key: "dedicated", Operator: v1.TolerationOpEqual, Value: "batch", Effect: v1.TaintEffectNoExecute},
		{Operator: v1.TolerationOpExists},
	}
)

// RandomPodLabels returns labels drawn from app, tier, version and
// pod-template-hash.
func RandomPodLabels(r *rand.Rand) map[string]string {
	l := map[string]string{}
	if r.Intn(10) != 0 {
		l["app"] = Pick(r, "web", "web", "web", "web", "db", "cache")
	}
	if r.Intn(5) < 2 {
		l["tier"] = Pick(r, "front", "back")
	}
	if r.Intn(5) < 2 {
		l["version"] = Pick(r, "v1", "v2")
	}
	if r.Intn(5) < 2 {
		l["pod-template-hash"] = Pick(r, "h1", "h2")
	}
	return l
}

// RandomCluster returns nodes in one to four zones, with or without zone,
// hostname, rack and pool labels and taints, and pods bound to them (some
// terminal, pending, terminating, or on a node that is gone).
func RandomCluster(r *rand.Rand) ([]*v1.Node, []*v1.Pod) {
	var nodes []*v1.Node
	load := map[string]int{} // pods per node in a zone: 0..load-1
	for zi, z := range Zones[:1+r.Intn(len(Zones))] {
		hosts := r.Intn(4)
		zoneLoad := Pick(r, 1, 5, 10)
		if zi == 0 && hosts == 0 {
			hosts = 1
		}
		for h := 0; h < hosts; h++ {
			name := fmt.Sprintf("node-%d", len(nodes))
			l := map[string]string{}
			switch r.Intn(16) {
			case 0: // no zone label
			case 1:
				l[v1.LabelTopologyZone] = "" // present, empty value
			default:
				l[v1.LabelTopologyZone] = z
			}
			switch r.Intn(16) {
			case 0: // no hostname label
			case 1:
				l[v1.LabelHostname] = "node-0" // shares a hostname domain
			default:
				l[v1.LabelHostname] = name
			}
			if r.Intn(3) != 0 {
				l[KeyRack] = fmt.Sprintf("rack-%d", r.Intn(3))
			}
			if r.Intn(4) != 0 {
				l[KeyPool] = Pick(r, Pools...)
			}
			n := MakeNode().Name(name).Labels(l)
			if r.Intn(3) == 0 {
				for k := 1 + r.Intn(2); k > 0; k-- {
					n.Taints(Taints[r.Intn(len(Taints))])
				}
			}
			nodes = append(nodes, n.Obj())
			load[name] = zoneLoad
		}
	}
	var pods []*v1.Pod
	// Most clusters run one main workload whose replicas are most pods.
	main := RandomPodLabels(r)
	mainShare := Pick(r, 0, 2, 3)
	addPod := func(nodeName string) {
		ns, l := Pick(r, Namespaces...), RandomPodLabels(r)
		if r.Intn(4) < mainShare {
			ns, l = "default", map[string]string{}
			for k, v := range main {
				l[k] = v
			}
		}
		p := MakePod().Name(fmt.Sprintf("pod-%d", len(pods))).UID(fmt.Sprintf("uid-%d", len(pods))).Namespace(ns).
			Labels(l).Node(nodeName).Phase(v1.PodRunning)
		switch r.Intn(25) {
		case 0:
			p.Phase(v1.PodSucceeded)
		case 1:
			p.Phase(v1.PodFailed)
		case 2:
			p.Phase(v1.PodPending)
		}
		if r.Intn(12) == 0 {
			p.Deleted(time.Unix(1700000000, 0))
		}
		pods = append(pods, p.Obj())
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

// randomSelector returns a labelSelector for a constraint of a pod with
// labels pl.
func randomSelector(r *rand.Rand, pl map[string]string) *metav1.LabelSelector {
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
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": Pick(r, "web", "db", "cache")}}
	case 5:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpIn, Values: []string{Pick(r, "web", "db"), Pick(r, "cache", "web")}}}}
	case 6:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "tier", Operator: metav1.LabelSelectorOpNotIn, Values: []string{Pick(r, "front", "back")}}}}
	case 7:
		return &metav1.LabelSelector{MatchExpressions: []metav1.LabelSelectorRequirement{
			{Key: "app", Operator: metav1.LabelSelectorOpExists},
			{Key: "tier", Operator: metav1.LabelSelectorOpDoesNotExist}}}
	case 8:
		return &metav1.LabelSelector{MatchLabels: map[string]string{"app": Pick(r, "web", "db"), "tier": Pick(r, "front", "back")}}
	default: // one of the pod's own labels
		for _, k := range []string{"tier", "app"} {
			if v, ok := pl[k]; ok {
				return &metav1.LabelSelector{MatchLabels: map[string]string{k: v}}
			}
		}
		return &metav1.LabelSelector{MatchLabels: map[string]string{"tier": "front"}}
	}
}

// SelectorKeys returns the label keys a selector mentions.
func SelectorKeys(ls *metav1.LabelSelector) map[string]bool {
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

// randomPolicy returns a node inclusion policy, "" for unset.
func randomPolicy(r *rand.Rand) v1.NodeInclusionPolicy {
	switch r.Intn(3) {
	case 0:
		return ""
	case 1:
		return v1.NodeInclusionPolicyHonor
	default:
		return v1.NodeInclusionPolicyIgnore
	}
}

func randomConstraints(r *rand.Rand, pl map[string]string) []v1.TopologySpreadConstraint {
	var cs []v1.TopologySpreadConstraint
	used := map[string]bool{}
	for want := 1 + r.Intn(3); len(cs) < want; {
		key := v1.LabelTopologyZone
		switch k := r.Intn(20); {
		case k < 8:
		case k < 15:
			key = v1.LabelHostname
		case k < 19:
			key = KeyRack
		default:
			key = KeyAbsent
		}
		action := v1.DoNotSchedule
		if r.Intn(4) == 0 {
			action = v1.ScheduleAnyway
		}
		if used[key+"/"+string(action)] {
			continue
		}
		used[key+"/"+string(action)] = true
		w := MakeSpread(key, Pick[int32](r, 1, 1, 1, 2, 2, 3)).When(action).Selector(randomSelector(r, pl)).
			NodeAffinityPolicy(randomPolicy(r)).NodeTaintsPolicy(randomPolicy(r))
		if action == v1.DoNotSchedule && r.Intn(5) < 2 {
			w.MinDomains(int32(1 + r.Intn(4)))
		}
		c := w.Obj()
		if c.LabelSelector != nil && r.Intn(3) == 0 {
			inSel := SelectorKeys(c.LabelSelector)
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

func randomAffinity(r *rand.Rand, nodes []*v1.Node) *v1.Affinity {
	var terms []v1.NodeSelectorTerm
	for t := 1 + r.Intn(2); t > 0; t-- {
		var term v1.NodeSelectorTerm
		for e := 1 + r.Intn(2); e > 0; e-- {
			switch r.Intn(7) {
			case 0, 1:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpIn, Values: []string{Pick(r, Zones...), Pick(r, Zones...)}})
			case 2:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: v1.LabelTopologyZone, Operator: v1.NodeSelectorOpNotIn, Values: []string{Pick(r, Zones...)}})
			case 3:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: KeyPool, Operator: v1.NodeSelectorOpExists})
			case 4:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: KeyPool, Operator: v1.NodeSelectorOpDoesNotExist})
			case 5:
				term.MatchExpressions = append(term.MatchExpressions, v1.NodeSelectorRequirement{
					Key: KeyRack, Operator: v1.NodeSelectorOpIn, Values: []string{fmt.Sprintf("rack-%d", r.Intn(3))}})
			default:
				term.MatchFields = append(term.MatchFields, v1.NodeSelectorRequirement{
					Key: metav1.ObjectNameField, Operator: v1.NodeSelectorOpNotIn, Values: []string{Pick(r, nodes...).Name}})
			}
		}
		terms = append(terms, term)
	}
	return &v1.Affinity{NodeAffinity: &v1.NodeAffinity{
		RequiredDuringSchedulingIgnoredDuringExecution: &v1.NodeSelector{NodeSelectorTerms: terms}}}
}

// RandomIncoming returns a pod to schedule: labels of its own or of a twin
// among pods, random constraints (or none, for the defaults), and sometimes
// a nodeSelector, node affinity and tolerations.
func RandomIncoming(r *rand.Rand, nodes []*v1.Node, pods []*v1.Pod) *v1.Pod {
	pl, ns := RandomPodLabels(r), Pick(r, Namespaces...)
	if len(pods) > 0 && r.Intn(2) == 0 {
		// Another replica of an existing pod.
		twin := pods[r.Intn(len(pods))]
		pl, ns = map[string]string{}, twin.Namespace
		for k, v := range twin.Labels {
			pl[k] = v
		}
	}
	p := MakePod().Name("incoming").UID("incoming-uid").Namespace(ns).Labels(pl)
	if r.Intn(8) == 0 {
		// No constraints of its own: the configuration's defaults apply,
		// with the selector derived from its controller and Services.
		switch r.Intn(4) {
		case 0:
			p.Owner("ReplicaSet", Pick(r, "rs-web", "rs-db", "rs-missing"), "rs")
		case 1:
			p.Owner("StatefulSet", "ss-cache", "ss")
		}
	} else {
		p.Spread(randomConstraints(r, pl)...)
	}
	if r.Intn(5) == 0 {
		p.NodeSelector(map[string]string{KeyPool: Pick(r, Pools...)})
	}
	if r.Intn(10) < 3 {
		p.Affinity(randomAffinity(r, nodes))
	}
	if r.Intn(5) < 2 {
		for k := 1 + r.Intn(2); k > 0; k-- {
			p.Tolerations(Tolerations[r.Intn(len(Tolerations)-1)])
		}
		if r.Intn(20) == 0 {
			p.Tolerations(Tolerations[len(Tolerations)-1])
		}
	}
	return p.Obj()
}
