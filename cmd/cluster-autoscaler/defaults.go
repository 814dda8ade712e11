package main

import (
	corev1 "k8s.io/api/core/v1"
	"k8s.io/client-go/informers"
	schedulerconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"

	"github.com/spreadscale/spreadscale/topology"
)

// schedulerDefaults returns the cluster-level default topology spread
// constraints of CA's scheduler configuration (--scheduler-config-file) for
// the planner, reading a pod's Services and controller live from
// informerFactory's listers as kube-scheduler's PodTopologySpread plugin
// does; nil when the configuration sets none that filter.
//
// The rule mirrored: the plugin applies PodTopologySpreadArgs'
// defaultConstraints (defaultingType: List) to a pod without constraints of
// its own; defaultingType System (the default, also when there is no file)
// gives only ScheduleAnyway constraints, which never filter. CA's
// framework handle takes exactly one profile (framework.NewHandle refuses
// more), so that profile's arguments are the cluster's. CA's own
// simulation runs the plugin with the same arguments.
func schedulerDefaults(cfg *schedulerconfig.KubeSchedulerConfiguration, informerFactory informers.SharedInformerFactory) *topology.Defaults {
	constraints := listDefaultConstraints(cfg)
	if !anyDoNotSchedule(constraints) {
		return nil
	}
	return topology.NewDefaultsFromListers(constraints, topology.OwnerListers{
		Services:               informerFactory.Core().V1().Services().Lister(),
		ReplicationControllers: informerFactory.Core().V1().ReplicationControllers().Lister(),
		ReplicaSets:            informerFactory.Apps().V1().ReplicaSets().Lister(),
		StatefulSets:           informerFactory.Apps().V1().StatefulSets().Lister(),
	})
}

// listDefaultConstraints returns the defaultConstraints of the first
// profile's PodTopologySpread arguments when their defaultingType is List.
func listDefaultConstraints(cfg *schedulerconfig.KubeSchedulerConfiguration) []corev1.TopologySpreadConstraint {
	if cfg == nil || len(cfg.Profiles) == 0 {
		return nil
	}
	for _, pc := range cfg.Profiles[0].PluginConfig {
		if args, ok := pc.Args.(*schedulerconfig.PodTopologySpreadArgs); ok && args.DefaultingType == schedulerconfig.ListDefaulting {
			return args.DefaultConstraints
		}
	}
	return nil
}

func anyDoNotSchedule(constraints []corev1.TopologySpreadConstraint) bool {
	for _, c := range constraints {
		if c.WhenUnsatisfiable == corev1.DoNotSchedule {
			return true
		}
	}
	return false
}
