package plugin

import (
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
)

// addsNodeAffinity reports whether a profile of CA's scheduler
// configuration gives the NodeAffinity plugin an AddedAffinity, which every
// pod must then meet (plan.LoopInputs.AddedNodeAffinity). Arguments of
// another type are read as adding one: the plan then shares less, never
// wrongly. Nil (CA's default profile) adds none.
func addsNodeAffinity(cfg *schedconfig.KubeSchedulerConfiguration) bool {
	if cfg == nil {
		return false
	}
	for _, profile := range cfg.Profiles {
		for _, pc := range profile.PluginConfig {
			if pc.Name != names.NodeAffinity || pc.Args == nil {
				continue
			}
			args, ok := pc.Args.(*schedconfig.NodeAffinityArgs)
			if !ok || args.AddedAffinity != nil {
				return true
			}
		}
	}
	return false
}
