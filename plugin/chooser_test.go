package plugin

import (
	"testing"

	"github.com/stretchr/testify/assert"
)

// What the chain after topology-spread reads decides what the plan shares
// between options: grpc reads everything, priority reads group names,
// price reads prices.
func TestChooserTraitsFollowTheExpanderChain(t *testing.T) {
	for _, tc := range []struct {
		chain []string
		want  chooserTraits
	}{
		{nil, chooserTraits{byTemplate: true}},
		{[]string{"least-waste"}, chooserTraits{byTemplate: true}},
		{[]string{"price", "least-waste"}, chooserTraits{byTemplate: true, readsPrice: true}},
		{[]string{"priority", "least-waste"}, chooserTraits{}},
		{[]string{"grpc"}, chooserTraits{readsPodIdentity: true}},
		{[]string{"most-pods", "random"}, chooserTraits{byTemplate: true}},
	} {
		assert.Equal(t, tc.want, traitsOf(tc.chain), "%v", tc.chain)
	}
}
