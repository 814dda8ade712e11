package topology_test

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"

	"github.com/spreadscale/spreadscale/internal/spreadtest"
	"github.com/spreadscale/spreadscale/topology"
)

// Random cases of the differential test: a cluster and an incoming pod
// from spreadtest's generator, and which nodes and pods the engine adds
// incrementally.

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

// genCase draws case seed for one of nConfigs configurations.
func genCase(seed int64, nConfigs int) *diffCase {
	r := rand.New(rand.NewSource(seed))
	c := &diffCase{seed: seed, cfg: r.Intn(nConfigs), later: map[string]bool{}}
	c.nodes, c.pods = spreadtest.RandomCluster(r)
	c.pod = spreadtest.RandomIncoming(r, c.nodes, c.pods)
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
					if spreadtest.SelectorKeys(tsc.LabelSelector)[k] {
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
