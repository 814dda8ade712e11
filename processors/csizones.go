package processors

import (
	"fmt"
	"strings"
	"time"

	appsv1 "k8s.io/api/apps/v1"
	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/autoscaler/cluster-autoscaler/context"
	"k8s.io/autoscaler/cluster-autoscaler/processors/nodeinfosprovider"
	"k8s.io/autoscaler/cluster-autoscaler/simulator/framework"
	"k8s.io/autoscaler/cluster-autoscaler/utils/errors"
	"k8s.io/autoscaler/cluster-autoscaler/utils/taints"
)

// CheckCSIZoneKeys refuses CSI zone keys that CSIZoneKeys could not set as
// node labels: an empty key, a key that is not a valid label key (CA's
// node-template prefix included: the key is the label itself), the zone
// label itself, and a key listed twice. Every problem is named, in the
// order of keys.
func CheckCSIZoneKeys(keys []string) error {
	var problems []string
	seen := map[string]bool{}
	for _, key := range keys {
		switch {
		case key == "":
			problems = append(problems, "an empty key")
		case key == apiv1.LabelTopologyZone:
			problems = append(problems, fmt.Sprintf("%q is the zone label the keys are derived from; list the CSI drivers' own topology keys (e.g. topology.ebs.csi.aws.com/zone)", key))
		case seen[key]:
			problems = append(problems, fmt.Sprintf("%q is listed twice", key))
		default:
			if errs := validation.IsQualifiedName(key); len(errs) > 0 {
				problems = append(problems, fmt.Sprintf("%q is not a valid label key: %s", key, strings.Join(errs, "; ")))
			}
		}
		seen[key] = true
	}
	if len(problems) == 0 {
		return nil
	}
	return fmt.Errorf("%s", strings.Join(problems, ", "))
}

var _ nodeinfosprovider.TemplateNodeInfoProvider = &CSIZoneKeys{}

// CSIZoneKeys is a TemplateNodeInfoProvider that runs the wrapped one and
// gives every template node with a topology.kubernetes.io/zone label each
// of Keys that it lacks, with the zone's value: what the CSI node plugin of
// a driver whose topology key is one of Keys (topology.ebs.csi.aws.com/zone,
// topology.gke.io/zone, ...) puts on a real node once it registers. A
// PersistentVolume whose node affinity requires such a key then fits the
// template of its zone's group, even when the group is at 0 and its
// template comes from the cloud provider without the key
// (kubernetes/autoscaler#6000). A key the template already has (from a real
// node, the provider, or a declared domain) is kept as it is, and a template
// without a zone label is left alone.
type CSIZoneKeys struct {
	Inner nodeinfosprovider.TemplateNodeInfoProvider
	// Keys are the CSI drivers' topology keys (checked with
	// CheckCSIZoneKeys).
	Keys []string
}

// Process implements nodeinfosprovider.TemplateNodeInfoProvider.
func (c *CSIZoneKeys) Process(ctx *context.AutoscalingContext, nodes []*apiv1.Node, daemonsets []*appsv1.DaemonSet, taintConfig taints.TaintConfig, now time.Time) (map[string]*framework.NodeInfo, errors.AutoscalerError) {
	infos, err := c.Inner.Process(ctx, nodes, daemonsets, taintConfig, now)
	if err != nil || len(c.Keys) == 0 {
		return infos, err
	}
	return withCSIZoneKeys(infos, c.Keys), nil
}

// CleanUp implements nodeinfosprovider.TemplateNodeInfoProvider.
func (c *CSIZoneKeys) CleanUp() { c.Inner.CleanUp() }

// withCSIZoneKeys returns nodeInfos with each template that has a zone but
// lacks one of keys replaced by a copy that carries the missing keys; the
// wrapped provider's own (cached) templates are never modified.
func withCSIZoneKeys(nodeInfos map[string]*framework.NodeInfo, keys []string) map[string]*framework.NodeInfo {
	out := make(map[string]*framework.NodeInfo, len(nodeInfos))
	for id, ni := range nodeInfos {
		out[id] = ni
		if ni == nil || ni.Node() == nil {
			continue
		}
		zone, ok := ni.Node().Labels[apiv1.LabelTopologyZone]
		if !ok || zone == "" {
			continue
		}
		var missing []string
		for _, key := range keys {
			if _, has := ni.Node().Labels[key]; !has {
				missing = append(missing, key)
			}
		}
		if len(missing) == 0 {
			continue
		}
		cp := ni.DeepCopy()
		for _, key := range missing {
			cp.Node().Labels[key] = zone
		}
		out[id] = cp
	}
	return out
}
