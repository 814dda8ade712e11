package sim

import (
	"context"
	"fmt"

	apiv1 "k8s.io/api/core/v1"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedconfiglatest "k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/parallelize"
	schedplugins "k8s.io/kubernetes/pkg/scheduler/framework/plugins"
	frameworkruntime "k8s.io/kubernetes/pkg/scheduler/framework/runtime"
)

// newDefaultFramework builds a kube-scheduler framework with the
// default-scheduler profile of cfg (the user's kube-scheduler
// configuration), or of the scheduler's own defaulted configuration
// (config/latest: the v1 scheme defaults converted to the internal type)
// when cfg is nil, and the in-tree plugin registry, serving nodes from
// lister. Its client and informers are vols' fake API server, which holds
// the Scenario's storage objects (no Services or other objects the plugins
// read exist in a simulation); the runner starts the informers once both
// frameworks are built. With pre, its PostFilter runs the
// DefaultPreemption plugin over pre (see preemption); CA's framework, which
// never runs PostFilter, has none. The framework's background goroutines
// stop when ctx is done. extra are further framework options.
func newDefaultFramework(ctx context.Context, lister schedframework.SharedLister, vols *volumes, pre *preemption, cfg *schedconfig.KubeSchedulerConfiguration,
	extra ...frameworkruntime.Option) (schedframework.Framework, error) {
	if err := initSchedulerMetrics(); err != nil {
		return nil, fmt.Errorf("sim: scheduler metrics: %w", err)
	}
	profile, err := defaultProfile(cfg)
	if err != nil {
		return nil, err
	}
	registry := schedplugins.NewInTreeRegistry()
	opts := []frameworkruntime.Option{
		frameworkruntime.WithClientSet(vols.client),
		frameworkruntime.WithInformerFactory(vols.factory),
		frameworkruntime.WithSnapshotSharedLister(lister),
	}
	if pre != nil {
		pre.register(registry)
		opts = append(opts, pre.frameworkOptions()...)
	}
	opts = append(opts, extra...)
	fwk, err := frameworkruntime.NewFramework(ctx, registry, profile, opts...)
	if err != nil {
		return nil, fmt.Errorf("sim: build scheduler framework: %w", err)
	}
	return fwk, nil
}

// schedulerConfig is cfg, or kube-scheduler's defaulted configuration when
// cfg is nil.
func schedulerConfig(cfg *schedconfig.KubeSchedulerConfiguration) (*schedconfig.KubeSchedulerConfiguration, error) {
	if cfg != nil {
		return cfg, nil
	}
	def, err := schedconfiglatest.Default()
	if err != nil {
		return nil, fmt.Errorf("sim: default scheduler configuration: %w", err)
	}
	return def, nil
}

// defaultProfile is the profile of cfg (schedulerConfig) that schedules the
// pods: the one named default-scheduler, the schedulerName of every pod
// that names none.
func defaultProfile(cfg *schedconfig.KubeSchedulerConfiguration) (*schedconfig.KubeSchedulerProfile, error) {
	cfg, err := schedulerConfig(cfg)
	if err != nil {
		return nil, err
	}
	for i := range cfg.Profiles {
		if cfg.Profiles[i].SchedulerName == apiv1.DefaultSchedulerName {
			return &cfg.Profiles[i], nil
		}
	}
	return nil, fmt.Errorf("sim: the scheduler configuration has no profile named %q", apiv1.DefaultSchedulerName)
}

// schedulerParallelism is kube-scheduler's parallelism under cfg
// (schedulerConfig): its parallelism, or parallelize.DefaultParallelism (16)
// where that is unset (0; kube-scheduler's defaulting sets it, and its
// validation refuses a parallelism below 1).
func schedulerParallelism(cfg *schedconfig.KubeSchedulerConfiguration) (int, error) {
	cfg, err := schedulerConfig(cfg)
	if err != nil {
		return 0, err
	}
	if cfg.Parallelism < 1 {
		return parallelize.DefaultParallelism, nil
	}
	return int(cfg.Parallelism), nil
}

// defaultNodeSearch is the search of feasible nodes of kube-scheduler for
// fwk under cfg (schedulerConfig): the profile's percentageOfNodesToScore,
// or else the configuration's (both unset by default: 0, adaptive), and
// the configuration's parallelism (schedulerParallelism).
func defaultNodeSearch(fwk schedframework.Framework, cfg *schedconfig.KubeSchedulerConfiguration) (nodeSearch, error) {
	parallelism, err := schedulerParallelism(cfg)
	if err != nil {
		return nodeSearch{}, err
	}
	cfg, err = schedulerConfig(cfg)
	if err != nil {
		return nodeSearch{}, err
	}
	search := nodeSearch{scoring: fwk.HasScorePlugins(), parallelism: parallelism}
	switch {
	case fwk.PercentageOfNodesToScore() != nil:
		search.percentage = *fwk.PercentageOfNodesToScore()
	case cfg.PercentageOfNodesToScore != nil:
		search.percentage = *cfg.PercentageOfNodesToScore
	}
	return search, nil
}
