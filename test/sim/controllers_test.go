package sim_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// Pods CA's drain evicts come back pending from their controllers: a
// ReplicaSet's under a new name with its generateName prefix, a
// StatefulSet's under the same name (a new uid); both run again on the
// remaining node. The run is reproducible.
func TestScaleDownEvictedPodsRecreated(t *testing.T) {
	s := downScenario([]string{"a"}, []downNode{{zone: "a", filler: 1200}, {zone: "a"}}, webSpread(zoneKey, nil))
	web := ownedPod("web-abcde", "ReplicaSet", "web", 100, map[string]string{"app": "web"})
	web.GenerateName = "web-"
	db := ownedPod("db-0", "StatefulSet", "db", 100, map[string]string{"app": "db"})
	for _, p := range []*apiv1.Pod{web, db} {
		p.Spec.NodeName = "ng-a-1"
		s.Pods = append(s.Pods, p)
	}

	res := run(t, s, downConfig(false))
	t.Log(downSummary(res))
	require.Equal(t, []string{"5 ng-a-1"}, removals(res))
	assert.Equal(t, []string{"default/db-0", "default/web-abcde"}, res.Loops[4].EvictedPods)
	assert.Equal(t, []sim.GroupSize{{Name: "ng-a", From: 2, To: 1}}, res.NodeGroups)
	assert.Len(t, res.Nodes, 1)

	byName := map[string]*apiv1.Pod{}
	var webs []string
	for _, p := range res.BoundPods {
		byName[p.Name] = p
		if p.Labels["app"] == "web" {
			webs = append(webs, p.Name)
		}
	}
	require.Len(t, webs, 1, "one web replica")
	assert.NotEqual(t, "web-abcde", webs[0], "a ReplicaSet's pod comes back under a new name")
	assert.True(t, strings.HasPrefix(webs[0], "web-") && len(webs[0]) == len("web-abcde"), "new name %q: generateName plus 5 characters", webs[0])
	if assert.Contains(t, byName, "db-0", "a StatefulSet's pod keeps its name") {
		assert.NotEqual(t, db.UID, byName["db-0"].UID, "the recreated pod is a new object")
		assert.Equal(t, "ng-a-0", byName["db-0"].Spec.NodeName)
	}
	assert.Equal(t, "ng-a-0", byName[webs[0]].Spec.NodeName)
	recreated := map[string]int{}
	for _, p := range res.Pods {
		recreated[p.Name] = p.Loop
	}
	assert.Equal(t, map[string]int{"db-0": 5, webs[0]: 5}, recreated, "placements of the recreated pods, in the removal's loop")

	again := run(t, s, downConfig(false))
	assert.Equal(t, res.Loops, again.Loops, "same loops on a second run")
	assert.Equal(t, res.Pods, again.Pods, "same placements on a second run")
}
