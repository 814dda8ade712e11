package sim

import (
	"slices"
	"sync"

	apiv1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime/schema"
	testcloudprovider "k8s.io/autoscaler/cluster-autoscaler/cloudprovider/test"
)

// cloudInstances are the test cloud provider's instances, which the
// simulation alone adds and deletes, always through add and remove, so
// that they can be listed without asking every group for its nodes (the
// test provider's NodeGroup.Nodes walks every instance of the provider, so
// listing them that way costs groups times instances). Safe for concurrent
// use: CA deletes nodes from its own goroutines.
type cloudInstances struct {
	provider *testcloudprovider.TestCloudProvider
	mu       sync.Mutex
	names    map[string]bool
	// version counts the changes, so that a lister can keep its list.
	version int
}

func newCloudInstances(provider *testcloudprovider.TestCloudProvider) *cloudInstances {
	return &cloudInstances{provider: provider, names: map[string]bool{}}
}

// add adds node to group on the provider.
func (c *cloudInstances) add(group string, node *apiv1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.provider.AddNode(group, node)
	c.names[node.Name] = true
	c.version++
}

// remove deletes node from the provider.
func (c *cloudInstances) remove(node *apiv1.Node) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.provider.DeleteNode(node)
	delete(c.names, node.Name)
	c.version++
}

// namesAfter returns the instances' names, unsorted, and the version they
// are of, unless version is still seen (then ok is false).
func (c *cloudInstances) namesAfter(seen int) (names []string, version int, ok bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version == seen {
		return nil, seen, false
	}
	names = make([]string, 0, len(c.names))
	for n := range c.names {
		names = append(names, n)
	}
	return names, c.version, true
}

// clusterNodes is the node lister of the price expander's
// SimplePreferredNodeProvider, which sizes its preferred node by the
// number of nodes in the cluster and reads nothing else: it lists the
// scenario's nodes that no group manages and every instance of the cloud
// provider (existing and added so far), as nodes that carry only their
// names, sorted by name; the list is rebuilt only after the instances
// changed.
type clusterNodes struct {
	unmanaged []string
	instances *cloudInstances
	mu        sync.Mutex
	cached    []*apiv1.Node
	seen      int // the instances' version cached lists
}

// List returns the cluster's nodes, sorted by name. The slice is the
// caller's; the nodes are shared and must not be modified.
func (c *clusterNodes) List() ([]*apiv1.Node, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if names, version, changed := c.instances.namesAfter(c.seen); changed || c.cached == nil {
		names = append(names, c.unmanaged...)
		slices.Sort(names)
		c.cached = make([]*apiv1.Node, len(names))
		for i, n := range names {
			c.cached[i] = &apiv1.Node{ObjectMeta: metav1.ObjectMeta{Name: n}}
		}
		c.seen = version
	}
	return slices.Clone(c.cached), nil
}

// Get returns the named node, a NotFound error when the cluster has none.
func (c *clusterNodes) Get(name string) (*apiv1.Node, error) {
	nodes, err := c.List()
	if err != nil {
		return nil, err
	}
	for _, n := range nodes {
		if n.Name == name {
			return n, nil
		}
	}
	return nil, errors.NewNotFound(schema.GroupResource{Resource: "nodes"}, name)
}
