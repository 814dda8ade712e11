package planner

import (
	"maps"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	v1 "k8s.io/api/core/v1"
)

// TestCountsStayEqualToARecount plans random scenarios and checks that
// every Counts the planner kept current — those created before any pod was
// placed and those created mid-pass from the classes' placements — equals
// a recount from scratch: the universe's pods, every planned node with its
// pods, and the pods placed on existing nodes, with the new-hostname
// offers of the groups the plan can still grow.
func TestCountsStayEqualToARecount(t *testing.T) {
	var checked, midPass int
	for seed := int64(1); seed <= 60; seed++ {
		p := firstRound(t, seed)

		onExisting := map[string][]*v1.Pod{}
		for _, pl := range p.plan.Placements {
			if !pl.NewNode {
				onExisting[pl.Node] = append(onExisting[pl.Node], pl.Pod)
			}
		}
		for i, cnt := range p.countList {
			want := p.u.Count(cnt.Spread())
			for name, pods := range onExisting {
				for _, pod := range pods {
					want.AddPod(pod, p.u.Node(name))
				}
			}
			for _, pn := range p.planned {
				want.AddNode(pn.topo)
			}
			p.withdrawOffers(want)
			for c := range cnt.Spread().Hard {
				assert.Equal(t, maps.Collect(want.DomainCounts(c)), maps.Collect(cnt.DomainCounts(c)), "seed %d counts %d constraint %d", seed, i, c)
				assert.Equal(t, want.MinMatchNum(c), cnt.MinMatchNum(c), "seed %d counts %d constraint %d: global minimum", seed, i, c)
			}
			checked++
			if cnt.Spread().Pod.Labels["rev"] == "2" {
				midPass++
			}
		}
	}
	t.Logf("%d Counts checked, %d of them for a rollout's second ReplicaSet", checked, midPass)
	require.Positive(t, midPass)
}

// firstRound is the planner after one round on generated scenario seed
// with a rollout (withRollout).
func firstRound(t *testing.T, seed int64) *planner {
	t.Helper()
	req := withRollout(stScenario(t, seed))
	p := newPlanner(req)
	queue := append([]*v1.Pod(nil), req.Pending...)
	SortQueueOrder(queue)
	require.NoError(t, p.run(queue, nil))
	return p
}

// withRollout adds to req, after every other pending pod in queue order, a
// second ReplicaSet of each Deployment: the same app label (so the first
// ReplicaSet's placed pods count for its spread) with a looser zone skew
// (another spread signature, so its Counts is created mid-pass).
func withRollout(req Request) Request {
	var second []*v1.Pod
	for _, pod := range req.Pending {
		if len(pod.Spec.TopologySpreadConstraints) == 0 || pod.Labels["rev"] != "" {
			continue
		}
		cp := pod.DeepCopy()
		cp.Name, cp.UID = "rev2-"+pod.Name, "rev2-"+pod.UID
		cp.Labels["rev"] = "2"
		cp.OwnerReferences[0].Name, cp.OwnerReferences[0].UID = "rev2-"+pod.OwnerReferences[0].Name, "rev2-"+pod.OwnerReferences[0].UID
		cp.CreationTimestamp.Time = cp.CreationTimestamp.Add(time.Hour)
		for i := range cp.Spec.TopologySpreadConstraints {
			cp.Spec.TopologySpreadConstraints[i].MaxSkew++
		}
		second = append(second, cp)
	}
	req.Pending = append(append([]*v1.Pod(nil), req.Pending...), second...)
	return req
}
