package sim

import (
	"time"

	"k8s.io/autoscaler/cluster-autoscaler/config"
	"k8s.io/autoscaler/cluster-autoscaler/estimator"
	"k8s.io/autoscaler/cluster-autoscaler/utils/units"

	"github.com/spreadscale/spreadscale/plan"
)

// estimatorName is --estimator: topology-spread in spreadscale mode,
// binpacking in stock mode.
func estimatorName(cfg Config) string {
	if cfg.Spreadscale {
		return plan.Name
	}
	return estimator.BinpackingEstimatorName
}

// autoscalingOptions are CA 1.33.0's flag defaults for everything the
// scale-up path reads, with the scenario's --max-nodes-total, the expander
// chain, the estimator, --expendable-pods-priority-cutoff,
// --balance-similar-node-groups,
// --max-node-provision-time and --parallel-scale-up, and the scale-down
// options (scaleDownOptions). cfg has its defaults filled in.
func autoscalingOptions(s Scenario, cfg Config) config.AutoscalingOptions {
	o := config.AutoscalingOptions{
		NodeGroupDefaults: config.NodeGroupAutoscalingOptions{
			ScaleDownUtilizationThreshold:    *cfg.ScaleDownUtilizationThreshold,
			ScaleDownGpuUtilizationThreshold: 0.5,
			ScaleDownUnneededTime:            *cfg.ScaleDownUnneededTime,
			ScaleDownUnreadyTime:             20 * time.Minute,
			MaxNodeProvisionTime:             cfg.MaxNodeProvisionTime,
		},
		CloudProviderName:               "test",
		MaxTotalUnreadyPercentage:       45,
		OkTotalUnreadyCount:             3,
		ScaleUpFromZero:                 true,
		EstimatorName:                   estimatorName(cfg),
		ExpanderNames:                   cfg.Expander,
		MaxNodesTotal:                   s.MaxNodesTotal,
		MaxCoresTotal:                   config.DefaultMaxClusterCores,
		MaxMemoryTotal:                  config.DefaultMaxClusterMemory * units.GiB,
		BalanceSimilarNodeGroups:        cfg.BalanceSimilarNodeGroups,
		ConfigNamespace:                 "kube-system",
		StatusConfigMapName:             "cluster-autoscaler-status",
		ExpendablePodsPriorityCutoff:    *cfg.ExpendablePodsPriorityCutoff,
		InitialNodeGroupBackoffDuration: initialNodeGroupBackoff,
		MaxNodeGroupBackoffDuration:     maxNodeGroupBackoff,
		NodeGroupBackoffResetTimeout:    nodeGroupBackoffReset,
		ParallelScaleUp:                 cfg.ParallelScaleUp,
		StartupTaints:                   startupTaints(cfg),
		SchedulerConfig:                 cfg.SchedulerConfig,
		MaxNodesPerScaleUp:              1000,
		MaxNodeGroupBinpackingDuration:  10 * time.Second,
		MaxBinpackingTime:               5 * time.Minute,
		NodeInfoCacheExpireTime:         87600 * time.Hour,
		NodeGroupSetRatios: config.NodeGroupDifferenceRatios{
			MaxCapacityMemoryDifferenceRatio: config.DefaultMaxCapacityMemoryDifferenceRatio,
			MaxAllocatableDifferenceRatio:    config.DefaultMaxAllocatableDifferenceRatio,
			MaxFreeDifferenceRatio:           config.DefaultMaxFreeDifferenceRatio,
		},
	}
	scaleDownOptions(&o, cfg)
	return o
}
