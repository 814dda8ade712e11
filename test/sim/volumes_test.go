package sim_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// threeZones is groups ng-a, ng-b (one 2-CPU node each) and ng-c (size 0)
// in zones zone-a, zone-b, zone-c, and the WaitForFirstConsumer class
// "zonal" (allowedTopologies topologies, none: any zone).
func threeZones(topologies ...string) sim.Scenario {
	var s sim.Scenario
	s.NodeGroupOf = map[string]string{}
	for _, z := range []string{"a", "b", "c"} {
		labels := map[string]string{zoneKey: "zone-" + z}
		s.NodeGroups = append(s.NodeGroups, sim.NodeGroup{Name: "ng-" + z, MaxSize: 5, Template: sim.NewNode("tpl", 2000, 8*gib, labels)})
		if z != "c" {
			s.Nodes = append(s.Nodes, sim.NewNode("ng-"+z+"-1", 2000, 8*gib, labels))
			s.NodeGroupOf["ng-"+z+"-1"] = "ng-" + z
		}
	}
	wffc := storagev1.VolumeBindingWaitForFirstConsumer
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: "zonal"}, Provisioner: "ebs.csi.aws.com", VolumeBindingMode: &wffc}
	if len(topologies) > 0 {
		class.AllowedTopologies = []apiv1.TopologySelectorTerm{{MatchLabelExpressions: []apiv1.TopologySelectorLabelRequirement{{Key: zoneKey, Values: topologies}}}}
	}
	s.StorageClasses = []*storagev1.StorageClass{class}
	return s
}

// claim is a 10Gi ReadWriteOnce claim default/name of class "zonal",
// pre-bound to volume when it is not empty.
func claim(name, volume string) *apiv1.PersistentVolumeClaim {
	class := "zonal"
	return &apiv1.PersistentVolumeClaim{
		ObjectMeta: metav1.ObjectMeta{Namespace: "default", Name: name},
		Spec: apiv1.PersistentVolumeClaimSpec{
			AccessModes:      []apiv1.PersistentVolumeAccessMode{apiv1.ReadWriteOnce},
			StorageClassName: &class,
			VolumeName:       volume,
			Resources:        apiv1.VolumeResourceRequirements{Requests: apiv1.ResourceList{apiv1.ResourceStorage: resource.MustParse("10Gi")}},
		},
	}
}

// zonalVolume is a 10Gi PV of class "zonal" whose node affinity requires
// zone.
func zonalVolume(name, zone string) *apiv1.PersistentVolume {
	return &apiv1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: name},
		Spec: apiv1.PersistentVolumeSpec{
			Capacity:               apiv1.ResourceList{apiv1.ResourceStorage: resource.MustParse("10Gi")},
			AccessModes:            []apiv1.PersistentVolumeAccessMode{apiv1.ReadWriteOnce},
			StorageClassName:       "zonal",
			PersistentVolumeSource: apiv1.PersistentVolumeSource{CSI: &apiv1.CSIPersistentVolumeSource{Driver: "ebs.csi.aws.com", VolumeHandle: name}},
			NodeAffinity: &apiv1.VolumeNodeAffinity{Required: &apiv1.NodeSelector{NodeSelectorTerms: []apiv1.NodeSelectorTerm{{
				MatchExpressions: []apiv1.NodeSelectorRequirement{{Key: zoneKey, Operator: apiv1.NodeSelectorOpIn, Values: []string{zone}}},
			}}}},
		},
	}
}

// dbPod is a 500m pod default/name of app db using claim, spread over
// zones (maxSkew 1, DoNotSchedule).
func dbPod(name, claimName string) *apiv1.Pod {
	p := sim.NewPod("", name, 500, gib, map[string]string{"app": "db"})
	p.Spec.Volumes = []apiv1.Volume{{Name: "data", VolumeSource: apiv1.VolumeSource{PersistentVolumeClaim: &apiv1.PersistentVolumeClaimVolumeSource{ClaimName: claimName}}}}
	p.Spec.TopologySpreadConstraints = []apiv1.TopologySpreadConstraint{{MaxSkew: 1, TopologyKey: zoneKey, WhenUnsatisfiable: apiv1.DoNotSchedule,
		LabelSelector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "db"}}}}
	return p
}

// kubernetes/autoscaler#6000: replica db-2's claim is pre-bound to a PV
// whose node affinity requires zone-c, where the group is at 0; the
// existing nodes in zones a and b have room, but VolumeBinding admits only
// zone-c. Both CA and spreadscale scale ng-c up by one node, and the pod
// lands there; the other replicas' volumes keep them in their zones.
func TestPreBoundZonalVolumeScalesTheEmptyZone(t *testing.T) {
	s := threeZones()
	s.PersistentVolumes = []*apiv1.PersistentVolume{zonalVolume("pv-a", "zone-a"), zonalVolume("pv-b", "zone-b"), zonalVolume("pv-c", "zone-c")}
	s.PersistentVolumeClaims = []*apiv1.PersistentVolumeClaim{claim("data-db-0", "pv-a"), claim("data-db-1", "pv-b"), claim("data-db-2", "pv-c")}
	db0, db1 := dbPod("db-0", "data-db-0"), dbPod("db-1", "data-db-1")
	db0.Spec.NodeName, db1.Spec.NodeName = "ng-a-1", "ng-b-1"
	s.Pods = []*apiv1.Pod{db0, db1, dbPod("db-2", "data-db-2")}
	for _, spreadscale := range []bool{false, true} {
		res := run(t, s, scaleUpOnly(sim.Config{Spreadscale: spreadscale, Seed: 1}))
		assert.Equal(t, []string{"ng-c 0->1"}, scaleUpsPerLoop(res), "spreadscale=%v", spreadscale)
		require.Len(t, res.Pods, 1, "spreadscale=%v", spreadscale)
		assert.Equal(t, sim.Placement{Namespace: "default", Name: "db-2", Node: "ng-c-new-1", NodeGroup: "ng-c", Loop: 1, At: 10 * time.Second}, res.Pods[0], "spreadscale=%v", spreadscale)
		assert.Empty(t, res.Unschedulable)
	}
}

// A pod whose claim does not exist stays pending with VolumeBinding's
// reason and triggers no scale-up.
func TestMissingClaimKeepsThePodPending(t *testing.T) {
	s := threeZones()
	s.Pods = []*apiv1.Pod{dbPod("db-0", "data-db-0")}
	res := run(t, s, scaleUpOnly(sim.Config{Spreadscale: true, Seed: 1}))
	assert.Equal(t, []string{""}, scaleUpsPerLoop(res), "one loop, no scale-up")
	require.Len(t, res.Unschedulable, 1)
	assert.Contains(t, res.Unschedulable[0].Reason, `persistentvolumeclaim "data-db-0" not found`)
}

// Unbound WaitForFirstConsumer claims whose class allows zones b and c
// only: the pods never go to zone a (VolumeBinding), and each claim gets
// a PV provisioned in the zone its pod lands in.
func TestWaitForFirstConsumerClaimsBindWhereThePodLands(t *testing.T) {
	s := threeZones("zone-b", "zone-c")
	s.PersistentVolumeClaims = []*apiv1.PersistentVolumeClaim{claim("data-db-0", ""), claim("data-db-1", "")}
	s.Pods = []*apiv1.Pod{dbPod("db-0", "data-db-0"), dbPod("db-1", "data-db-1")}
	res := run(t, s, scaleUpOnly(sim.Config{Spreadscale: true, Seed: 1}))
	assert.Equal(t, []string{"ng-c 0->1"}, scaleUpsPerLoop(res))
	got := map[string]string{}
	for _, p := range res.Pods {
		got[p.Name] = p.Node
	}
	assert.Equal(t, map[string]string{"db-0": "ng-b-1", "db-1": "ng-c-new-1"}, got)
	require.Len(t, res.PersistentVolumes, 2)
	zones := map[string]string{}
	for _, pv := range res.PersistentVolumes {
		require.NotNil(t, pv.Spec.ClaimRef, pv.Name)
		zones[pv.Spec.ClaimRef.Name] = pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Values[0]
	}
	assert.Equal(t, map[string]string{"data-db-0": "zone-b", "data-db-1": "zone-c"}, zones)
}
