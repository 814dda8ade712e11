package plan

import (
	"context"
	"fmt"
	"sync"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	schedconfig "k8s.io/kubernetes/pkg/scheduler/apis/config"
	schedconfiglatest "k8s.io/kubernetes/pkg/scheduler/apis/config/latest"
	schedframework "k8s.io/kubernetes/pkg/scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/feature"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/names"
	"k8s.io/kubernetes/pkg/scheduler/framework/plugins/noderesources"
)

// nodeScorer scores a node for a pod as kube-scheduler's default profile
// does where the nodes differ for a pod of a rehearsal: the real
// NodeResourcesFit (LeastAllocated) and NodeResourcesBalancedAllocation
// Score plugins, with the profile's arguments, each times its weight. The
// profile's other score plugins give every node of a rehearsal the same
// score: a pod whose spreads are all DoNotSchedule is not scored by
// PodTopologySpread, and the rehearsed pods carry no preferred affinity
// (see rehearsable).
type nodeScorer struct {
	plugins []weighted
}

type weighted struct {
	plugin schedframework.ScorePlugin
	weight int64
}

var (
	defaultScorerOnce sync.Once
	defaultScorer     *nodeScorer
	defaultScorerErr  error
)

// scorer returns the default profile's nodeScorer, built once.
func scorer() (*nodeScorer, error) {
	defaultScorerOnce.Do(func() {
		defaultScorer, defaultScorerErr = newNodeScorer()
	})
	return defaultScorer, defaultScorerErr
}

// newNodeScorer builds the scorer from kube-scheduler's defaulted
// configuration (its default-scheduler profile).
func newNodeScorer() (*nodeScorer, error) {
	cfg, err := schedconfiglatest.Default()
	if err != nil {
		return nil, fmt.Errorf("plan: default scheduler configuration: %w", err)
	}
	profile := cfg.Profiles[0]
	args := map[string]runtime.Object{}
	for _, pc := range profile.PluginConfig {
		args[pc.Name] = pc.Args
	}
	builders := map[string]func(context.Context, runtime.Object, schedframework.Handle, feature.Features) (schedframework.Plugin, error){
		names.NodeResourcesFit:                noderesources.NewFit,
		names.NodeResourcesBalancedAllocation: noderesources.NewBalancedAllocation,
	}
	s := &nodeScorer{}
	for _, name := range []string{names.NodeResourcesFit, names.NodeResourcesBalancedAllocation} {
		weight, ok := scoreWeight(profile.Plugins, name)
		if !ok {
			continue
		}
		pl, err := builders[name](context.Background(), args[name], nil, feature.Features{})
		if err != nil {
			return nil, fmt.Errorf("plan: scheduler plugin %s: %w", name, err)
		}
		s.plugins = append(s.plugins, weighted{plugin: pl.(schedframework.ScorePlugin), weight: weight})
	}
	return s, nil
}

// scoreWeight is the weight of the named score plugin in plugins (a
// profile's MultiPoint set, then its Score set, which overrides it), and
// whether the plugin scores at all.
func scoreWeight(plugins *schedconfig.Plugins, name string) (int64, bool) {
	weight, on := int64(0), false
	for _, set := range []schedconfig.PluginSet{plugins.MultiPoint, plugins.Score} {
		for _, p := range set.Disabled {
			if p.Name == name || p.Name == "*" {
				on = false
			}
		}
		for _, p := range set.Enabled {
			if p.Name == name {
				weight, on = int64(max(p.Weight, 1)), true
			}
		}
	}
	return weight, on
}

// score is node's weighted score for pod; state is the pod's cycle state
// after prescore.
func (s *nodeScorer) score(ctx context.Context, state *schedframework.CycleState, pod *apiv1.Pod, node *schedframework.NodeInfo) int64 {
	var total int64
	for _, w := range s.plugins {
		v, st := w.plugin.Score(ctx, state, pod, node)
		if st.IsSuccess() {
			total += v * w.weight
		}
	}
	return total
}

// prescore runs the plugins' PreScore for pod over nodes.
func (s *nodeScorer) prescore(ctx context.Context, pod *apiv1.Pod, nodes []*schedframework.NodeInfo) *schedframework.CycleState {
	state := schedframework.NewCycleState()
	for _, w := range s.plugins {
		if pre, ok := w.plugin.(schedframework.PreScorePlugin); ok {
			pre.PreScore(ctx, state, pod, nodes)
		}
	}
	return state
}
