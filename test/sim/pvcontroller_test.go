package sim_test

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiv1 "k8s.io/api/core/v1"
	storagev1 "k8s.io/api/storage/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/spreadscale/spreadscale/test/sim"
)

// storageClass is a class of provisioner binding in mode, limited to the
// zones given (any zone when none is).
func storageClass(name, provisioner string, mode storagev1.VolumeBindingMode, zones ...string) *storagev1.StorageClass {
	class := &storagev1.StorageClass{ObjectMeta: metav1.ObjectMeta{Name: name}, Provisioner: provisioner, VolumeBindingMode: &mode}
	if len(zones) > 0 {
		class.AllowedTopologies = []apiv1.TopologySelectorTerm{{MatchLabelExpressions: []apiv1.TopologySelectorLabelRequirement{{Key: zoneKey, Values: zones}}}}
	}
	return class
}

// classClaim is a 10Gi ReadWriteOnce claim default/name of class.
func classClaim(name, class string) *apiv1.PersistentVolumeClaim {
	c := claim(name, "")
	c.Spec.StorageClassName = &class
	return c
}

// staticVolume is a PV of class and size whose node affinity requires
// key=value.
func staticVolume(name, class, size, key, value string) *apiv1.PersistentVolume {
	pv := zonalVolume(name, value)
	pv.Spec.StorageClassName = class
	pv.Spec.Capacity = apiv1.ResourceList{apiv1.ResourceStorage: resource.MustParse(size)}
	pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions[0].Key = key
	return pv
}

// claimPod is a 500m pod default/name of app db using claim, without
// spread constraints.
func claimPod(name, claimName string) *apiv1.Pod {
	p := dbPod(name, claimName)
	p.Spec.TopologySpreadConstraints = nil
	return p
}

// boundVolumes maps each claim bound at the end to its PV's name.
func boundVolumes(res *sim.Result) map[string]string {
	out := map[string]string{}
	for _, pv := range res.PersistentVolumes {
		if pv.Spec.ClaimRef != nil {
			out[pv.Spec.ClaimRef.Name] = pv.Name
		}
	}
	return out
}

// volumeZone is the zone a PV's node affinity requires ("" when none).
func volumeZone(pv *apiv1.PersistentVolume) string {
	if pv.Spec.NodeAffinity == nil || pv.Spec.NodeAffinity.Required == nil {
		return ""
	}
	for _, e := range pv.Spec.NodeAffinity.Required.NodeSelectorTerms[0].MatchExpressions {
		if e.Key == zoneKey {
			return e.Values[0]
		}
	}
	return ""
}

// Immediate claims are bound by the PV controller before any pod
// schedules, each to the smallest available static PV that matches it:
// data-0 to the 10Gi one in zone-c rather than the 20Gi one in zone-a,
// data-1 to the 20Gi one, the other being taken. solo then needs zone-c,
// whose group is at 0, second goes to zone-a's node, and nothing is
// provisioned.
func TestImmediateClaimBindsTheSmallestMatchingStaticVolume(t *testing.T) {
	for _, spreadscale := range []bool{false, true} {
		s := threeZones()
		s.StorageClasses = append(s.StorageClasses, storageClass("fast", "ebs.csi.aws.com", storagev1.VolumeBindingImmediate))
		s.PersistentVolumes = []*apiv1.PersistentVolume{
			staticVolume("pv-a-20", "fast", "20Gi", zoneKey, "zone-a"),
			staticVolume("pv-c-10", "fast", "10Gi", zoneKey, "zone-c"),
		}
		s.PersistentVolumeClaims = []*apiv1.PersistentVolumeClaim{classClaim("data-0", "fast"), classClaim("data-1", "fast")}
		s.Pods = []*apiv1.Pod{claimPod("solo", "data-0"), claimPod("second", "data-1")}
		res := run(t, s, scaleUpOnly(sim.Config{Spreadscale: spreadscale, Seed: 1}))
		assert.Equal(t, map[string]string{"data-0": "pv-c-10", "data-1": "pv-a-20"}, boundVolumes(res), "spreadscale=%v", spreadscale)
		assert.Len(t, res.PersistentVolumes, 2, "spreadscale=%v: nothing provisioned", spreadscale)
		assert.Equal(t, []string{"ng-c 0->1"}, scaleUpsPerLoop(res), "spreadscale=%v", spreadscale)
		groups := map[string]string{}
		for _, p := range res.Pods {
			groups[p.Name] = p.NodeGroup
		}
		assert.Equal(t, map[string]string{"solo": "ng-c", "second": "ng-a"}, groups, "spreadscale=%v", spreadscale)
		assert.Empty(t, res.Unschedulable, "spreadscale=%v", spreadscale)
	}
}

// Immediate claims without a matching PV are provisioned at once, each in
// one zone the class allows (or, with no allowedTopologies, a zone that has
// nodes), a StatefulSet's claims going round the zones; every pod then
// lands in its volume's zone.
func TestImmediateClaimsAreProvisionedBeforeTheirPods(t *testing.T) {
	cases := []struct {
		name      string
		zones     []string
		wantZones int
		wantUps   []string
	}{
		{name: "class allows three zones", zones: []string{"zone-a", "zone-b", "zone-c"}, wantZones: 3, wantUps: []string{"ng-c 0->1"}},
		{name: "class allows any zone: the zones with nodes", wantZones: 2},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := threeZones()
			s.StorageClasses = append(s.StorageClasses, storageClass("fast", "ebs.csi.aws.com", storagev1.VolumeBindingImmediate, c.zones...))
			for _, name := range []string{"db-0", "db-1", "db-2"} {
				s.PersistentVolumeClaims = append(s.PersistentVolumeClaims, classClaim("data-"+name, "fast"))
				s.Pods = append(s.Pods, claimPod(name, "data-"+name))
			}
			res := run(t, s, scaleUpOnly(sim.Config{Spreadscale: true, Seed: 1}))
			require.Len(t, res.PersistentVolumes, 3, "one PV per claim")
			zoneOfClaim := map[string]string{}
			zones := map[string]bool{}
			for _, pv := range res.PersistentVolumes {
				require.NotNil(t, pv.Spec.ClaimRef, "PV %s is not bound", pv.Name)
				zone := volumeZone(pv)
				require.NotEmpty(t, zone, "PV %s has no zone", pv.Name)
				zoneOfClaim[pv.Spec.ClaimRef.Name] = zone
				zones[zone] = true
			}
			assert.Len(t, zones, c.wantZones, "zones of the volumes %v", zoneOfClaim)
			if len(c.zones) == 0 {
				assert.NotContains(t, zones, "zone-c", "zone-c has no node: %v", zoneOfClaim)
			}
			nodeZone := map[string]string{}
			for _, n := range res.Nodes {
				nodeZone[n.Name] = n.Labels[zoneKey]
			}
			require.Len(t, res.BoundPods, 3, summary(res))
			for _, p := range res.BoundPods {
				assert.Equal(t, zoneOfClaim["data-"+p.Name], nodeZone[p.Spec.NodeName], "pod %s on %s", p.Name, p.Spec.NodeName)
			}
			var ups []string
			for _, u := range scaleUpsPerLoop(res) {
				if u != "" {
					ups = append(ups, u)
				}
			}
			assert.Equal(t, c.wantUps, ups)
		})
	}
}

// A WaitForFirstConsumer claim whose pod lands where a static PV matches it
// binds to that PV, as the scheduler's binder does before it would
// provision: no new PV is created. Both for a provisioning class that
// allows zone-b only and for local volumes (no provisioner) pinned to a
// node.
func TestWaitForFirstConsumerClaimBindsTheMatchingStaticVolume(t *testing.T) {
	cases := []struct {
		name     string
		class    *storagev1.StorageClass
		volume   *apiv1.PersistentVolume
		wantNode string
	}{
		{
			name:     "zonal class allowing zone-b",
			class:    storageClass("zonal", "ebs.csi.aws.com", storagev1.VolumeBindingWaitForFirstConsumer, "zone-b"),
			volume:   staticVolume("pv-b", "zonal", "10Gi", zoneKey, "zone-b"),
			wantNode: "ng-b-1",
		},
		{
			name:     "local volume without provisioner",
			class:    storageClass("zonal", "kubernetes.io/no-provisioner", storagev1.VolumeBindingWaitForFirstConsumer),
			volume:   staticVolume("local-a", "zonal", "10Gi", apiv1.LabelHostname, "ng-a-1"),
			wantNode: "ng-a-1",
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			s := threeZones()
			s.StorageClasses = []*storagev1.StorageClass{c.class}
			s.PersistentVolumes = []*apiv1.PersistentVolume{c.volume}
			s.PersistentVolumeClaims = []*apiv1.PersistentVolumeClaim{classClaim("data-0", "zonal")}
			s.Pods = []*apiv1.Pod{claimPod("solo", "data-0")}
			res := run(t, s, scaleUpOnly(sim.Config{Spreadscale: true, Seed: 1}))
			require.Len(t, res.BoundPods, 1, summary(res))
			assert.Equal(t, c.wantNode, res.BoundPods[0].Spec.NodeName)
			assert.Equal(t, map[string]string{"data-0": c.volume.Name}, boundVolumes(res))
			assert.Len(t, res.PersistentVolumes, 1, "no PV provisioned")
		})
	}
}
