package processors

import (
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
	"k8s.io/component-helpers/storage/volume"
)

const (
	ebsKey = "topology.ebs.csi.aws.com/zone"
	gkeKey = "topology.gke.io/zone"
)

// fixedTemplates is a TemplateNodeInfoProvider returning the same
// templates every loop, as a cloud provider's group templates.
type fixedTemplates map[string]*framework.NodeInfo

func (f fixedTemplates) Process(*context.AutoscalingContext, []*apiv1.Node, []*appsv1.DaemonSet, taints.TaintConfig, time.Time) (map[string]*framework.NodeInfo, errors.AutoscalerError) {
	return f, nil
}
func (fixedTemplates) CleanUp() {}

func template(name string, labels map[string]string) *framework.NodeInfo {
	return framework.NewNodeInfo(&apiv1.Node{ObjectMeta: metav1.ObjectMeta{Name: name, Labels: labels}}, nil)
}

// csiVolume is a CSI PersistentVolume whose node affinity requires key=zone,
// as the EBS or GCE PD driver provisions it.
func csiVolume(key, zone string) *apiv1.PersistentVolume {
	return &apiv1.PersistentVolume{
		ObjectMeta: metav1.ObjectMeta{Name: "pv-" + zone},
		Spec: apiv1.PersistentVolumeSpec{NodeAffinity: &apiv1.VolumeNodeAffinity{Required: &apiv1.NodeSelector{
			NodeSelectorTerms: []apiv1.NodeSelectorTerm{{MatchExpressions: []apiv1.NodeSelectorRequirement{
				{Key: key, Operator: apiv1.NodeSelectorOpIn, Values: []string{zone}},
			}}},
		}}},
	}
}

// TestCSIZoneKeysLetZonalVolumesFitTemplates checks each processed template
// with the scheduler's VolumeBinding node affinity check
// (volume.CheckNodeAffinity): a volume pinned by a CSI key fits the template
// of its zone's group once the key is derived, and the wrapped provider's
// templates stay as they were.
func TestCSIZoneKeysLetZonalVolumesFitTemplates(t *testing.T) {
	cases := []struct {
		name   string
		keys   []string
		labels map[string]string
		// want are the labels the processed template must carry.
		want map[string]string
		// fits and misses are volumes that must and must not fit it.
		fits, misses []*apiv1.PersistentVolume
	}{
		{
			name:   "group at 0 without the driver's key",
			keys:   []string{ebsKey},
			labels: map[string]string{apiv1.LabelTopologyZone: "zone-c"},
			want:   map[string]string{apiv1.LabelTopologyZone: "zone-c", ebsKey: "zone-c"},
			fits:   []*apiv1.PersistentVolume{csiVolume(ebsKey, "zone-c"), csiVolume(apiv1.LabelTopologyZone, "zone-c")},
			misses: []*apiv1.PersistentVolume{csiVolume(ebsKey, "zone-a"), csiVolume(gkeKey, "zone-c")},
		},
		{
			name:   "two drivers listed",
			keys:   []string{ebsKey, gkeKey},
			labels: map[string]string{apiv1.LabelTopologyZone: "zone-b"},
			want:   map[string]string{apiv1.LabelTopologyZone: "zone-b", ebsKey: "zone-b", gkeKey: "zone-b"},
			fits:   []*apiv1.PersistentVolume{csiVolume(ebsKey, "zone-b"), csiVolume(gkeKey, "zone-b")},
		},
		{
			name:   "the template already has the key",
			keys:   []string{ebsKey, gkeKey},
			labels: map[string]string{apiv1.LabelTopologyZone: "zone-b", ebsKey: "us-east-1b"},
			want:   map[string]string{apiv1.LabelTopologyZone: "zone-b", ebsKey: "us-east-1b", gkeKey: "zone-b"},
			fits:   []*apiv1.PersistentVolume{csiVolume(ebsKey, "us-east-1b")},
			misses: []*apiv1.PersistentVolume{csiVolume(ebsKey, "zone-b")},
		},
		{
			name:   "a template without a zone",
			keys:   []string{ebsKey},
			labels: map[string]string{apiv1.LabelHostname: "t"},
			want:   map[string]string{apiv1.LabelHostname: "t"},
			misses: []*apiv1.PersistentVolume{csiVolume(ebsKey, "zone-a")},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			raw := template("ng", c.labels)
			rawLabels := map[string]string{}
			for k, v := range c.labels {
				rawLabels[k] = v
			}
			p := &CSIZoneKeys{Inner: fixedTemplates{"ng": raw}, Keys: c.keys}
			infos, err := p.Process(nil, nil, nil, taints.TaintConfig{}, time.Time{})
			require.Nil(t, err)
			require.Contains(t, infos, "ng")
			node := infos["ng"].Node()
			assert.Equal(t, c.want, node.Labels)
			assert.Equal(t, rawLabels, raw.Node().Labels, "the wrapped provider's template was modified")
			for _, pv := range c.fits {
				assert.NoError(t, volume.CheckNodeAffinity(pv, node.Labels), "volume %v should fit", pv.Spec.NodeAffinity.Required)
			}
			for _, pv := range c.misses {
				assert.Error(t, volume.CheckNodeAffinity(pv, node.Labels), "volume %v should not fit", pv.Spec.NodeAffinity.Required)
			}
		})
	}
}

// TestCSIZoneKeysFollowTheDeclaredZone: around declared domains (as
// spreadscale installs them), the key takes the declared zone, not the
// one the provider's template states, and a key a group declares wins.
func TestCSIZoneKeysFollowTheDeclaredZone(t *testing.T) {
	inner := fixedTemplates{
		"multi-az-b": template("multi-az-b", map[string]string{apiv1.LabelTopologyZone: "us-east-1a"}),
		"declares":   template("declares", map[string]string{apiv1.LabelTopologyZone: "us-east-1c"}),
	}
	declared := &DeclaredDomains{Inner: inner, Labels: map[string]map[string]string{
		"multi-az-b": {apiv1.LabelTopologyZone: "us-east-1b"},
		"declares":   {ebsKey: "use1-az3"},
	}}
	infos, err := (&CSIZoneKeys{Inner: declared, Keys: []string{ebsKey}}).Process(nil, nil, nil, taints.TaintConfig{}, time.Time{})
	require.Nil(t, err)
	assert.Equal(t, "us-east-1b", infos["multi-az-b"].Node().Labels[ebsKey])
	assert.Equal(t, "use1-az3", infos["declares"].Node().Labels[ebsKey])
}

func TestCheckCSIZoneKeys(t *testing.T) {
	cases := []struct {
		name    string
		keys    []string
		wantErr []string
	}{
		{name: "one driver", keys: []string{ebsKey}},
		{name: "several drivers", keys: []string{ebsKey, gkeKey, "topology.disk.csi.azure.com/zone"}},
		{name: "an empty key", keys: []string{ebsKey, ""}, wantErr: []string{"an empty key"}},
		{name: "the zone label itself", keys: []string{apiv1.LabelTopologyZone}, wantErr: []string{`"topology.kubernetes.io/zone" is the zone label`}},
		{name: "a key twice", keys: []string{ebsKey, gkeKey, ebsKey}, wantErr: []string{`"topology.ebs.csi.aws.com/zone" is listed twice`}},
		{name: "not a label key", keys: []string{"zone key"}, wantErr: []string{`"zone key" is not a valid label key`}},
		{
			name:    "with CA's node-template prefix",
			keys:    []string{TemplateLabelPrefix + ebsKey},
			wantErr: []string{`"` + TemplateLabelPrefix + ebsKey + `" is not a valid label key`},
		},
		{
			name:    "every problem named",
			keys:    []string{"", "-bad", apiv1.LabelTopologyZone},
			wantErr: []string{"an empty key", `"-bad" is not a valid label key`, `"topology.kubernetes.io/zone" is the zone label`},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckCSIZoneKeys(c.keys)
			if len(c.wantErr) == 0 {
				require.NoError(t, err)
				return
			}
			require.Error(t, err)
			for _, w := range c.wantErr {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}
