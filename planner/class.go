package planner

import (
	"crypto/sha256"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/labels"
	"k8s.io/apimachinery/pkg/types"

	"github.com/spreadscale/spreadscale/topology"
)

// class is the planner's equivalence class of pods (ClassOf).
type class struct {
	spread   *topology.Spread
	counts   *topology.Counts
	failed   map[string]bool // nodes where the Cluster rejected the class
	exemplar *v1.Pod         // the class's first pod
	placed   []placedPod
	err      error
	rank     []int // Request.Rank by groupState.rank (nil: Universe order)
	shares   *classShares
}

// groupRank is g's preference for the class's new nodes (lower first).
func (c *class) groupRank(g *groupState) int {
	if c.rank == nil {
		return g.rank
	}
	return c.rank[g.rank]
}

// ClassKey identifies a pod class: pods with the same key share their spread
// and scheduling requirements.
type ClassKey struct {
	Namespace string
	// ControllerUID and ControllerName identify the pod's controller.
	ControllerUID  types.UID
	ControllerName string
	// Labels are the pod's labels in canonical form,
	// labels.Set(pod.Labels).String() (sorted key=value pairs).
	Labels string
	// Spec is set only without a controller: the SHA-256 of the spec's
	// protobuf encoding, or the pod's name and UID when it cannot be encoded.
	Spec string
}

// ClassOf groups pods as CA's equivalence groups do: namespace, controller
// and labels; without a controller, namespace, labels and spec.
func ClassOf(pod *v1.Pod) ClassKey {
	ref := metav1.GetControllerOfNoCopy(pod)
	if ref == nil {
		b, err := pod.Spec.Marshal()
		if err != nil {
			return ClassKey{Namespace: pod.Namespace, Spec: "unencodable " + pod.Name + " " + string(pod.UID)}
		}
		digest := sha256.Sum256(b)
		return ClassKey{Namespace: pod.Namespace, Labels: labels.Set(pod.Labels).String(), Spec: string(digest[:])}
	}
	return ClassKey{
		Namespace:      pod.Namespace,
		ControllerUID:  ref.UID,
		ControllerName: ref.Name,
		Labels:         labels.Set(pod.Labels).String(),
	}
}

func (p *planner) classOf(pod *v1.Pod) *class {
	key := p.facts.ClassKey(pod)
	if c, ok := p.classes[key]; ok {
		return c
	}
	c := &class{failed: map[string]bool{}, exemplar: pod}
	p.classes[key] = c
	p.classList = append(p.classList, c)
	if p.req.Rank != nil {
		c.rank = p.memo.rankOf(p.req.Rank(pod), p.groups)
	}
	s, err := topology.NewSpread(pod, p.req.Defaults)
	if err != nil {
		c.err = err
		return c
	}
	c.spread = s
	sig := topology.SignatureOf(s)
	if c.counts = p.counts[sig]; c.counts == nil {
		c.counts = p.newCounts(s, sig)
	}
	return c
}
