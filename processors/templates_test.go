package processors

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestCheckEachDomainLabelOnce(t *testing.T) {
	const zone = "topology.kubernetes.io/zone"
	cases := []struct {
		name    string
		labels  map[string]string
		wantErr []string
	}{
		{name: "plain keys", labels: map[string]string{zone: "a", "rack": "r1"}},
		{name: "prefixed keys", labels: map[string]string{TemplateLabelPrefix + zone: "a", TemplateLabelPrefix + "rack": "r1"}},
		{name: "one label of each form", labels: map[string]string{TemplateLabelPrefix + zone: "a", "rack": "r1"}},
		{
			name:    "zone with and without the prefix",
			labels:  map[string]string{zone: "a", TemplateLabelPrefix + zone: "b"},
			wantErr: []string{`label "topology.kubernetes.io/zone" is set twice`, `"` + TemplateLabelPrefix + zone + `"`},
		},
		{
			name:    "same value both ways",
			labels:  map[string]string{zone: "a", TemplateLabelPrefix + zone: "a"},
			wantErr: []string{`label "topology.kubernetes.io/zone" is set twice`},
		},
		{
			name:    "two labels both ways",
			labels:  map[string]string{zone: "a", TemplateLabelPrefix + zone: "b", "rack": "r1", TemplateLabelPrefix + "rack": "r2"},
			wantErr: []string{`label "rack" is set twice`, `label "topology.kubernetes.io/zone" is set twice`},
		},
		{
			// Normalizing strips the prefix once: these two stay distinct.
			name:   "prefix doubled",
			labels: map[string]string{TemplateLabelPrefix + zone: "a", TemplateLabelPrefix + TemplateLabelPrefix + zone: "b"},
		},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := CheckEachDomainLabelOnce(c.labels)
			if len(c.wantErr) == 0 {
				require.NoError(t, err)
				assert.Len(t, NormalizeDomainLabels(c.labels), len(c.labels), "accepted labels must keep every key after normalizing")
				return
			}
			require.Error(t, err)
			for _, w := range c.wantErr {
				assert.ErrorContains(t, err, w)
			}
		})
	}
}
