package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
)

func TestAddsNodeAffinity(t *testing.T) {
	profile := func(name string, args runtime.Object) *schedconfig.KubeSchedulerConfiguration {
		return &schedconfig.KubeSchedulerConfiguration{Profiles: []schedconfig.KubeSchedulerProfile{{
			SchedulerName: "default-scheduler",
			PluginConfig:  []schedconfig.PluginConfig{{Name: name, Args: args}},
		}}}
	}
	added := &apiv1.NodeAffinity{RequiredDuringSchedulingIgnoredDuringExecution: &apiv1.NodeSelector{
		NodeSelectorTerms: []apiv1.NodeSelectorTerm{{MatchExpressions: []apiv1.NodeSelectorRequirement{{
			Key: "pool", Operator: apiv1.NodeSelectorOpIn, Values: []string{"general"},
		}}}},
	}}
	for _, tc := range []struct {
		name string
		cfg  *schedconfig.KubeSchedulerConfiguration
		want bool
	}{
		{"CA's default profile", nil, false},
		{"NodeAffinity without an added affinity", profile(names.NodeAffinity, &schedconfig.NodeAffinityArgs{}), false},
		{"another plugin's arguments", profile(names.PodTopologySpread, &schedconfig.PodTopologySpreadArgs{}), false},
		{"an added affinity", profile(names.NodeAffinity, &schedconfig.NodeAffinityArgs{AddedAffinity: added}), true},
		{"NodeAffinity arguments of an unknown type", profile(names.NodeAffinity, &runtime.Unknown{}), true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			assert.Equal(t, tc.want, addsNodeAffinity(tc.cfg))
		})
	}
}
