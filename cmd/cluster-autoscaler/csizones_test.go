package main

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// TestCheckCSIZoneKeysFlag: drivers' keys pass; a refusal names the flag
// with the value given and the offending key.
func TestCheckCSIZoneKeysFlag(t *testing.T) {
	require.NoError(t, checkCSIZoneKeys(nil), "no keys")
	require.NoError(t, checkCSIZoneKeys([]string{"topology.ebs.csi.aws.com/zone", "topology.gke.io/zone"}), "two drivers' keys")
	err := checkCSIZoneKeys([]string{"topology.gke.io/zone", "gke zone"})
	require.Error(t, err)
	assert.ErrorContains(t, err, "--csi-zone-keys=topology.gke.io/zone,gke zone: ")
	assert.ErrorContains(t, err, `"gke zone" is not a valid label key`)
}
