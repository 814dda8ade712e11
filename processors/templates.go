package processors

import (
	"fmt"
	"sort"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodeinfosprovider"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
)

// TemplateLabelPrefix is the key prefix CA's cloud providers read node
// template labels from (ASG tags, MachineSet annotations); a declared domain
// may be written with it.
const TemplateLabelPrefix = "k8s.io/cluster-autoscaler/node-template/label/"

// CheckEachDomainLabelOnce refuses declared labels that set one label
// twice: once plainly and once with TemplateLabelPrefix (e.g. both
// "topology.kubernetes.io/zone" and
// "k8s.io/cluster-autoscaler/node-template/label/topology.kubernetes.io/zone").
// NormalizeDomainLabels would keep only one of the two values, picked by Go
// map order, so which zone a group gets would change from start to start.
// The error names every such label, sorted.
func CheckEachDomainLabelOnce(labels map[string]string) error {
	var twice []string
	for key := range labels {
		plain, prefixed := strings.CutPrefix(key, TemplateLabelPrefix)
		if _, alsoPlain := labels[plain]; prefixed && alsoPlain && !strings.HasPrefix(plain, TemplateLabelPrefix) {
			twice = append(twice, fmt.Sprintf("label %q is set twice, as %q and as %q", plain, plain, key))
		}
	}
	if len(twice) == 0 {
		return nil
	}
	sort.Strings(twice)
	return fmt.Errorf("%s; keep one of each", strings.Join(twice, ", "))
}

// NormalizeDomainLabels strips TemplateLabelPrefix from declared label keys.
// Callers refuse labels set twice first (CheckEachDomainLabelOnce).
func NormalizeDomainLabels(labels map[string]string) map[string]string {
	out := make(map[string]string, len(labels))
	for k, v := range labels {
		out[strings.TrimPrefix(k, TemplateLabelPrefix)] = v
	}
	return out
}

var _ nodeinfosprovider.TemplateNodeInfoProvider = &DeclaredDomains{}

// DeclaredDomains is a TemplateNodeInfoProvider that runs the wrapped one
// and overlays the declared labels on the templates of the declared groups.
// CA takes every template of the loop from this provider — the upcoming
// nodes it adds to its snapshot, its per-group predicate checks, the
// estimation, the expanders and the balancing, and spreadscale's plan — so
// a declared zone is the zone every part of CA sees.
type DeclaredDomains struct {
	Inner nodeinfosprovider.TemplateNodeInfoProvider
	// Labels are the declared labels by node group id (keys already
	// normalized with NormalizeDomainLabels).
	Labels map[string]map[string]string
}

// Process implements nodeinfosprovider.TemplateNodeInfoProvider.
func (d *DeclaredDomains) Process(ctx *context.AutoscalingContext, nodes []*apiv1.Node, daemonsets []*appsv1.DaemonSet, taintConfig taints.TaintConfig, now time.Time) (map[string]*framework.NodeInfo, errors.AutoscalerError) {
	infos, err := d.Inner.Process(ctx, nodes, daemonsets, taintConfig, now)
	if err != nil || len(d.Labels) == 0 {
		return infos, err
	}
	return withDeclaredDomains(infos, d.Labels), nil
}

// CleanUp implements nodeinfosprovider.TemplateNodeInfoProvider.
func (d *DeclaredDomains) CleanUp() { d.Inner.CleanUp() }

// withDeclaredDomains returns nodeInfos with each declared group's template
// replaced by a copy whose node carries the declared labels; the wrapped
// provider's own (cached) templates are never modified.
func withDeclaredDomains(nodeInfos map[string]*framework.NodeInfo, declared map[string]map[string]string) map[string]*framework.NodeInfo {
	out := make(map[string]*framework.NodeInfo, len(nodeInfos))
	for id, ni := range nodeInfos {
		labels, ok := declared[id]
		if !ok || ni == nil || ni.Node() == nil {
			out[id] = ni
			continue
		}
		cp := ni.DeepCopy()
		node := cp.Node()
		if node.Labels == nil {
			node.Labels = map[string]string{}
		}
		for k, v := range labels {
			node.Labels[k] = v
		}
		out[id] = cp
	}
	return out
}
