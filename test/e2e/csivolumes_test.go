//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// ebsZoneKey is the topology key of the AWS EBS CSI driver: its node plugin
// labels each node with it, and the PVs it provisions require it.
const ebsZoneKey = "topology.ebs.csi.aws.com/zone"

// csiFix is what CA is given to see the CSI key its templates lack.
type csiFix int

const (
	// noCSIFix: nothing (stock CA as users run it).
	noCSIFix csiFix = iota
	// csiZoneKeysFix: --csi-zone-keys names the driver's key.
	csiZoneKeysFix
	// declaredCSIFix: a declared-domains file sets the key on every group.
	declaredCSIFix
)

// csiVolumes is kubernetes/autoscaler#6000 as users hit it: the StatefulSet
// of runZonalVolumes, with PVs whose node affinity requires the EBS CSI
// driver's key (ebsZoneKey) rather than the zone label. Every node carries
// that key once the driver's node plugin has registered (the initial nodes
// from the start, new nodes from the registrar), but the groups' templates
// have only the zone label: zone-c's group, at 0, offers a template on which
// CA's VolumeBinding check finds no matching NodeSelectorTerms for db-2's
// volume. With fix the autoscaler is told about the key and must scale
// zone-c up in one loop (asserted when check is set); without, the outcome
// is reported.
func csiVolumes(t *testing.T, id string, a autoscaler, fix csiFix, check bool) {
	switch fix {
	case csiZoneKeysFix:
		a.Name += " --csi-zone-keys"
	case declaredCSIFix:
		a.Name += " declared domains"
	}
	groups := make([]nodeGroup, len(threeZones))
	copy(groups, threeZones)
	for i := range groups {
		groups[i].CSIZoneKey = ebsZoneKey
	}
	s := newScenario(t, id, "StatefulSet with PVs pinned by "+ebsZoneKey+", zone-c at 0 (#6000)", a, groups)
	switch fix {
	case csiZoneKeysFix:
		s.caArgs = append(s.caArgs, "--csi-zone-keys="+ebsZoneKey)
	case declaredCSIFix:
		s.declareDomains(func(g nodeGroup) map[string]string { return map[string]string{ebsZoneKey: g.Zone} })
	}
	s.runZonalVolumes(ebsZoneKey, check)
	if !check {
		return
	}
	// The scheduler put db-2 on the new node only once the registrar had
	// labelled it as the CSI node plugin would.
	nodes, err := env.client.CoreV1().Nodes().List(context.Background(), metav1.ListOptions{
		LabelSelector: groupLabel + "=" + s.groupID("zone-c")})
	require.NoError(t, err, "listing zone-c's nodes")
	for _, n := range nodes.Items {
		assert.Equal(t, "zone-c", n.Labels[ebsZoneKey], "node %s: label %s", n.Name, ebsZoneKey)
	}
}

// declareDomains writes a declared-domains file giving each group the
// labels of labelsOf, and passes it to CA (mounted in its container).
func (s *scenario) declareDomains(labelsOf func(nodeGroup) map[string]string) {
	s.t.Helper()
	var b strings.Builder
	for _, g := range s.groups {
		fmt.Fprintf(&b, "%s:\n", s.groupID(g.name()))
		for k, v := range labelsOf(g) {
			fmt.Fprintf(&b, "  %s: %s\n", k, v)
		}
	}
	dir, err := filepath.Abs(env.artifacts)
	require.NoError(s.t, err)
	path := filepath.Join(dir, "declared-domains-"+s.id+".yaml")
	require.NoError(s.t, os.WriteFile(path, []byte(b.String()), 0o644), "writing %s", path)
	s.caArgs = append(s.caArgs, "--topology-spread-declared-domains="+path)
	s.caFiles = append(s.caFiles, path)
}
