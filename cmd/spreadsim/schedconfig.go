package main

import (
	"flag"
	"fmt"

	schedulerutil "k8s.io/autoscaler/cluster-autoscaler/utils/scheduler"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
)

// schedulerFlags is --kube-scheduler-config: the user's kube-scheduler
// configuration, which the simulated kube-scheduler and cluster-autoscaler
// both run (sim.Config.SchedulerConfig).
type schedulerFlags struct {
	path   string
	config *schedconfig.KubeSchedulerConfiguration
}

func (s *schedulerFlags) define(fs *flag.FlagSet) {
	fs.StringVar(&s.path, "kube-scheduler-config", "",
		"KubeSchedulerConfiguration `file` (kube-scheduler's --config, cluster-autoscaler's --scheduler-config-file): the simulated kube-scheduler and both runs' cluster-autoscaler use its default-scheduler profile (plugins, weights, NodeResourcesFit's scoring strategy) and percentageOfNodesToScore")
}

// problems loads the file, decoded, defaulted and validated as
// cluster-autoscaler loads its --scheduler-config-file.
func (s *schedulerFlags) problems() []error {
	if s.path == "" {
		return nil
	}
	cfg, err := schedulerutil.ConfigFromPath(s.path)
	if err != nil {
		return []error{fmt.Errorf("--kube-scheduler-config %s: %v", s.path, err)}
	}
	s.config = cfg
	return nil
}
